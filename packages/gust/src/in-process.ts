/**
 * In-process requests: a Web `Request` written as HTTP/1.1 into a connection without a socket
 * (`BindingServer.connect`), and the bytes the engine answers read back into a Web `Response`. The engine
 * serves that connection exactly as an accepted TCP one, so `app.request()` shows what a client would get:
 * routing, 404/405/HEAD/OPTIONS, turbo values, limits, timeouts, framing, streamed bodies.
 *
 * Cost: a request line, headers and body are written and parsed once each way; meant for tests, not hot paths.
 * @module
 */
import type { BindingConnection, BindingServer } from './native/binding.js'

const DATA = 0
const END = 1
const WRITTEN = 2

/** Body bytes gathered before choosing content-length framing over chunked, as fetch does for known sizes. */
const INLINE_BODY = 64 * 1024
/** Writes the engine has not taken yet before the sender waits: a request body streams with bounded memory. */
const MAX_UNTAKEN = 4
const EMPTY = Buffer.alloc(0)
const CRLF = Buffer.from('\r\n')

/**
 * The engine's callbacks for in-memory connections never keep the event loop alive (a response nobody reads must
 * not hang the process); whoever waits on one does, through this one timer.
 */
let waiting = 0
let keepAlive: ReturnType<typeof setInterval> | undefined
function hold(): void {
  if (waiting++ === 0) keepAlive = setInterval(() => {}, 1 << 30)
}
function release(): void {
  if (--waiting === 0) {
    clearInterval(keepAlive)
    keepAlive = undefined
  }
}

/** An engine in-process requests go to: its binding, and how many of its batches JavaScript has received. */
export interface Engine {
  binding: BindingServer
  received: () => number
}

/** How long a closed exchange may keep the loop alive for the engine's last word (a cancel) to arrive. */
const LINGER_MS = 1000

/**
 * After a connection closed before its answer was complete, the engine still has something to tell the handler
 * (its signal aborts): the loop stays up until a batch sent after the close has been received, or `LINGER_MS`.
 */
function linger(engine: Engine): void {
  const sentAtClose = engine.binding.batchesSent
  const started = Date.now()
  hold()
  const check = () => {
    const sent = engine.binding.batchesSent
    if ((sent !== sentAtClose && sent === engine.received()) || Date.now() - started > LINGER_MS) release()
    else setTimeout(check, 5)
  }
  setTimeout(check, 5)
}

/** The client end of one in-memory connection: what the engine sent and not yet consumed, and flow control. */
class Pipe {
  readonly #conn: BindingConnection
  /** Received and not yet consumed. */
  buf: Buffer = EMPTY
  #ended = false
  #failure: unknown
  #closed = false
  #onData: (() => void) | undefined
  #untaken = 0
  #onTaken: (() => void) | undefined

  constructor(binding: BindingServer) {
    // The engine's bytes are a `Buffer` on both runtimes (declared `Uint8Array` so the types need no @types/node).
    this.#conn = binding.connect((kind, bytes) => this.#event(kind, (bytes as Buffer | undefined) ?? null))
  }

  #event(kind: number, bytes: Buffer | null): void {
    if (kind === WRITTEN) {
      this.#untaken--
      this.#wake('taken')
      return
    }
    if (kind === DATA && bytes !== null) {
      this.buf = this.buf.length === 0 ? bytes : Buffer.concat([this.buf, bytes])
    } else if (kind === END) {
      this.#ended = true
      this.#wake('taken')
    }
    this.#wake('data')
  }

  #wake(which: 'data' | 'taken'): void {
    const waiter = which === 'data' ? this.#onData : this.#onTaken
    if (which === 'data') this.#onData = undefined
    else this.#onTaken = undefined
    waiter?.()
  }

  /** Reads more of the answer into `buf`; false once the engine closed the connection. */
  more(): Promise<boolean> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    if (this.#ended || this.#closed) return Promise.resolve(false)
    hold()
    return new Promise<boolean>((resolve, reject) => {
      this.#onData = () => {
        release()
        if (this.#failure !== undefined) reject(this.#failure)
        else resolve(!this.#ended)
      }
      this.#conn.read()
    })
  }

  /** Takes `n` bytes from the front of `buf`. */
  take(n: number): Buffer {
    const out = this.buf.subarray(0, n)
    this.buf = n === this.buf.length ? EMPTY : this.buf.subarray(n)
    return out
  }

  /** The next CRLF-terminated line, without its CRLF; a closed connection before it is an error. */
  async line(): Promise<string> {
    for (;;) {
      const at = this.buf.indexOf(CRLF)
      if (at !== -1) {
        const line = this.buf.toString('latin1', 0, at)
        this.take(at + 2)
        return line
      }
      if (!(await this.more())) throw truncated()
    }
  }

  /** Sends bytes, waiting while the engine has not taken the last few (it reads a body only as asked to). */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.#closed || this.#ended) return
    this.#conn.write(bytes)
    if (++this.#untaken < MAX_UNTAKEN) return
    hold()
    try {
      await new Promise<void>((resolve) => (this.#onTaken = resolve))
    } finally {
      release()
    }
  }

  /** Closes the connection (the engine sees a client leave); a `reason` fails whoever waits on it. */
  close(reason?: unknown): void {
    if (this.#closed) return
    this.#closed = true
    if (reason !== undefined) this.#failure = reason
    this.#conn.close()
    this.#wake('data')
    this.#wake('taken')
  }
}

function truncated(): TypeError {
  return new TypeError('in-process request: the server closed the connection before the response was complete')
}

/** Answers `request` through a new in-memory connection to `engine`. */
export async function exchange(engine: Engine, request: Request): Promise<Response> {
  const signal = request.signal
  signal.throwIfAborted()
  const pipe = new Pipe(engine.binding)
  const onAbort = () => {
    pipe.close(signal.reason)
    linger(engine)
  }
  signal.addEventListener('abort', onAbort, { once: true })
  const done = () => {
    signal.removeEventListener('abort', onAbort)
    pipe.close()
  }
  send(pipe, request).catch((err: unknown) => pipe.close(err))
  try {
    let head: Head
    do head = await readHead(pipe)
    while (head.status < 200)
    const headers = new Headers()
    for (let i = 0; i < head.headers.length; i += 2) headers.append(head.headers[i]!, head.headers[i + 1]!)
    const init = { status: head.status, statusText: head.statusText, headers }
    if (request.method === 'HEAD' || head.status === 204 || head.status === 304) {
      done()
      return new Response(null, init)
    }
    const chunked = /(?:^|,)\s*chunked\s*$/i.test(headers.get('transfer-encoding') ?? '')
    const length = headers.get('content-length')
    if (!chunked && length !== null) {
      // The common case: a whole body that already arrived is handed over as it is, with no stream.
      const n = Number(length)
      while (pipe.buf.length < n) if (!(await pipe.more())) throw truncated()
      const body = new Uint8Array(pipe.take(n))
      done()
      return new Response(body, init)
    }
    const chunks = chunked ? dechunk(pipe) : untilEnd(pipe)
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await chunks.next()
          if (next.done) {
            done()
            controller.close()
          } else {
            controller.enqueue(next.value)
          }
        } catch (err) {
          done()
          controller.error(err)
        }
      },
      cancel() {
        done()
        linger(engine)
      },
    })
    return new Response(body, init)
  } catch (err) {
    done()
    throw err
  }
}

