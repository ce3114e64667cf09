/**
 * A WebSocket client over a raw socket, for tests that need what browsers' `WebSocket` hides: fragments,
 * pings, bad frames, pausing reads, and the exact close frames. Works the same on Node 20, Node 26 and Bun.
 */
import { randomBytes } from 'node:crypto'
import type http2 from 'node:http2'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import tls from 'node:tls'
import zlib from 'node:zlib'

export interface Frame {
  fin: boolean
  /** RSV1: the first frame of a compressed message (permessage-deflate). */
  rsv1: boolean
  op: number
  data: Buffer
}

/** What a sync flush ends with, dropped from a compressed message on the wire (RFC 7692 §7.2.1). */
const TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff])

/** A message compressed as a permessage-deflate client sends it (no context kept): the payload of a frame with RSV1. */
export function deflated(data: Buffer | string): Buffer {
  const out = zlib.deflateRawSync(typeof data === 'string' ? Buffer.from(data) : data, { finishFlush: zlib.constants.Z_SYNC_FLUSH })
  if (!out.subarray(-4).equals(TAIL)) throw new Error('a sync flush ends with 00 00 ff ff')
  return out.subarray(0, -4)
}

/** A compressed message's payload inflated, the tail put back. */
export function inflated(payload: Buffer): Buffer {
  return zlib.inflateRawSync(Buffer.concat([payload, TAIL]), { finishFlush: zlib.constants.Z_SYNC_FLUSH })
}

/** A compressed client message in one frame (RSV1 set). */
export function compressedFrame(op: number, data: Buffer | string): Buffer {
  const frame = clientFrame(op, deflated(data))
  frame[0] = frame[0]! | 0x40
  return frame
}

export const TEXT = 1
export const BINARY = 2
export const CLOSE = 8
export const PING = 9
export const PONG = 10

/** Frames a client message (masked, as RFC 6455 requires of clients). */
export function clientFrame(op: number, data: Buffer | string, fin = true): Buffer {
  const payload = typeof data === 'string' ? Buffer.from(data) : data
  const len = payload.length
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10
  const out = Buffer.alloc(head + 4 + len)
  out[0] = (fin ? 0x80 : 0) | op
  if (len < 126) out[1] = 0x80 | len
  else if (len < 65536) {
    out[1] = 0x80 | 126
    out.writeUInt16BE(len, 2)
  } else {
    out[1] = 0x80 | 127
    out.writeBigUInt64BE(BigInt(len), 2)
  }
  const mask = randomBytes(4)
  mask.copy(out, head)
  for (let i = 0; i < len; i++) out[head + 4 + i] = payload[i]! ^ mask[i & 3]!
  return out
}

export function closePayload(code: number, reason = ''): Buffer {
  const out = Buffer.alloc(2 + Buffer.byteLength(reason))
  out.writeUInt16BE(code, 0)
  out.write(reason, 2)
  return out
}

export class WsClient {
  /** The connection; over HTTP/2, the extended CONNECT's stream. */
  readonly socket: net.Socket | Duplex
  /** The response head, lower-cased. */
  head = ''
  #buf: Buffer = Buffer.alloc(0)
  #frames: Frame[] = []
  #waiters: (() => void)[] = []
  ended = false
  /** Answer pings with pongs (default); off to play a dead client. */
  autoPong = true

