import { lightParts } from './light-response.js'
import { HTTPException } from './http-exception.js'
import { MESSAGES, STATUS_MAX, STATUS_MIN } from './native/engine.js'
import type { BindingFixed } from './native/binding.js'
import { type BodySource, type Chunk, concatChunks, fromAsyncIterable, fromReadableStream, fromReader, isAsyncIterable, prepend, toChunk } from './stream/source.js'
import type { StreamWriter } from './stream/writer.js'

/**
 * A response as Gust sends it: a status, header pairs (repeats allowed) and a body of text or bytes.
 * Returned by the `c.text()`, `c.json()`, `c.html()`, `c.body()` and `c.redirect()` helpers.
 */
export class Reply {
  constructor(
    /** HTTP status code. */
    public status: number,
    /** Header names and values, alternating; a name may repeat (`set-cookie`). */
    public headers: string[],
    /** The whole body. */
    public body: string | Uint8Array,
  ) {}

  /** The first value of a header, case-insensitive. */
  header(name: string): string | undefined {
    const lower = name.toLowerCase()
    for (let i = 0; i < this.headers.length; i += 2) {
      if (this.headers[i]!.toLowerCase() === lower) return this.headers[i + 1]
    }
    return undefined
  }

  /** The same reply with other headers (a copy a middleware may edit without touching a shared reply). */
  withHeaders(headers: string[]): Reply {
    return new Reply(this.status, headers, this.body)
  }
}

/**
 * A reply whose body the engine reads from a file (`c.file()`, a static directory under middleware): `body` names
 * it (`path:<absolute>` or `mount:<index>:<path below>`), and the engine answers with the file's status, type,
 * validators and range, adding these headers.
 */
export class FileReply extends Reply {
  declare body: string

  override withHeaders(headers: string[]): Reply {
    return new FileReply(this.status, headers, this.body)
  }
}

/**
 * A handler's acceptance of a WebSocket handshake (made by `app.ws()` routes once `upgrade` agreed): the engine
 * answers 101 with these headers, and the connection becomes a socket. `socket` is what the socket will be
 * made of when it opens; internal.
 */
export class UpgradeReply extends Reply {
  constructor(
    headers: string[],
    /** The route's handlers, the data `upgrade` returned, the params and peer; internal. */
    readonly socket: unknown,
  ) {
    super(101, headers, '')
  }

  override withHeaders(headers: string[]): Reply {
    return new UpgradeReply(headers, this.socket)
  }
}

/**
 * A reply whose body streams: each chunk is sent as it is produced (chunked, or framed by a `content-length`
 * the handler sets). Made by `c.stream()`, `c.sse()`, or by returning a `ReadableStream`, an async iterable or a
 * `Response` with a streaming body.
 */
export class StreamReply extends Reply {
  constructor(
    status: number,
    headers: string[],
    /** Where the body's chunks come from: pulled from a source, or pushed by a writer; internal. */
    readonly source: BodySource | StreamWriter,
  ) {
    super(status, headers, '')
  }

  override withHeaders(headers: string[]): Reply {
    return new StreamReply(this.status, headers, this.source)
  }
}

export const TEXT = 'text/plain; charset=utf-8'
export const JSON_TYPE = 'application/json'
export const HTML = 'text/html; charset=utf-8'
export const BYTES = 'application/octet-stream'

/** RFC 9110 `tchar`, by ASCII code. */
const TCHAR = new Uint8Array(128)
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1

/** A loop, not a regular expression: on short names it is several times cheaper, and it runs per header. */
/** Whether `s` is an RFC 9110 `token` (header names, methods, cookie names). */
export function isToken(s: string): boolean {
  if (s.length === 0) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c > 127 || TCHAR[c] === 0) return false
  }
  return true
}

/** What hyper accepts in a header value: tab and visible ASCII. */
function isValue(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c > 0x7e || (c < 0x20 && c !== 9)) return false
  }
  return true
}

/** Throws when a header could not be sent as given, so the mistake surfaces at the handler's line. */
export function checkHeader(name: string, value: string): void {
  if (typeof name !== 'string' || !isToken(name)) {
    throw new TypeError(`Invalid header name ${JSON.stringify(name)}`)
  }
  if (typeof value !== 'string' || !isValue(value)) {
    throw new TypeError(
      `Invalid value for header "${name}": ${JSON.stringify(value)} (only tab and visible ASCII are allowed: no CR, LF or other control characters; encode other text first)`,
    )
  }
}

/** Throws unless `status` is an integer a handler may answer with. */
export function checkStatus(status: number): void {
  if (!Number.isInteger(status) || status < STATUS_MIN || status > STATUS_MAX) {
    throw new RangeError(`Invalid status ${String(status)}: expected an integer from ${STATUS_MIN} to ${STATUS_MAX}`)
  }
}

/** Whether `headers` names `lower` (given lower-case); lengths are compared first, so most names cost no copy. */
export function hasHeader(headers: string[], lower: string): boolean {
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!
    if (name.length === lower.length && name.toLowerCase() === lower) return true
  }
  return false
}

/**
 * Builds a reply, adding `content-type` unless the headers already name one. Takes ownership of `headers`:
 * callers pass an array of their own (the context's is copied in `toReply`), so no copy is made here.
 */
export function makeReply(status: number, headers: string[], body: string | Uint8Array, type: string | null): Reply {
  if (type !== null && !hasHeader(headers, 'content-type')) headers.push('content-type', type)
  return new Reply(status, headers, body)
}

