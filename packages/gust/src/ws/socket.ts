/**
 * `ServerWebSocket`: one open WebSocket, as handlers see it. Every call goes straight to the engine, which owns
 * the frames, the send queue and the topic table, so `send` answers at once with Bun's numbers.
 * @module
 */
import type { BindingServer, Publisher } from '../native/binding.js'
import type { Params } from '../types.js'

/** What a socket may be sent: text, or bytes in any of the usual shapes. */
export type WebSocketData = string | ArrayBuffer | ArrayBufferView

/** A send's word on compression: a boolean, or `undefined` for the route's threshold; throws naming anything else. */
function compressArg(compress: unknown, what: string): boolean | undefined {
  if (compress === undefined || typeof compress === 'boolean') return compress
  throw new TypeError(`${what}: compress must be true, false or left out, got ${String(compress)}`)
}

/** Bytes of a message that is not a string; throws naming what it got. */
export function bytesOf(data: WebSocketData, what: string): Uint8Array {
  if (data instanceof Uint8Array) return data
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  const kind = data === null ? 'null' : typeof data === 'object' ? ((data as object).constructor?.name ?? 'object') : typeof data
  throw new TypeError(`${what}: expected a string, an ArrayBuffer or a typed array, got ${kind}`)
}

const flushers = new WeakMap<Publisher, () => void>()

/**
 * The engine writes what was sent only once told to (one wake of its I/O thread for everything sent in a turn,
 * instead of one per message): this schedules that, once per turn, in a microtask.
 */
export function flusher(binding: Publisher): () => void {
  let touch = flushers.get(binding)
  if (touch === undefined) {
    let scheduled = false
    const flush = () => {
      scheduled = false
      binding.wsFlush()
    }
    touch = () => {
      if (!scheduled) {
        scheduled = true
        queueMicrotask(flush)
      }
    }
    flushers.set(binding, touch)
  }
  return touch
}

/** How a socket is made when it opens; internal. */
export interface SocketInit<Data, P extends string> {
  data: Data
  params: Params<P>
  remoteAddress: string
}

/** What a socket keeps of its route (the whole route, which the hub reads back with `routeOf`). */
export interface SocketRoute {
  readonly handler: { readonly publishToSelf?: boolean }
}

/** A socket's route, as it was given; internal, for the hub. */
export let routeOf: (ws: ServerWebSocket<any, any>) => SocketRoute

const OPEN = 1
const CLOSING = 2
const CLOSED = 3

/**
 * One open WebSocket (Bun's `ServerWebSocket`, on Node and Bun alike).
 *
 * `send` returns the message's length when it was queued behind nothing, `-1` when it was queued behind bytes
 * the client has not read yet (wait for the route's `drain` handler before sending much more), and `0` when it
 * was dropped: the socket is closing or closed, or more than `backpressureLimit` bytes already wait for this
 * client.
 * @example
 * app.ws('/echo', { message(ws, msg) { ws.send(msg) } })
 */
export class ServerWebSocket<Data = undefined, P extends string = string> {
  /** What the route's `upgrade` returned. */
  readonly data: Data
  /** The route's path parameters. */
  readonly params: Params<P>
  /** The client's address (the socket's peer, whatever proxies say). */
  readonly remoteAddress: string
  /** 1 open, 2 closing (a close was asked for), 3 closed. */
  readyState: 1 | 2 | 3 = OPEN
  #id: number
  #binding: BindingServer
  #route: SocketRoute
  #touch: () => void

  static {
    routeOf = (ws) => ws.#route
  }

  /** @internal */
  constructor(binding: BindingServer, id: number, init: SocketInit<Data, P>, route: SocketRoute) {
    this.#binding = binding
    this.#id = id
    this.data = init.data
    this.params = init.params
    this.remoteAddress = init.remoteAddress
    this.#route = route
    this.#touch = flusher(binding)
  }

  /**
   * Sends a text frame for a string, a binary frame for bytes. `compress`, where the client agreed to the route's
   * `perMessageDeflate`: `true` compresses the message, `false` sends it plain, left out it is compressed when
   * it is at least the route's `threshold` (Bun compresses only when asked).
   */
  send(data: WebSocketData, compress?: boolean): number {
    if (typeof data === 'string') return this.sendText(data, compress)
    return this.sendBinary(data, compress)
  }

  /** Sends a text frame (`compress` as for `send`). */
  sendText(text: string, compress?: boolean): number {
    if (typeof text !== 'string') throw new TypeError(`ws.sendText: expected a string, got ${typeof text}`)
    const c = compressArg(compress, 'ws.sendText')
    if (this.readyState !== OPEN) return 0
    this.#touch()
    return this.#binding.wsSendText(this.#id, text, c)
  }

