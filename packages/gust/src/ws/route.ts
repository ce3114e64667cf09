/**
 * `app.ws()` routes: the handlers and options a route takes, checked once, and the handler that runs through
 * middleware like any request and accepts the handshake.
 * @module
 */
import type { NodeBuffer } from '../bytes.js'
import { backstage, type Context } from '../context.js'
import { isResponse, isToken, Reply, UpgradeReply } from '../reply.js'
import type { Handler } from '../compose.js'
import type { TypedReply } from '../route-schema.js'
import type { HandlerResult, Params } from '../types.js'
import type { ServerWebSocket, SocketInit } from './socket.js'

/**
 * A WebSocket route: what happens at the handshake and to each open socket, with Bun's names and defaults.
 * @example
 * app.ws('/chat/:room', {
 *   upgrade: (c) => ({ user: c.req.header('x-user') ?? 'anonymous' }),
 *   open(ws) { ws.subscribe(ws.params.room) },
 *   message(ws, msg) { ws.publish(ws.params.room, msg) },
 * })
 */
export interface WebSocketHandler<Data = undefined, P extends string = string> {
  /**
   * Runs at the handshake, after middleware (which may refuse it, as any request). Return a `Response` (or a
   * `c.text(...)` reply) with a 4xx status to refuse (over HTTP/2 a 2xx would mean open: the engine sends 500);
   * anything else becomes `ws.data`. Headers set with `c.header()` go on the 101 (the 200 over HTTP/2; a
   * `Sec-WebSocket-Protocol` among those offered chooses the subprotocol; check `Origin` here).
   */
  // `TypedReply` listed as well so that `c.text('no', 403)` (a typed reply) is read as a refusal, not as `Data`.
  upgrade?: (c: Context<P>) => Data | Refusal | Promise<Data | Refusal>
  /** The socket is open. */
  open?: (ws: ServerWebSocket<Data, P>) => unknown
  /** A whole message: a string for a text frame, a `Buffer` for a binary one. */
  message?: (ws: ServerWebSocket<Data, P>, message: string | NodeBuffer) => unknown
  /**
   * The socket is closed: the client's code and reason, the code the server failed it with (1002, 1007, 1009),
   * 1005 for a close without a code, or 1006 when it ended without a close frame (terminated, gone, timed out).
   */
  close?: (ws: ServerWebSocket<Data, P>, code: number, reason: string) => unknown
  /** The send queue emptied after a send returned -1 or 0: there is room again. */
  drain?: (ws: ServerWebSocket<Data, P>) => unknown
  /** Subprotocols the route speaks, by preference: the first the client offered is chosen. */
  protocols?: string[]
  /** The largest message in bytes, fragments together (default 16 MiB); larger ones close the socket with 1009. */
  maxPayloadLength?: number
  /** Seconds without a byte from the client before it is closed (default 120; 0: never). */
  idleTimeout?: number
  /** Bytes queued for a slow client beyond which sends are dropped (default 16 MiB). */
  backpressureLimit?: number
  /** Close a socket that passes `backpressureLimit` instead of dropping what it is sent (default false). */
  closeOnBackpressureLimit?: boolean
  /** Ping a quiet client half-way through `idleTimeout`, so a live one stays open (default true). */
  sendPings?: boolean
  /** Let `ws.publish` reach the publishing socket too (default false). */
  publishToSelf?: boolean
  /**
   * permessage-deflate (RFC 7692) with clients that offer it (default off). `true` is
   * `{ compress: 'shared', decompress: 'shared' }`: neither side keeps a context between messages, so a socket
   * holds no compression memory and a published message is compressed once for all its subscribers.
   * `{ compress: 'dedicated', decompress: 'dedicated' }` keeps a context per socket (better ratios on similar
   * messages; about 370 KiB per socket to compress, 46 KiB to decompress). Messages of `threshold` bytes or more
   * (default 1024) are compressed unless a send says otherwise (`ws.send(data, false)`; `true` compresses a
   * message of any size, as Bun does).
   */
  perMessageDeflate?: boolean | PerMessageDeflate
}

