import { builtin } from '../builtins.js'
import { type Middleware, prelude } from '../compose.js'
import type { Context } from '../context.js'
import { HTTPException } from '../http-exception.js'
import { type Observer, observe, type RequestEnd, watch } from '../observe.js'
import { type LogDestination, LogSink, writerOf } from './log-sink.js'
import { compileRequestId, type RequestIdOptions } from './request-id.js'

export type { LogDestination } from './log-sink.js'

/**
 * Where `logger()` writes each line (without its `\n`).
 * @example
 * app.use(logger((line) => myLogger.info(line)))
 */
export type PrintFunction = (line: string) => void

/**
 * Options of `logger()`.
 * @example
 * const options: LoggerOptions = { format: 'json', destination: '/var/log/app.log', requestId: { trust: true }, serverTiming: true }
 */
export interface LoggerOptions {
  /**
   * `'text'` (the default): Hono's two lines per request, `<-- GET /path` and `--> GET /path 200 3ms`.
   * `'json'`: one line per request in pino's (and Fastify's) field names, for log pipelines (see `logger()`).
   * `'pretty'`: one short human line per request, once it is answered, for development.
   */
  format?: 'text' | 'json' | 'pretty'
  /** Called with each line, unbuffered (as `logger(print)`); default `console.log` for text, else `destination`. */
  print?: PrintFunction
  /** Where json and pretty lines go, buffered and written once per event-loop turn (default `process.stdout`). */
  destination?: LogDestination
  /**
   * Gives each request an id (see `requestId()`): taken from a trusted `x-request-id` or generated, logged as
   * `reqId`, readable with `c.get('requestId')` and sent back in `x-request-id`. `true` or options: on; `false`:
   * off. Default: on for json and pretty, off for text (whose lines have no room for it).
   */
  requestId?: boolean | RequestIdOptions
  /** Adds `Server-Timing: total;dur=<ms>` to every response: the time until it was ready to send (default `false`). */
  serverTiming?: boolean
}

/** ANSI colours by status class: 2xx green, 3xx cyan, 4xx yellow, 5xx red. */
const COLOURS: Record<number, string> = { 2: '32', 3: '36', 4: '33', 5: '31' }

/** Colour only a terminal, and never when NO_COLOR is set (https://no-color.org). */
function colourOn(): boolean {
  const env = globalThis.process?.env
  return globalThis.process?.stdout?.isTTY === true && !env?.NO_COLOR
}

function elapsed(start: number): string {
  const ms = performance.now() - start
  const rounded = Math.round(ms)
  return rounded < 1000 ? `${rounded}ms` : `${(ms / 1000).toFixed(1)}s`
}

const KNOWN = ['format', 'print', 'destination', 'requestId', 'serverTiming']
const FORMATS = ['text', 'json', 'pretty']

function fail(message: string): never {
  throw new TypeError(`logger(): ${message}`)
}

/** Checks the options once, so a mistake throws where the app is built rather than on some request. */
function checkOptions(options: object): Required<Pick<LoggerOptions, 'format' | 'serverTiming'>> & LoggerOptions {
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new Error(`logger(): unknown option "${key}"; known options: ${KNOWN.join(', ')}`)
  }
  const o = options as LoggerOptions
  const format = o.format ?? 'text'
  if (!FORMATS.includes(format)) fail(`option "format" must be one of ${FORMATS.map((f) => `'${f}'`).join(', ')}, got ${JSON.stringify(format) ?? typeof format}`)
  if (o.print !== undefined && typeof o.print !== 'function') fail(`option "print" must be a function that prints a line, got ${typeof o.print}`)
  if (o.print !== undefined && o.destination !== undefined) fail('give "print" (one call per line) or "destination" (buffered), not both')
  if (format === 'text' && o.destination !== undefined) fail(`option "destination" is for the json and pretty formats; text lines go to "print"`)
  const serverTiming = o.serverTiming ?? false
  if (typeof serverTiming !== 'boolean') fail(`option "serverTiming" must be a boolean, got ${typeof serverTiming}`)
  const id = o.requestId
  if (id !== undefined && typeof id !== 'boolean' && (typeof id !== 'object' || id === null || Array.isArray(id))) {
    fail(`option "requestId" must be a boolean or requestId() options, got ${id === null ? 'null' : Array.isArray(id) ? 'an array' : typeof id}`)
  }
  return { ...o, format, serverTiming }
}

/** Whether JSON needs `s` escaped: a quote, a backslash or a control character (a loop: no regular expression per line). */
function needsEscape(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c) return true
  }
  return false
}

/**
 * Milliseconds with three decimals (`0.412`), from integers: V8's shortest-form conversion of a fraction costs
 * ~110 ns on Node 20, this ~35 (`toFixed(3)` ~85).
 */
function millis(ms: number): string {
  const us = Math.round(ms * 1000)
  const frac = us % 1000
  return `${(us - frac) / 1000}.${frac < 100 ? (frac < 10 ? '00' : '0') : ''}${frac}`
}