  /** Sends a binary frame (`compress` as for `send`). */
  sendBinary(data: ArrayBuffer | ArrayBufferView, compress?: boolean): number {
    const bytes = bytesOf(data, 'ws.sendBinary')
    const c = compressArg(compress, 'ws.sendBinary')
    if (this.readyState !== OPEN) return 0
    this.#touch()
    return this.#binding.wsSendBinary(this.#id, bytes, c)
  }

  /** Pings the client (at most 125 bytes); its pong keeps the socket from timing out. */
  ping(data: WebSocketData = ''): number {
    const bytes = typeof data === 'string' ? Buffer.from(data) : bytesOf(data, 'ws.ping')
    if (this.readyState !== OPEN) return 0
    this.#touch()
    return this.#binding.wsPing(this.#id, bytes)
  }

  /**
   * Starts the close handshake: the client's reply ends the socket (within 5 s), and the route's `close`
   * handler hears its code. `code` must be one an endpoint may send (1000, 1001–1003, 1007–1014, 3000–4999);
   * `reason` at most 123 bytes.
   */
  close(code = 1000, reason = ''): void {
    if (!Number.isInteger(code)) throw new RangeError(`ws.close: code must be an integer, got ${String(code)}`)
    if (typeof reason !== 'string') throw new TypeError(`ws.close: reason must be a string, got ${typeof reason}`)
    if (this.readyState !== OPEN) return
    this.#binding.wsClose(this.#id, code, reason)
    this.#touch()
    this.readyState = CLOSING
  }

  /** Drops the connection at once, without the close handshake (the `close` handler hears 1006). */
  terminate(): void {
    if (this.readyState === CLOSED) return
    this.#binding.wsTerminate(this.#id)
    this.#touch()
    this.readyState = CLOSING
  }

  /** Subscribes to a topic: `publish` to it reaches this socket. */
  subscribe(topic: string): void {
    if (typeof topic !== 'string') throw new TypeError(`ws.subscribe: topic must be a string, got ${typeof topic}`)
    if (this.readyState !== CLOSED) this.#binding.wsSubscribe(this.#id, topic)
  }

  unsubscribe(topic: string): void {
    if (typeof topic !== 'string') throw new TypeError(`ws.unsubscribe: topic must be a string, got ${typeof topic}`)
    if (this.readyState !== CLOSED) this.#binding.wsUnsubscribe(this.#id, topic)
  }

  isSubscribed(topic: string): boolean {
    return this.readyState !== CLOSED && this.#binding.wsIsSubscribed(this.#id, String(topic))
  }

  /** The topics this socket subscribes to. */
  get subscriptions(): string[] {
    return this.readyState === CLOSED ? [] : this.#binding.wsSubscriptions(this.#id)
  }

  /**
   * Sends to every subscriber of `topic`, this socket excluded unless the route set `publishToSelf`. The frame
   * is built once, in Rust, for all of them (and compressed once for those that agreed to shared compression;
   * `compress` as for `send`). Returns how many sockets it reached.
   */
  publish(topic: string, data: WebSocketData, compress?: boolean): number {
    const self = this.#route.handler.publishToSelf === true
    return publish(this.#binding, topic, data, self ? undefined : this.#id, compress)
  }

  publishText(topic: string, text: string, compress?: boolean): number {
    if (typeof text !== 'string') throw new TypeError(`ws.publishText: expected a string, got ${typeof text}`)
    return this.publish(topic, text, compress)
  }

  publishBinary(topic: string, data: ArrayBuffer | ArrayBufferView, compress?: boolean): number {
    return this.publish(topic, bytesOf(data, 'ws.publishBinary'), compress)
  }

  /** Bytes queued for this client that it has not read yet. */
  getBufferedAmount(): number {
    return this.readyState === CLOSED ? 0 : this.#binding.wsBuffered(this.#id)
  }

  /** Runs `fn` (Bun batches its sends; here every send is already queued and written once per turn). */
  cork<T>(fn: (ws: this) => T): T {
    return fn(this)
  }

  /** @internal The engine closed it. */
  closed(): void {
    this.readyState = CLOSED
  }
}

/** Publishes through the engine; `exclude` is a socket id; `compress` as for `send`. */
export function publish(binding: Publisher, topic: string, data: WebSocketData, exclude?: number, compress?: boolean): number {
  if (typeof topic !== 'string') throw new TypeError(`publish: topic must be a string, got ${typeof topic}`)
  const c = compressArg(compress, 'publish')
  flusher(binding)()
  if (typeof data === 'string') return binding.publishText(topic, data, exclude, c)
  return binding.publishBinary(topic, bytesOf(data, 'publish'), exclude, c)
}