  constructor(socket: net.Socket | Duplex) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk])
      this.#parse()
    })
    const end = () => {
      this.ended = true
      this.#wake()
    }
    socket.on('close', end)
    socket.on('end', end)
    socket.on('error', end)
  }

  /**
   * Opens a connection (over TLS with `secure`) and sends a handshake; resolves once the response head is in (101
   * or not). Extra headers may be given.
   */
  static open(
    port: number,
    path: string,
    headers: Record<string, string> = {},
    secure?: tls.ConnectionOptions,
  ): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      // Over TLS (`wss:`) with `secure`: the same frames on a TLS socket.
      const socket = secure === undefined ? net.connect(port, '127.0.0.1') : tls.connect({ port, host: '127.0.0.1', ...secure })
      const client = new WsClient(socket)
      socket.once('error', reject)
      const lines = [
        `GET ${path} HTTP/1.1`,
        `host: 127.0.0.1:${port}`,
        'upgrade: websocket',
        'connection: Upgrade',
        'sec-websocket-version: 13',
        `sec-websocket-key: ${randomBytes(16).toString('base64')}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ]
      socket.write(`${lines.join('\r\n')}\r\n\r\n`)
      client.head_().then(() => resolve(client))
      setTimeout(() => reject(new Error(`no handshake answer from ${path}`)), 10_000).unref()
    })
  }

  /**
   * A socket over HTTP/2 (RFC 8441): an extended CONNECT (`:protocol: websocket`) on `session`, once the server
   * has advertised `SETTINGS_ENABLE_CONNECT_PROTOCOL`. Resolves with the response's status and headers; on a
   * 200 the stream carries the socket's frames.
   */
  static async overHttp2(
    session: http2.ClientHttp2Session,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ client: WsClient; status: number; headers: http2.IncomingHttpHeaders }> {
    if (!session.remoteSettings.enableConnectProtocol) {
      await new Promise((resolve) => session.once('remoteSettings', resolve))
    }
    if (!session.remoteSettings.enableConnectProtocol) throw new Error('the server did not advertise SETTINGS_ENABLE_CONNECT_PROTOCOL')
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':path': path, 'sec-websocket-version': '13', ...headers })
    const response = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
      stream.once('response', resolve)
      stream.once('error', reject)
    })
    return { client: new WsClient(stream), status: Number(response[':status']), headers: response }
  }

  #headResolve: (() => void) | undefined

  /** Resolves once the response head is in; frames are read after it. Call before the handshake is sent. */
  head_(): Promise<void> {
    return new Promise((resolve) => (this.#headResolve = resolve))
  }

  get status(): number {
    return Number(this.head.slice(9, 12))
  }

  header(name: string): string | undefined {
    const line = this.head.split('\r\n').find((l) => l.startsWith(`${name.toLowerCase()}:`))
    return line?.slice(name.length + 1).trim()
  }

  #parse(): void {
    if (this.#headResolve !== undefined) {
      const end = this.#buf.indexOf('\r\n\r\n')
      if (end === -1) return
      this.head = this.#buf.toString('latin1', 0, end).toLowerCase()
      this.#buf = this.#buf.subarray(end + 4)
      const resolve = this.#headResolve
      this.#headResolve = undefined
      resolve()
      if (this.status !== 101) return
    }
    for (;;) {
      const b = this.#buf
      if (b.length < 2) break
      let len = b[1]! & 0x7f
      let at = 2
      if (len === 126) {
        if (b.length < 4) break
        len = b.readUInt16BE(2)
        at = 4
      } else if (len === 127) {
        if (b.length < 10) break
        len = Number(b.readBigUInt64BE(2))
        at = 10
      }
      if (b.length < at + len) break
      const frame = { fin: (b[0]! & 0x80) !== 0, rsv1: (b[0]! & 0x40) !== 0, op: b[0]! & 0x0f, data: Buffer.from(b.subarray(at, at + len)) }
      this.#buf = b.subarray(at + len)
      if (frame.op === PING && this.autoPong && !this.socket.destroyed) this.socket.write(clientFrame(PONG, frame.data))
      this.#frames.push(frame)
    }
    this.#wake()
  }

  #wake(): void {
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w()
  }

  /** The next frame, or null once the connection has ended. */
  async next(ms = 10_000): Promise<Frame | null> {
    const deadline = Date.now() + ms
    for (;;) {
      const frame = this.#frames.shift()
      if (frame !== undefined) return frame
      if (this.ended) return null
      if (Date.now() > deadline) throw new Error('timed out waiting for a frame')
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve)
        setTimeout(resolve, 50).unref()
      })
    }
  }

  /** The next frame that is not a ping. */
  async message(ms = 10_000): Promise<Frame | null> {
    for (;;) {
      const f = await this.next(ms)
      if (f === null || f.op !== PING) return f
    }
  }

  send(op: number, data: Buffer | string, fin = true): void {
    this.socket.write(clientFrame(op, data, fin))
  }

  text(s: string): void {
    this.send(TEXT, s)
  }

  close(code = 1000, reason = ''): void {
    this.send(CLOSE, closePayload(code, reason))
  }

  /** Resolves once the server has closed the connection. */
  async ended_(ms = 10_000): Promise<boolean> {
    const deadline = Date.now() + ms
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    return this.ended
  }

  destroy(): void {
    this.socket.destroy()
  }
}

/** A close frame's code and reason. */
export function closeOf(frame: Frame | null): [number, string] {
  if (frame === null || frame.op !== CLOSE) throw new Error(`expected a close frame, got ${frame === null ? 'the end' : `opcode ${frame.op}`}`)
  return frame.data.length < 2 ? [1005, ''] : [frame.data.readUInt16BE(0), frame.data.toString('utf8', 2)]
}
