// One OpenTelemetry server span per request, from Gust's `instrument()` hooks: named `GET /users/:id` after the
// route pattern (never the raw path, so traces group by route), with the HTTP semantic-convention attributes, the
// caller's trace continued from a W3C `traceparent` header, and 5xx answers marked as errors.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions'
import { instrument } from 'gust'

const propagator = new W3CTraceContextPropagator()
/** How the propagator reads `traceparent` and `tracestate` from a Gust request. */
const fromRequest = { keys: (req) => Object.keys(req.header()), get: (req, name) => req.header(name) }

/**
 * The middleware: `app.use(tracing(tracer))` first, so the span covers every other middleware. The span is also
 * `c.get('span')`, for handlers that start child spans (`trace.setSpan(ROOT_CONTEXT, c.get('span'))` as parent).
 */
export function tracing(tracer) {
  return instrument({
    onStart(c) {
      const { method, routePath } = c.req
      const raw = c.req.rawUrl
      const q = raw.indexOf('?')
      const attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_PATH]: c.req.path,
        [ATTR_URL_SCHEME]: c.req.protocol,
        [ATTR_SERVER_ADDRESS]: c.req.host,
        [ATTR_CLIENT_ADDRESS]: c.req.ip,
        [ATTR_NETWORK_PROTOCOL_VERSION]: c.req.httpVersion === '2.0' ? '2' : c.req.httpVersion,
      }
      if (q !== -1) attributes[ATTR_URL_QUERY] = raw.slice(q + 1)
      const agent = c.req.header('user-agent')
      if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent
      // `http.route` only when a route matched: a 404 has none, and its span is named by the method alone.
      if (routePath !== undefined) attributes[ATTR_HTTP_ROUTE] = routePath
      const parent = propagator.extract(ROOT_CONTEXT, c.req, fromRequest)
      const name = routePath === undefined ? method : `${method} ${routePath}`
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent)
      c.set('span', span)
      return span
    },
    onEnd(_c, end, span) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, end.status)
      if (end.size !== undefined) span.setAttribute('http.response.body.size', end.size)
      // Server spans: 5xx is an error, 4xx is the client's (OpenTelemetry's HTTP conventions).
      if (end.status >= 500 || (end.error !== undefined && end.status < 400)) {
        const type = end.error instanceof Error ? end.error.constructor.name : String(end.status)
        span.setAttribute(ATTR_ERROR_TYPE, type)
        span.setStatus({ code: SpanStatusCode.ERROR, message: end.error instanceof Error ? end.error.message : undefined })
        if (end.error instanceof Error) span.recordException(end.error)
      }
      if (end.aborted) span.addEvent('client left before the response ended')
      span.end()
    },
  })
}

/** A child span of the request's (a database call, say) around `work`. */
export async function inSpan(tracer, c, name, work) {
  const span = tracer.startSpan(name, {}, trace.setSpan(ROOT_CONTEXT, c.get('span')))
  try {
    return await work()
  } finally {
    span.end()
  }
}
