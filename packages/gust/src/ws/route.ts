/**
 * `app.ws()` routes: the handlers and options a route takes, checked once, and the handler that runs through
 * middleware like any request and accepts the handshake.
 * @module
 */
import type { Context } from '../context.js'
import { replyFor } from '../context.js'
import { isToken, Reply, UpgradeReply } from '../reply.js'
import type { Handler } from '../compose.js'
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
   * `c.text(...)` reply) to refuse; anything else becomes `ws.data`. Headers set with `c.header()` go on the
   * 101 (a `Sec-WebSocket-Protocol` among those offered chooses the subprotocol; check `Origin` here).
   */
  upgrade?: (c: Context<P>) => Data | Response | Reply | Promise<Data | Response | Reply>
  /** The socket is open. */
  open?: (ws: ServerWebSocket<Data, P>) => unknown
  /** A whole message: a string for a text frame, a `Buffer` for a binary one. */
  message?: (ws: ServerWebSocket<Data, P>, message: string | Buffer) => unknown
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
  }
}

const HANDLERS = ['upgrade', 'open', 'message', 'close', 'drain'] as const
const KNOWN = [...HANDLERS, 'protocols', 'maxPayloadLength', 'idleTimeout', 'backpressureLimit', 'closeOnBackpressureLimit', 'sendPings', 'publishToSelf']

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
    },
  }
}

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
  const accept = (c: Context<any>, data: unknown): HandlerResult => {
    if (data instanceof Response || data instanceof Reply) return data
    const headers = (replyFor(c, undefined) as Reply).headers
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
        params: { ...c.params } as Params<string>,
        remoteAddress: c.req.remoteAddress,
        publishToSelf: handler.publishToSelf === true,
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
