/**
 * Gust: an HTTP framework for Bun and Node.js whose engine is Rust.
 * @example
 * import { Gust } from 'gust'
 * const app = new Gust().get('/', 'Hi').get('/hello/:name', (c) => `Hello ${c.params.name}`)
 * await app.listen({ port: 3000 })
 * @module
 */
export { Gust, type ErrorHandler, type RouteHandler, type RouteMethod, type StaticOptions } from './gust.js'
export type { RouteOptions } from './route-options.js'
export type { AddRoute, Endpoint, Jsonify, Prefixed, ResponseOf, ResponseShape, TypedReply } from './route-schema.js'
export { Context, type HeaderInit, type SSEOptions } from './context.js'
export { GustRequest } from './request.js'
export { file, type FileOptions } from './file.js'
export { FileReply, Reply, StreamReply, UpgradeReply } from './reply.js'
export { SSEWriter, StreamWriter, type SSEMessage } from './stream/writer.js'
export { HTTPException } from './http-exception.js'
export { Server } from './server.js'
export { isWorker } from './workers/role.js'
export type { WorkerInfo } from './workers/pool.js'
export { ServerWebSocket, type WebSocketData } from './ws/socket.js'
export type { PerMessageDeflate, WebSocketHandler } from './ws/route.js'
export { serve, type FetchHandler, type ServeOptions } from './adapter/serve.js'
export type { CompressionOptions, Http2Options, ListenOptions } from './options.js'
export type { PubsubError, PubsubOptions, PubsubStats } from './pubsub.js'
export type { ListenError } from './listen-error.js'
export type { TlsConfig, TlsIdentity, TlsOptions, TlsSource } from './tls.js'
export type { TlsInfo } from './tls-info.js'
export type { FormDataLimits } from './form-data.js'
export type { Handler, Middleware, Next } from './compose.js'
export type { FixedValue, HandlerResult, ParamKeys, Params } from './types.js'
export { cors, type CORSOptions } from './middleware/cors.js'
export { rateLimit } from './middleware/rate-limit.js'
export type { RateLimitKey, RateLimitOptions } from './rate-limit-spec.js'
export { logger, type LogDestination, type LoggerOptions, type PrintFunction } from './middleware/logger.js'
export { requestId, type RequestIdOptions } from './middleware/request-id.js'
export { instrument, type InstrumentHooks, type RequestEnd } from './middleware/instrument.js'
export { parseCookies, serializeCookie, type CookieOptions } from './cookie.js'
export { getCookie, setCookie, deleteCookie } from './cookie-helpers.js'
export { getSignedCookie, setSignedCookie } from './cookie-signed.js'
export {
  ValidationError,
  type StandardSchemaV1,
  type ValidationIssue,
  type ValidationTarget,
  type Validated,
  type Validators,
} from './validation.js'
export type { TrustProxy } from './proxy.js'
export { openapi } from './openapi/document.js'
export { openapiDocs, type OpenAPIDocsOptions } from './openapi/docs.js'
export type {
  JSONSchema,
  OpenAPIDocument,
  OpenAPIOperation,
  OpenAPIOptions,
  OpenAPIParameter,
  OpenAPIResponseOption,
  OpenAPIRouteInfo,
  OpenAPIRouteOption,
  SchemaPlace,
  ToJSONSchema,
} from './openapi/types.js'
export type { JoinPath } from './path-pattern.js'
