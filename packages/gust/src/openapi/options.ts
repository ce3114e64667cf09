/**
 * Checks the options of `openapi()`: a bad one is an error naming it, not a document a validator rejects later.
 * @module
 */
import { isSecurity } from '../route-openapi.js'
import type { OpenAPIOptions } from './types.js'

const KEYS = ['info', 'servers', 'tags', 'securitySchemes', 'security', 'externalDocs', 'toJSONSchema', 'include']

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isArrayOf = (value: unknown, item: (v: unknown) => boolean) => Array.isArray(value) && value.every(item)

/** Throws naming the option when one is wrong; `caller` and its own `extra` keys are for `openapiDocs()`. */
export function checkOptions(options: unknown, caller = 'openapi()', extra: string[] = []): asserts options is OpenAPIOptions {
  if (!isObject(options)) throw new TypeError(`${caller} takes (app, options) with options { info: { title, version } }`)
  const fail = (field: string, want: string): never => {
    throw new TypeError(`${caller}: option "${field}" must be ${want}`)
  }
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) throw new Error(`${caller}: unknown option "${key}"; known options: ${[...KEYS, ...extra].join(', ')}`)
  }
  const { info, servers, tags, securitySchemes, security, externalDocs, toJSONSchema, include } = options
  if (!isObject(info) || typeof info.title !== 'string' || typeof info.version !== 'string') {
    fail('info', "an object with a title and a version (strings): { title: 'My API', version: '1.0.0' }")
  }
  if (servers !== undefined && !isArrayOf(servers, (s) => isObject(s) && typeof s.url === 'string')) fail('servers', 'an array of { url }')
  if (tags !== undefined && !isArrayOf(tags, (t) => isObject(t) && typeof t.name === 'string' && t.name !== '')) {
    fail('tags', 'an array of { name, description? }')
  }
  if (securitySchemes !== undefined && !(isObject(securitySchemes) && Object.values(securitySchemes).every((s) => isObject(s) && typeof s.type === 'string'))) {
    fail('securitySchemes', "an object of schemes such as { bearer: { type: 'http', scheme: 'bearer' } }")
  }
  if (security !== undefined && !isSecurity(security)) fail('security', 'an array of requirements such as [{ bearer: [] }]')
  if (externalDocs !== undefined && !(isObject(externalDocs) && typeof externalDocs.url === 'string')) fail('externalDocs', 'an object { url, description? }')
  if (toJSONSchema !== undefined && typeof toJSONSchema !== 'function') fail('toJSONSchema', 'a function (schema, place) => JSON Schema | undefined')
  if (include !== undefined && typeof include !== 'function') fail('include', 'a function (route) => boolean')
}