interface Head {
  status: number
  statusText: string
  /** Name, value, … */
  headers: string[]
}

async function readHead(pipe: Pipe): Promise<Head> {
  const status = (await pipe.line()).match(/^HTTP\/1\.[01] (\d{3}) ?(.*)$/)
  if (status === null) throw new TypeError('in-process request: the server sent something that is not HTTP/1.1')
  const headers: string[] = []
  for (let line = await pipe.line(); line !== ''; line = await pipe.line()) {
    const colon = line.indexOf(':')
    headers.push(line.slice(0, colon), line.slice(colon + 1).trim())
  }
  return { status: Number(status[1]), statusText: status[2]!, headers }
}

/** A chunked body's data, chunk by chunk (trailers are read and dropped, as fetch does). */
async function* dechunk(pipe: Pipe): AsyncGenerator<Uint8Array> {
  for (;;) {
    const size = parseInt((await pipe.line()).split(';', 1)[0]!, 16)
    if (!(size >= 0)) throw new TypeError('in-process request: malformed chunked body')
    if (size === 0) {
      while ((await pipe.line()) !== '') {}
      return
    }
    for (let left = size; left > 0; ) {
      if (pipe.buf.length === 0 && !(await pipe.more())) throw truncated()
      const piece = pipe.take(Math.min(left, pipe.buf.length))
      left -= piece.length
      yield new Uint8Array(piece)
    }
    if ((await pipe.line()) !== '') throw new TypeError('in-process request: malformed chunked body')
  }
}

/** A body delimited by the end of the connection. */
async function* untilEnd(pipe: Pipe): AsyncGenerator<Uint8Array> {
  for (;;) {
    if (pipe.buf.length > 0) yield new Uint8Array(pipe.take(pipe.buf.length))
    if (!(await pipe.more())) return
  }
}

/**
 * Writes the request (leaving the connection open, as a keep-alive client does, until the answer is read): its head, then its body framed as a client would (content-length when it is small enough
 * to gather, chunked otherwise), or as the caller framed it when they set `content-length` or
 * `transfer-encoding` themselves (to test how the engine treats such framing).
 */
async function send(pipe: Pipe, request: Request): Promise<void> {
  const url = new URL(request.url)
  const lines = [`${request.method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${request.headers.get('host') ?? url.host}`]
  for (const [name, value] of request.headers) if (name !== 'host') lines.push(`${name}: ${value}`)
  const framed = request.headers.has('content-length') || request.headers.has('transfer-encoding')
  const head = (extra?: string) => Buffer.from(`${lines.join('\r\n')}\r\n${extra === undefined ? '' : `${extra}\r\n`}\r\n`, 'latin1')
  if (request.body === null) {
    const needsLength = !framed && request.method !== 'GET' && request.method !== 'HEAD'
    return pipe.write(head(needsLength ? 'content-length: 0' : undefined))
  }
  const reader = request.body.getReader()
  if (framed) {
    await pipe.write(head())
    for (let next = await reader.read(); !next.done; next = await reader.read()) await pipe.write(next.value)
    return
  }
  const gathered: Uint8Array[] = []
  let size = 0
  let next = await reader.read()
  for (; !next.done && size <= INLINE_BODY; next = await reader.read()) {
    gathered.push(next.value)
    size += next.value.byteLength
  }
  if (next.done) {
    await pipe.write(head(`content-length: ${size}`))
    for (const chunk of gathered) await pipe.write(chunk)
    return
  }
  await pipe.write(head('transfer-encoding: chunked'))
  const chunk = async (bytes: Uint8Array) => {
    if (bytes.byteLength === 0) return
    await pipe.write(Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`, 'latin1'), bytes, CRLF]))
  }
  for (const bytes of gathered) await chunk(bytes)
  for (; !next.done; next = await reader.read()) await chunk(next.value)
  await pipe.write(Buffer.from('0\r\n\r\n', 'latin1'))
}