/** permessage-deflate's settings: where each direction's compression state lives. */
export interface PerMessageDeflate {
  /** The server's messages: `'shared'`/`true` (default), `'dedicated'`, or `'disable'`/`false` (sent plain). */
  compress?: boolean | 'disable' | 'shared' | 'dedicated'
  /**
   * The client's messages: `'shared'`/`true` (default: the client is asked not to keep a context) or
   * `'dedicated'` (it may; a decompressor per socket). Compressed messages must be read once the extension is
   * agreed, so this is disabled only together with `compress` (which turns the extension off).
   */
  decompress?: boolean | 'disable' | 'shared' | 'dedicated'
  /** Messages shorter than this many bytes are sent plain unless a send asks for compression (default 1024). */
  threshold?: number
}

/** A checked route: its handlers and the engine's options. */
export interface WsRoute {
  path: string
  handler: WebSocketHandler<any, any>
  binding: {
    maxPayloadLength: number
    idleTimeout: number
    backpressureLimit: number
    closeOnBackpressureLimit: boolean
    sendPings: boolean
    perMessageDeflate: { compress: 'disable' | 'shared' | 'dedicated'; dedicatedDecompressor: boolean; threshold: number } | undefined
  }
}

/** What `upgrade` returns to refuse a handshake. */
type Refusal = Response | Reply | TypedReply<unknown, number, 'json' | 'text'>

const HANDLERS = ['upgrade', 'open', 'message', 'close', 'drain'] as const
const KNOWN = [...HANDLERS, 'protocols', 'maxPayloadLength', 'idleTimeout', 'backpressureLimit', 'closeOnBackpressureLimit', 'sendPings', 'publishToSelf', 'perMessageDeflate']
const DEFLATE_KNOWN = ['compress', 'decompress', 'threshold']

/** One direction's setting, as a word: `true` is `'shared'`, `false` is `'disable'`. Bun's sized compressors are refused by name. */
function deflateMode(where: string, name: string, value: unknown): 'disable' | 'shared' | 'dedicated' {
  if (value === undefined || value === true) return 'shared'
  if (value === false) return 'disable'
  if (value === 'disable' || value === 'shared' || value === 'dedicated') return value
  if (typeof value === 'string' && /^\d+KB$/.test(value)) {
    throw new RangeError(
      `${where}: perMessageDeflate.${name} "${value}" is not supported: Gust's zlib (zlib-rs) keeps a 128 KiB hash table whatever the window (245 KiB for the smallest), so a sized compressor would not hold to its size; use 'shared' (no memory per socket) or 'dedicated'`,
    )
  }
  throw new TypeError(`${where}: perMessageDeflate.${name} must be true, false, 'shared', 'dedicated' or 'disable', got ${String(value)}`)
}