/** `s` as a JSON string; `JSON.stringify` only when something must be escaped (the URL and address may). */
function jsonString(s: string): string {
  return needsEscape(s) ? JSON.stringify(s) : `"${s}"`
}

/** An error as pino's `err` serializer writes it: `type`, `message`, `stack`. Never throws (a hostile getter). */
function jsonError(err: unknown): string {
  try {
    if (err instanceof Error) {
      return JSON.stringify({ type: err.constructor?.name ?? err.name, message: err.message, stack: err.stack })
    }
    return JSON.stringify({ type: typeof err, message: String(err) })
  } catch {
    return '{"type":"unknown","message":"the error could not be serialized"}'
  }
}

/**
 * pino's levels: 30 (info) for 1xx–3xx, 40 (warn) for 4xx, 50 (error) for 5xx and for a stream that failed after
 * its head was sent (status already 2xx); the split most pino-http apps set with `customLogLevel`.
 */
function levelOf(end: RequestEnd): number {
  if (end.status >= 500 || (end.error !== undefined && end.status < 400)) return 50
  return end.status >= 400 ? 40 : 30
}

/** pino-http's messages: completed, errored (level 50), aborted (the client left a streamed body). */
function messageOf(level: number, end: RequestEnd): string {
  return end.aborted ? 'request aborted' : level === 50 ? 'request errored' : 'request completed'
}

/**
 * Writes one JSON line per request (see `logger()`): the line is built by concatenation, every value written
 * as it is except those that may need escaping (`url`, `remoteAddress`); one `Date.now()` per line.
 */
class JsonLines implements Observer {
  readonly #emit: (line: string) => void
  /** `,"pid":…,"hostname":…`, computed once. */
  readonly #process: string

  constructor(emit: (line: string) => void) {
    this.#emit = emit
    this.#process = `,"pid":${process.pid},"hostname":${JSON.stringify(builtin('node:os').hostname())}`
  }

  end(c: Context, end: RequestEnd): void {
    const req = c.req
    const level = levelOf(end)
    const id = c.get('requestId')
    let line = `{"level":${level},"time":${Date.now()}${this.#process}`
    // Escaped like the URL: an id requestId() made is plain, but an app may have set its own with c.set().
    if (typeof id === 'string') line += `,"reqId":${jsonString(id)}`
    line += `,"req":{"method":"${end.method}","url":${jsonString(req.rawUrl)},"remoteAddress":${jsonString(req.ip)},"remotePort":${req.remotePort}}`
    line += `,"res":{"statusCode":${end.status}},"responseTime":${millis(end.duration)}`
    if (end.size !== undefined) line += `,"responseSize":${end.size}`
    if (level === 50 && end.error !== undefined) line += `,"err":${jsonError(end.error)}`
    this.#emit(`${line},"msg":"${messageOf(level, end)}"}`)
  }
}

/** `0.4ms`, `12.3ms`, `1.2s`. */
function shortTime(ms: number): string {
  return ms < 1000 ? `${ms < 10 ? ms.toFixed(1) : Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`
}

