/**
 * The WebSocket events of a server's batches, turned into handler calls: a socket opens for the request whose
 * handshake was accepted, then hears its messages, drains and close, in the order the engine saw them.
 * @module
 */
import type { TextBytes } from '../bytes.js'
import type { BindingServer } from '../native/binding.js'
import type { PendingSocket, WsRoute } from './route.js'
import { routeOf, ServerWebSocket } from './socket.js'

/** An open socket's route: the hub gave it the whole route, which the socket keeps as it was given. */
const routeOfOpen = (ws: ServerWebSocket<any, any>): WsRoute => routeOf(ws) as WsRoute

/** Handlers may be async: a rejection is logged, as a throw is, and never reaches another socket. */
function guarded(route: WsRoute, name: string, run: () => unknown): void {
  const report = (err: unknown) => console.error(`gust: the WebSocket ${name} handler of ${route.path} threw`, err)
  try {
    const out = run()
    if (out instanceof Promise) out.catch(report)
  } catch (err) {
    report(err)
  }
}

export class WsHub {
  #binding: BindingServer | undefined
  /** Accepted handshakes whose socket has not opened yet, by request id. */
  readonly #pending = new Map<number, PendingSocket>()
  /** Open sockets by id: the socket itself, which knows its route (no record beside it per idle socket). */
  readonly #open = new Map<number, ServerWebSocket<any, any>>()

  attach(binding: BindingServer): void {
    this.#binding = binding
  }

  /** The handshake of request `id` was accepted; its socket opens with the next events. */
  expect(id: number, pending: PendingSocket): void {
    this.#pending.set(id, pending)
  }

  /** The engine refused request `id`'s upgrade answer (sent 500 instead): no socket will open for it. */
  forget(id: number): void {
    this.#pending.delete(id)
  }

  opened(socket: number, request: number, failed: boolean): void {
    const pending = this.#pending.get(request)
    this.#pending.delete(request)
    if (pending === undefined || failed || this.#binding === undefined) return
    const route = pending.route
    const ws = new ServerWebSocket(this.#binding, socket, pending.init, route)
    this.#open.set(socket, ws)
    const open = route.handler.open
    if (open !== undefined) guarded(route, 'open', () => open(ws))
  }

  /** A message, at `start` in `buf` for `length` bytes: decoded to a string, or copied out as a Buffer. */
  message(socket: number, binary: boolean, buf: TextBytes, start: number, length: number): void {
    const ws = this.#open.get(socket)
    if (ws === undefined) return
    const route = routeOfOpen(ws)
    const message = route.handler.message
    if (message === undefined) return
    const data = binary ? Buffer.from(buf.subarray(start, start + length)) : buf.toString('utf8', start, start + length)
    guarded(route, 'message', () => message(ws, data))
  }

  closed(socket: number, code: number, buf: TextBytes, start: number, length: number): void {
    const ws = this.#open.get(socket)
    if (ws === undefined) return
    this.#open.delete(socket)
    ws.closed()
    const route = routeOfOpen(ws)
    const close = route.handler.close
    if (close !== undefined) {
      const reason = buf.toString('utf8', start, start + length)
      guarded(route, 'close', () => close(ws, code, reason))
    }
  }

  drained(socket: number): void {
    const ws = this.#open.get(socket)
    if (ws === undefined) return
    const route = routeOfOpen(ws)
    const drain = route.handler.drain
    if (drain !== undefined) guarded(route, 'drain', () => drain(ws))
  }
}
