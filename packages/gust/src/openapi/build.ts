/**
 * What building one document carries from route to route: the components collected so far, the problems found
 * (reported together at the end), and the schema conversion.
 * @module
 */
import type { StandardSchemaV1 } from '../validation.js'
import { SchemaComponents } from './components.js'
import { toJSONSchema } from './json-schema.js'
import type { JSONSchema, SchemaPlace, ToJSONSchema } from './types.js'

export class Build {
  readonly components = new SchemaComponents()
  /** Sentences naming the route, the part and the fix, one per schema that could not be described. */
  readonly problems: string[] = []
  /** Whether some operation refers to the shared 400 validation-error response. */
  usesValidationError = false

  constructor(readonly custom: ToJSONSchema | undefined) {}

  /**
   * The JSON Schema of `schema` at `place`, placed among the components when it refers to itself or to
   * definitions (`name` names it there); `undefined`, with a problem recorded, when it cannot be converted.
   */
  schema(schema: StandardSchemaV1, place: Omit<SchemaPlace, 'vendor'>, name: string): { use: JSONSchema; root: JSONSchema } | undefined {
    const vendor = String(schema['~standard'].vendor)
    const converted = toJSONSchema(schema, { ...place, vendor }, this.custom)
    if (typeof converted === 'string') {
      this.problem(place.route, `${where(place.target)} (${vendor}): ${converted}`)
      return undefined
    }
    return this.components.place(name, converted)
  }

  problem(route: string, text: string): void {
    this.problems.push(`${route}, ${text}`)
  }
}

/** `validate.json`, or `responses.200`, as the developer wrote it. */
export function where(target: SchemaPlace['target']): string {
  return target.startsWith('response ') ? `openapi.responses.${target.slice('response '.length)}` : `validate.${target}`
}