/** Checks `perMessageDeflate`: what the engine is told, or `undefined` when the extension stays off. */
function checkDeflate(where: string, value: unknown): WsRoute['binding']['perMessageDeflate'] {
  if (value === undefined || value === false) return undefined
  if (value === true) return { compress: 'shared', dedicatedDecompressor: false, threshold: 1024 }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${where}: "perMessageDeflate" must be true, false or { compress, decompress, threshold }, got ${String(value)}`)
  }
  const o = value as Record<string, unknown>
  for (const key of Object.keys(o)) {
    if (!DEFLATE_KNOWN.includes(key)) throw new Error(`${where}: unknown perMessageDeflate option "${key}"; known: ${DEFLATE_KNOWN.join(', ')}`)
  }
  const compress = deflateMode(where, 'compress', o.compress)
  const decompress = deflateMode(where, 'decompress', o.decompress)
  let threshold = 1024
  if (o.threshold !== undefined) {
    if (typeof o.threshold !== 'number' || !Number.isInteger(o.threshold) || o.threshold < 0 || o.threshold > 2 ** 32 - 1) {
      throw new RangeError(`${where}: perMessageDeflate.threshold must be a whole number of bytes from 0 to ${2 ** 32 - 1}, got ${String(o.threshold)}`)
    }
    threshold = o.threshold
  }
  if (decompress === 'disable') {
    if (compress === 'disable') return undefined
    throw new RangeError(
      `${where}: perMessageDeflate.decompress cannot be disabled while compress is on: once the extension is agreed a client may compress any message (RFC 7692); use 'shared' (no memory per socket) or 'dedicated'`,
    )
  }
  return { compress, dedicatedDecompressor: decompress === 'dedicated', threshold }
}

/** Checks a route's handlers and options; throws naming the route and the mistake. */
export function checkWebSocket(path: string, handler: unknown): WsRoute {
  const where = `WebSocket route ${path}`
  if (typeof handler !== 'object' || handler === null || Array.isArray(handler)) {
    throw new TypeError(`${where}: expected an object of handlers ({ open, message, close, ... })`)
  }
  const h = handler as Record<string, unknown>
  for (const key of Object.keys(h)) {
    if (!KNOWN.includes(key)) throw new Error(`${where}: unknown option "${key}"; known: ${KNOWN.join(', ')}`)
  }
  for (const name of HANDLERS) {
    if (h[name] !== undefined && typeof h[name] !== 'function') {
      throw new TypeError(`${where}: "${name}" must be a function, got ${typeof h[name]}`)
    }
  }
  const whole = (name: string, fallback: number, min: number, max: number): number => {
    const value = h[name]
    if (value === undefined) return fallback
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new RangeError(`${where}: "${name}" must be a whole number from ${min} to ${max}, got ${String(value)}`)
    }
    return value
  }
  const flag = (name: string, fallback: boolean): boolean => {
    const value = h[name]
    if (value === undefined) return fallback
    if (typeof value !== 'boolean') throw new TypeError(`${where}: "${name}" must be true or false, got ${String(value)}`)
    return value
  }
  const protocols = h.protocols
  if (protocols !== undefined && (!Array.isArray(protocols) || !protocols.every((p) => typeof p === 'string' && isToken(p)))) {
    throw new TypeError(`${where}: "protocols" must be an array of subprotocol names (tokens)`)
  }
  flag('publishToSelf', false)
  return {
    path,
    handler: h as WebSocketHandler,
    binding: {
      maxPayloadLength: whole('maxPayloadLength', 16 * 1024 * 1024, 1, 2 ** 32 - 1),
      idleTimeout: whole('idleTimeout', 120, 0, 86_400),
      backpressureLimit: whole('backpressureLimit', 16 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
      closeOnBackpressureLimit: flag('closeOnBackpressureLimit', false),
      sendPings: flag('sendPings', true),
      perMessageDeflate: checkDeflate(where, h.perMessageDeflate),
    },
  }
}

/** The `params` of every socket of a route without parameters. */
const NO_PARAMS = Object.freeze({})

/** A socket about to open: what the engine's open event turns into a `ServerWebSocket`. */
export interface PendingSocket {
  route: WsRoute
  init: SocketInit<unknown, string>
}

/** The subprotocols a handshake offers, in the client's order. */
function offered(c: Context<any>): string[] {
  const header = c.req.header('sec-websocket-protocol')
  return header === undefined ? [] : header.split(',').map((p) => p.trim()).filter((p) => p !== '')
}

/**
 * The route's handler: `upgrade` decides (a `Response` or reply refuses), a subprotocol is chosen, and the
 * handshake is accepted with the headers set on the context. A chosen subprotocol the client did not offer is
 * the route's mistake: it throws (the error handler answers, 500 by default).
 */
export function upgradeHandler(route: WsRoute): Handler<any, any> {
  const { handler } = route
  const hasParams = /[:*]/.test(route.path)
  const accept = (c: Context<any>, data: unknown): HandlerResult => {
    if (data instanceof Reply || isResponse(data)) return data
    const headers = (backstage.replyFor(c, undefined) as Reply).headers
    const asked = offered(c)
    let chosen: string | undefined
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i]!.toLowerCase() === 'sec-websocket-protocol') chosen = headers[i + 1]
    }
    if (chosen === undefined && handler.protocols !== undefined) {
      chosen = handler.protocols.find((p) => asked.includes(p))
      if (chosen !== undefined) headers.push('sec-websocket-protocol', chosen)
    }
    if (chosen !== undefined && !asked.includes(chosen)) {
      throw new Error(`${route.path}: subprotocol "${chosen}" was not offered by the client (offered: ${asked.join(', ') || 'none'})`)
    }
    const pending: PendingSocket = {
      route,
      init: {
        data,
        // A route without parameters shares one empty object (an object less per idle socket).
        params: (hasParams ? { ...c.params } : NO_PARAMS) as Params<string>,
        remoteAddress: c.req.remoteAddress,
      },
    }
    return new UpgradeReply(headers, pending)
  }
  const upgrade = handler.upgrade
  if (upgrade === undefined) return (c) => accept(c, undefined)
  return (c) => {
    const data = upgrade(c)
    return data instanceof Promise ? data.then((d) => accept(c, d)) : accept(c, data)
  }
}