/** `512B`, `1.5kB`, `2.0MB`; `-` for a file the engine served. */
function shortSize(bytes: number | undefined): string {
  if (bytes === undefined) return '-'
  if (bytes < 1000) return `${bytes}B`
  return bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)}kB` : `${(bytes / 1_000_000).toFixed(1)}MB`
}

/** One line per answered request for a developer's terminal: `GET /users/1 200 0.4ms 12B 3f9a0c1b22de-1`. */
class PrettyLines implements Observer {
  readonly #emit: (line: string) => void
  readonly #colour: boolean

  constructor(emit: (line: string) => void, colour: boolean) {
    this.#emit = emit
    this.#colour = colour
  }

  end(c: Context, end: RequestEnd): void {
    const code = COLOURS[Math.floor(end.status / 100)]
    const status = this.#colour && code !== undefined ? `\x1b[${code}m${end.status}\x1b[0m` : String(end.status)
    const id = c.get('requestId')
    let line = `${end.method} ${c.req.rawUrl} ${status} ${shortTime(end.duration)} ${shortSize(end.size)}`
    if (typeof id === 'string') line += ` ${id}`
    if (end.aborted) line += ' (aborted)'
    if (levelOf(end) === 50 && end.error !== undefined) {
      // One line per request, whatever the message holds.
      const why = end.error instanceof Error ? `${end.error.name}: ${end.error.message}` : String(end.error)
      line += ` ! ${why.replace(/[\r\n]+/g, ' ')}`
    }
    this.#emit(line)
  }
}

/** The Hono-style text logger: a line when the request arrives, another when its response is ready. */
function textLogger(out: PrintFunction, colour: boolean, assignId: ((c: Context) => string) | undefined, timing: boolean): Middleware {
  const status = (code: number) => {
    const c = COLOURS[Math.floor(code / 100)]
    return colour && c !== undefined ? `\x1b[${c}m${code}\x1b[0m` : String(code)
  }
  return async (c, next) => {
    assignId?.(c)
    if (timing) watch(c).timing = true
    const { method, rawUrl } = c.req
    out(`<-- ${method} ${rawUrl}`)
    const start = performance.now()
    try {
      await next()
    } catch (err) {
      out(`--> ${method} ${rawUrl} ${status(err instanceof HTTPException ? err.status : 500)} ${elapsed(start)}`)
      throw err
    }
    // No response after `next()` means the chain was left unfinished, which compose turns into an error: a 500.
    out(`--> ${method} ${rawUrl} ${status(c.res?.status ?? 500)} ${elapsed(start)}`)
  }
}

/**
 * Logs requests. `logger()` and `logger(print)` write Hono's two text lines per request: `<-- GET /path?q=1` as
 * it arrives and `--> GET /path?q=1 200 3ms` when its response is ready (for a stream, its head; a thrown error
 * shows the status the default error handler sends), to `console.log` (statuses coloured on a terminal) or to
 * `print`.
 *
 * `logger({ format: 'json' })` writes one line per request once it is answered, with pino-http's and Fastify's
 * field names, so pino tooling (`pino-pretty`, log pipelines that know pino) reads it as is:
 *
 * `{"level":30,"time":1764000000000,"pid":4242,"hostname":"web-1","reqId":"3f9a0c1b22de-1",
 * "req":{"method":"GET","url":"/users/1?full=1","remoteAddress":"127.0.0.1","remotePort":51234},
 * "res":{"statusCode":200},"responseTime":0.412,"responseSize":27,"msg":"request completed"}`
 *
 * - `level`: 30 for 1xx–3xx, 40 for 4xx, 50 for 5xx (pino-http logs everything at 30 unless `customLogLevel`
 *   says so; this is the split most apps configure). `msg` is `request errored` at 50 (with `err`: `type`,
 *   `message`, `stack` of what was thrown), `request aborted` for a streamed body the client left.
 * - `time`: epoch milliseconds; `responseTime`: milliseconds (to the microsecond) until the response was handed
 *   to the engine, or its last chunk for a stream. `res.statusCode` is the status sent, after the error handler.
 * - `responseSize`: body bytes, before compression, beside `responseTime` as pino-http names things (pino-http
 *   logs no size; OpenTelemetry calls it `http.response.body.size`); left out for files the engine serves.
 * - `reqId`: as Fastify writes it (see `requestId` and `requestId()`); `req.remoteAddress` is `c.req.ip`.
 *
 * Cost: nothing runs per request but building the line (no closure, no `JSON.stringify` of an object; a string
 * is escaped only when it needs to be), and lines are written once per event-loop turn. What the engine refuses
 * before JavaScript runs (a malformed request, a body over the limit, a timeout) is not logged, nor anything on
 * routes this middleware does not cover; covering a fixed (turbo) route makes it run through JavaScript.
 * @example
 * app.use(logger())                                     // <-- GET /  then  --> GET / 200 1ms
 * app.use(logger({ format: 'json' }))                   // one JSON line per request on stdout
 * app.use(logger({ format: 'json', destination: '/var/log/app.log', serverTiming: true }))
 * app.use(logger({ format: 'pretty' }))                 // GET /users/1 200 0.4ms 12B 3f9a0c1b22de-1
 */
export function logger(print?: PrintFunction): Middleware
export function logger(options: LoggerOptions): Middleware
export function logger(arg?: PrintFunction | LoggerOptions): Middleware {
  if (arg === undefined || typeof arg === 'function') return textLogger(arg ?? ((line) => console.log(line)), arg === undefined && colourOn(), undefined, false)
  if (typeof arg !== 'object' || arg === null || Array.isArray(arg)) {
    throw new TypeError(`logger() takes a function that prints a line, got ${arg === null ? 'null' : Array.isArray(arg) ? 'an array' : typeof arg} (or an options object)`)
  }
  const o = checkOptions(arg)
  const idOption = o.requestId ?? o.format !== 'text'
  const assignId = idOption === false ? undefined : compileRequestId(idOption === true ? {} : idOption, 'logger() option "requestId"')
  const timing = o.serverTiming
  if (o.format === 'text') return textLogger(o.print ?? ((line) => console.log(line)), o.print === undefined && colourOn(), assignId, timing)

  let emit: (line: string) => void
  if (o.print !== undefined) {
    emit = o.print
  } else {
    const sink = new LogSink(writerOf(o.destination ?? process.stdout, 'logger()'))
    emit = (line) => sink.add(`${line}\n`)
  }
  const colour = o.format === 'pretty' && o.print === undefined && o.destination === undefined && colourOn()
  const observer: Observer = o.format === 'json' ? new JsonLines(emit) : new PrettyLines(emit, colour)
  // No closure and no `await` per request: the line is written when the dispatcher reports the answer, and a
  // chain of such middleware runs as plain calls before the handler (`prelude`).
  return prelude((c) => {
    if (assignId !== undefined) assignId(c)
    if (timing) watch(c).timing = true
    observe(c, observer, undefined)
  })
}
