/**
 * A route's responses: as its `openapi.responses` option describes them, else what Gust knows (a fixed value's
 * status and type, a static file, a WebSocket upgrade), else a default; plus the 400 that validation answers.
 * @module
 */
import type { RouteDef } from '../app-core.js'
import { FileReply, type Reply } from '../reply.js'
import { isStandardSchema } from '../route-openapi.js'
import type { Build } from './build.js'
import type { JSONSchema } from './types.js'

/** The shared 400 of a failed validation, as `ValidationError.toJSON()` writes it (src/validation.ts). */
export const VALIDATION_ERROR_SCHEMA: JSONSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', const: 'Validation failed' },
    target: { type: 'string', enum: ['params', 'query', 'headers', 'cookies', 'json', 'form'] },
    issues: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          path: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Where in the part, e.g. ["items", 0, "name"]' },
        },
        required: ['message', 'path'],
      },
    },
  },
  required: ['error', 'target', 'issues'],
}

/** The shared 400 response, its body the component `schema` names. */
export function validationErrorResponse(schema: string): Record<string, unknown> {
  return {
    description: 'The request did not pass validation (the default body; an onError handler may shape it differently)',
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  }
}

const REASONS: Record<string, string> = {
  100: 'Continue', 101: 'Switching Protocols', 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content',
  206: 'Partial Content', 301: 'Moved Permanently', 302: 'Found', 303: 'See Other', 304: 'Not Modified',
  307: 'Temporary Redirect', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone',
  413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content', 426: 'Upgrade Required',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
  default: 'Response',
}
const reason = (status: string) => REASONS[status] ?? (/^\dXX$/.test(status) ? `${status} response` : 'Response')

/** A JSON or text body short enough to show as the example of a fixed value. */
const EXAMPLE_MAX = 4096

export function responses(build: Build, route: string, name: string, def: RouteDef): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const option = def.openapi?.responses
  if (option !== undefined) {
    for (const [status, response] of Object.entries(option)) {
      const entry: Record<string, unknown> = { description: response.description ?? reason(status) }
      let schema: JSONSchema | undefined
      if (isStandardSchema(response.schema)) {
        schema = build.schema(response.schema, { route, target: `response ${status}`, io: 'output' }, `${name}Response${status}`)?.use
      } else if (response.schema !== undefined) {
        // A JSON Schema written by hand is used as written (its `$ref`s may name the app's own components).
        const { $schema: _, ...rest } = response.schema as JSONSchema
        schema = rest
      }
      const type = response.contentType ?? (schema !== undefined ? 'application/json' : undefined)
      if (type !== undefined) entry.content = { [type]: schema === undefined ? {} : { schema } }
      out[status] = entry
    }
  } else if (def.websocket !== undefined) {
    out['101'] = { description: 'Switching Protocols: the connection is a WebSocket from here on' }
    out['426'] = { description: 'Upgrade Required: the request was not a WebSocket handshake' }
  } else if (def.mount !== undefined) {
    out['200'] = { description: 'The file (its type from its extension; ranges, 206 and 304 as HTTP says)', content: { '*/*': {} } }
    out['404'] = { description: 'Not Found' }
  } else if (def.fixed !== undefined) {
    Object.assign(out, fixedResponse(def))
  } else {
    out.default = { description: 'Not described (the route has no openapi.responses)' }
  }
  if (def.validate !== undefined && !('400' in out)) {
    build.usesValidationError = true
    out['400'] = { $ref: '#/components/responses/ValidationFailed' }
  }
  return out
}

/** A fixed value's one response: its status and content type, and its body as the example when it is short text. */
function fixedResponse(def: RouteDef): Record<string, unknown> {
  const reply = def.fixed instanceof Promise ? undefined : (def.fixed as Reply)
  const status = String(reply?.status ?? def.fixedHead?.status ?? 200)
  const type = reply?.header('content-type') ?? def.fixedHead?.contentType
  if (reply instanceof FileReply) {
    return { [status]: { description: 'A file (its type from its extension unless set)', content: { [type ?? '*/*']: {} } } }
  }
  if (type === undefined || status === '204') return { [status]: { description: reason(status) } }
  const media: Record<string, unknown> = {}
  const body = reply?.body
  if (typeof body === 'string' && body.length <= EXAMPLE_MAX) {
    if (/^application\/(?:[\w.+-]*\+)?json/i.test(type)) {
      try {
        media.example = JSON.parse(body)
      } catch {
        // Not JSON after all: no example rather than a wrong one.
      }
    } else if (type.startsWith('text/')) {
      media.example = body
    }
  }
  return { [status]: { description: reason(status), content: { [type]: media } } }
}
