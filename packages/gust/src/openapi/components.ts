/**
 * `components.schemas`: where converted schemas that refer to themselves or to definitions go.
 *
 * A converter writes references relative to the schema it returns (`{ $ref: '#' }` for recursion,
 * `{ $ref: '#/$defs/User' }` for a named part). Placed inside the document as they are, those would point into
 * the document's root instead. So each definition becomes a component (under its own name when that is free or
 * holds the same schema), a schema that refers to itself becomes one too, and every local reference is
 * rewritten to the component it meant.
 * @module
 */
import type { JSONSchema } from './types.js'

/** Component names OpenAPI allows. */
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_') || 'Schema'

/** A reference to a definition the converter wrote (`#/$defs/User`, draft 7's `#/definitions/User`). */
const DEF = /^#\/(?:\$defs|definitions)\/([^/]+)(.*)$/

export class SchemaComponents {
  readonly schemas: Record<string, JSONSchema> = {}
  /** Definitions already placed, by name and text: one schema shared by several routes is one component. */
  #placed = new Map<string, string>()

  /** `name`, or `name_2` … : the first component name not taken. */
  #free(name: string): string {
    const base = sanitize(name)
    let candidate = base
    for (let n = 2; candidate in this.schemas; n++) candidate = `${base}_${n}`
    return candidate
  }

  /** Adds `schema` under `name` (or `name_2` … when taken by another schema); returns the name used. */
  add(name: string, schema: JSONSchema): string {
    const key = `${name}\0${JSON.stringify(schema)}`
    let target = this.#placed.get(key)
    if (target === undefined) {
      target = this.#free(name)
      this.schemas[target] = schema
      this.#placed.set(key, target)
    }
    return target
  }

  /**
   * Places a converted schema: returns what to use where it was needed (a `$ref` when it refers to itself,
   * named after `name`) and its root with references rewritten (for splitting into parameters).
   */
  place(name: string, converted: JSONSchema): { use: JSONSchema; root: JSONSchema } {
    const { $defs, definitions, ...root } = converted
    if (collectRefs(converted).length === 0) return { use: root, root }
    const defs = { ...(isObject(definitions) ? definitions : {}), ...(isObject($defs) ? $defs : {}) }
    // Names first (definitions may refer to each other and to the root), then the rewritten schemas.
    const renamed = new Map<string, string>()
    const pending: [string, JSONSchema][] = []
    for (const [def, schema] of Object.entries(defs)) {
      if (!isObject(schema)) continue
      // Shared only when it stands alone: one that refers to this root means this root.
      const key = `${def}\0${JSON.stringify(schema)}`
      const standalone = collectRefs(schema).every((r) => DEF.test(r))
      let target = standalone ? this.#placed.get(key) : undefined
      if (target === undefined) {
        target = this.#free(def)
        this.schemas[target] = {}
        if (standalone) this.#placed.set(key, target)
        pending.push([target, schema])
      }
      renamed.set(def, `#/components/schemas/${target}`)
    }
    const selfReferring = collectRefs(converted).some((r) => r.startsWith('#') && !DEF.test(r))
    const rootName = selfReferring ? this.#free(name) : undefined
    if (rootName !== undefined) this.schemas[rootName] = {}
    const rewrite = (ref: string): string => {
      const def = DEF.exec(ref)
      const target = def === null ? undefined : renamed.get(decode(def[1]!))
      if (target !== undefined) return target + def![2]!
      return ref.startsWith('#') && rootName !== undefined ? `#/components/schemas/${rootName}${ref.slice(1)}` : ref
    }
    for (const [target, schema] of pending) this.schemas[target] = rewriteRefs(schema, rewrite) as JSONSchema
    const rewritten = rewriteRefs(root, rewrite) as JSONSchema
    if (rootName === undefined) return { use: rewritten, root: rewritten }
    this.schemas[rootName] = rewritten
    return { use: { $ref: `#/components/schemas/${rootName}` }, root: rewritten }
  }
}

const isObject = (value: unknown): value is JSONSchema => typeof value === 'object' && value !== null && !Array.isArray(value)
const decode = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~')

/** Every `$ref` string in a schema. */
function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, out)
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v)
      else collectRefs(v, out)
    }
  }
  return out
}

/** A copy of `value` with every `$ref` passed through `map`. */
function rewriteRefs(value: unknown, map: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, map))
  if (!isObject(value)) return value
  const out: JSONSchema = {}
  for (const [k, v] of Object.entries(value)) out[k] = k === '$ref' && typeof v === 'string' ? map(v) : rewriteRefs(v, map)
  return out
}