function isPlainData(value: object): boolean {
  return Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function' || value.constructor === Object || Object.getPrototypeOf(value) === null
}

/**
 * Whether `value` is a `Response`, its tag read first: on Node, the first read of the `Response` global loads
 * undici (and node:http, tls, crypto, zlib with it), which an app that never makes one should not pay, at start
 * or on its first request.
 */
export function isResponse(value: unknown): value is Response {
  return Object.prototype.toString.call(value) === '[object Response]' && value instanceof Response
}

/** Whether `value` is a `ReadableStream`, its tag read first (the global loads the web streams on Node). */
export function isReadableStream(value: unknown): value is ReadableStream<string | Uint8Array> {
  return Object.prototype.toString.call(value) === '[object ReadableStream]' && value instanceof ReadableStream
}

/**
 * Turns whatever a handler returned into a reply. `status` and `headers` are those the handler set on the
 * context; they apply unless the returned value carries its own. Returns a promise only for a `Response`,
 * whose body must be read.
 */
export function toReply(
  value: unknown,
  status: number | undefined,
  contextHeaders: string[] | undefined,
): Reply | Promise<Reply> {
  if (value instanceof Reply) return value
  // The context's array stays the context's: an error handler answering later must not inherit this type.
  const headers = contextHeaders === undefined ? [] : contextHeaders.slice()
  if (typeof value === 'string') return makeReply(status ?? 200, headers, value, TEXT)
  if (value === undefined || value === null) return new Reply(status ?? 204, headers, '')
  if (value instanceof Uint8Array) return makeReply(status ?? 200, headers, value, BYTES)
  if (value instanceof ArrayBuffer) return makeReply(status ?? 200, headers, new Uint8Array(value), BYTES)
  // One tag read for both checks (see `isResponse`): this runs for every object a handler returns.
  const tag = Object.prototype.toString.call(value)
  if (tag === '[object Response]' && value instanceof Response) return fromResponse(value, headers)
  if (tag === '[object ReadableStream]' && value instanceof ReadableStream) {
    return new StreamReply(status ?? 200, headers, fromReadableStream(value))
  }
  if (isAsyncIterable(value)) return new StreamReply(status ?? 200, headers, fromAsyncIterable(value))
  if (typeof value === 'object' && isPlainData(value)) {
    return makeReply(status ?? 200, headers, JSON.stringify(value), JSON_TYPE)
  }
  const kind = typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value
  throw new TypeError(
    `A handler returned a ${kind}; return a string, a plain object or array, bytes, a stream, a Response, or nothing`,
  )
}

/** The most of a `Response` body gathered to send it whole (with its length); beyond it, the body streams. */
const WHOLE_MAX = 64 * 1024

const TICK = Symbol('tick')
const nextTick = () => new Promise<typeof TICK>((resolve) => setImmediate(resolve, TICK))

/**
 * Turns a Web `Response` into a reply; headers set on the context come first, the response's own after.
 *
 * A body that is all there at once (`new Response('text')`, bytes, JSON) is sent whole, with its length: what its
 * stream yields before the next event-loop turn is read, and if the stream ends by then, that is the body. A body
 * still being produced (a `fetch` being proxied, a `ReadableStream` that waits) streams from there on, the bytes
 * already read first, so its first byte is not held back. `whole` reads it to the end regardless (turbo values).
 */
export async function fromResponse(res: Response, headers: string[], whole = false): Promise<Reply> {
  const light = lightParts(res)
  if (light !== undefined) {
    return new Reply(light.status, headers.length === 0 ? light.headers : headers.concat(light.headers), light.body)
  }
  const out = headers.slice()
  res.headers.forEach((value, name) => {
    if (name !== 'set-cookie') out.push(name, value)
  })
  for (const cookie of res.headers.getSetCookie()) out.push('set-cookie', cookie)
  if (res.body === null) return new Reply(res.status, out, '')
  if (whole) return new Reply(res.status, out, new Uint8Array(await res.arrayBuffer()))
  const reader = res.body.getReader()
  const read: Chunk[] = []
  let size = 0
  let pending = reader.read()
  const turn = nextTick()
  // A producer with its data in memory may finish a large body within the turn: past WHOLE_MAX it streams from
  // there, so a download of any size holds one queue's worth per response, not the whole body.
  while (size < WHOLE_MAX) {
    const r = await Promise.race([pending, turn])
    if (r === TICK) break
    if (r.done) return new Reply(res.status, out, concatChunks(read))
    const chunk = toChunk(r.value)
    read.push(chunk)
    size += typeof chunk === 'string' ? chunk.length : chunk.byteLength
    pending = reader.read()
  }
  return new StreamReply(res.status, out, prepend(read, fromReader(reader, pending)))
}

/** The reply for an error no handler turned into a response. */
export function errorReply(err: unknown): Reply {
  if (err instanceof HTTPException) return makeReply(err.status, [], err.message, TEXT)
  return makeReply(500, [], MESSAGES.internal, TEXT)
}

/** A fixed route's reply as the engine serves it (a turbo route), encoded once. */
export function fixedForEngine(reply: Reply): BindingFixed {
  if (reply instanceof FileReply) {
    // `path:<absolute>`: a turbo file route, looked up per request by the engine.
    return { status: 200, headers: reply.headers, body: Buffer.alloc(0), file: reply.body.slice('path:'.length) }
  }
  return { status: reply.status, headers: reply.headers, body: Buffer.from(reply.body as Uint8Array) }
}
