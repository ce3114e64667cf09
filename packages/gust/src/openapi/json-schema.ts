/**
 * JSON Schema from a route's validators, by the validator library's own converter, found at run time: no
 * validation library is a dependency of Gust, and none is guessed at. In order:
 *
 * 1. the app's `toJSONSchema` option, when it returns a schema (so an app can override the rest);
 * 2. the Standard JSON Schema interface (`schema['~standard'].jsonSchema.input/output({ target })`), which
 *    Zod ≥ 4.2, ArkType 2.2 and Valibot's `toStandardJsonSchema()` (@valibot/to-json-schema) implement;
 * 3. a converter method of the schema itself: Zod 4's `toJSONSchema()`, ArkType's `toJsonSchema()`.
 *
 * A schema none of them converts, or whose converter throws (Zod on `z.date()`, Valibot on `v.date()`), is
 * a problem reported to the caller with a way to fix it, never replaced by a schema that would accept anything.
 * The converter's own rules still apply: ArkType's Standard JSON Schema converter, by design, keeps the part
 * of a type JSON Schema can express (a `Date` becomes `{}`), and that is what the document shows.
 * @module
 */
import type { StandardSchemaV1 } from '../validation.js'
import type { JSONSchema, SchemaPlace, ToJSONSchema } from './types.js'

/** OpenAPI 3.1's schema dialect is draft 2020-12 (plus a few keywords of its own). */
const TARGET = 'draft-2020-12'

type MaybeConvertible = StandardSchemaV1 & {
  '~standard': { jsonSchema?: { input?: (o: object) => unknown; output?: (o: object) => unknown } }
  toJSONSchema?: (o?: object) => unknown
  toJsonSchema?: (o?: object) => unknown
}

/** What to tell a developer whose `vendor` schema has no converter. */
function hint(vendor: string): string {
  switch (vendor) {
    case 'valibot':
      return 'wrap the schema in toStandardJsonSchema(…) from @valibot/to-json-schema (it still validates)'
    case 'zod':
      return 'use Zod ≥ 4.2, whose schemas convert themselves, or convert Zod 3 schemas in the toJSONSchema option (zod-to-json-schema)'
    case 'arktype':
      return 'use a recent ArkType (2.2), whose types convert themselves'
    default:
      return `convert ${vendor} schemas in the toJSONSchema option of openapi()`
  }
}

const isObject = (value: unknown): value is JSONSchema => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The JSON Schema of `schema` at `place`, or a problem (a sentence) when it has none. `$schema` is dropped:
 * the document's dialect applies to every schema in it.
 */
export function toJSONSchema(schema: StandardSchemaV1, place: SchemaPlace, custom: ToJSONSchema | undefined): JSONSchema | string {
  const s = schema as MaybeConvertible
  let result: unknown
  try {
    result = custom?.(schema, place)
    if (result === undefined) {
      const standard = s['~standard'].jsonSchema?.[place.io]
      if (typeof standard === 'function') result = standard({ target: TARGET })
      else if (place.vendor === 'zod' && typeof s.toJSONSchema === 'function') result = s.toJSONSchema({ io: place.io, target: TARGET })
      else if (typeof s.toJsonSchema === 'function') result = s.toJsonSchema()
      else return `no JSON Schema converter found: ${hint(place.vendor)}`
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    return `its converter failed: ${reason.replace(/\s+/g, ' ').trim()}`
  }
  if (!isObject(result)) return `its converter returned ${result === null ? 'null' : typeof result}, not a JSON Schema object`
  const { $schema: _, ...rest } = result
  return rest
}
