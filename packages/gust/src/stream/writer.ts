/**
 * The writers behind `c.stream()` and `c.sse()`: a handler writes, the engine takes, and each `write` settles
 * once its chunk was taken, so a producer that awaits its writes runs no further ahead of a slow client than
 * the engine's small per-response buffer.
 * @module
 */
import { type BodySource, type Chunk, toChunk } from './source.js'

/** One server-sent event. */
export interface SSEMessage {
  /** The payload; several lines become several `data:` lines, joined back by the client. */
  data: string
  /** The event type (`addEventListener(event, …)` on the client); `message` when absent. */
  event?: string
  /** The id the client sends back as `Last-Event-ID` when it reconnects. */
  id?: string
  /** How long the client waits before reconnecting, in milliseconds. */
  retry?: number
}

/**
 * The writing end of a streamed response (`c.stream(async (s) => { await s.write('…') })`).
 * After the client has gone, writes are dropped and settle at once; `aborted` tells, and `onAbort` callbacks run.
 */
export class StreamWriter implements BodySource {
  #queue: Chunk[] = []
  /** Settles the write of each queued chunk, in order, when the engine takes it. */
  #settle: (() => void)[] = []
  #reader: { resolve: (c: Chunk | null) => void; reject: (e: unknown) => void } | undefined
  #closed = false
  #failure: { error: unknown } | undefined
  #aborted = false
  #onAbort: (() => void)[] = []
  #start: (() => void) | undefined

  /**
   * `start` runs when the engine first reads: a reply that is never sent (replaced by a middleware, refused)
   * never starts its producer; internal.
   */
  constructor(start?: () => void) {
    this.#start = start
  }

  /** Whether the client went away (or the response was refused) before the stream ended. */
  get aborted(): boolean {
    return this.#aborted
  }

  /** Whether `close()` was called (or the producer failed). */
  get closed(): boolean {
    return this.#closed
  }

  /**
   * Sends a chunk (text as UTF-8, or bytes). Settles when the engine has taken it: await it, and a slow client
   * slows the producer down instead of filling memory.
   */
  write(chunk: string | Uint8Array | ArrayBuffer | ArrayBufferView): Promise<void> {
    if (this.#aborted) return Promise.resolve()
    if (this.#closed) return Promise.reject(new Error('write() after close(): the stream has ended'))
    let c: Chunk
    try {
      c = toChunk(chunk)
    } catch (err) {
      return Promise.reject(err)
    }
    if ((typeof c === 'string' ? c.length : c.byteLength) === 0) return Promise.resolve()
    // Not copied here: the bytes are copied when they enter the answer batch, before this write settles (the
    // dispatcher takes a chunk in the microtask its read resolves in), so a producer may reuse its buffer.
    const reader = this.#reader
    if (reader !== undefined) {
      this.#reader = undefined
      reader.resolve(c)
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      this.#queue.push(c)
      this.#settle.push(resolve)
    })
  }

  /** Sends a line of text (a `\n` is added). */
  writeln(text: string): Promise<void> {
    return this.write(`${text}\n`)
  }

  /** Waits `ms` milliseconds (for pacing a stream). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms))
  }

  /** Runs `callback` if the client goes away before the stream ends (at once if it already has). */
  onAbort(callback: () => void): void {
    if (this.#aborted) runGuarded(callback)
    else this.#onAbort.push(callback)
  }

  /** Ends the stream once everything written has been sent. The callback's return does the same. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    if (this.#queue.length === 0) this.#takeReader()?.resolve(null)
  }

  /** The producer failed: the response is cut off after what was already sent; internal. */
  fail(error: unknown): void {
    if (this.#closed || this.#aborted) return
    this.#closed = true
    this.#failure = { error }
    // Chunks already written still go out first (read() drains the queue before it rejects).
    if (this.#queue.length === 0) this.#takeReader()?.reject(error)
  }

  /** The engine's side: the next chunk, `null` at the end; rejects if the producer failed. */
  read(): Promise<Chunk | null> {
    const start = this.#start
    if (start !== undefined) {
      this.#start = undefined
      start()
    }
    if (this.#queue.length > 0) {
      this.#settle.shift()!()
      return Promise.resolve(this.#queue.shift()!)
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error)
    if (this.#closed || this.#aborted) return Promise.resolve(null)
    return new Promise((resolve, reject) => {
      this.#reader = { resolve, reject }
    })
  }

  /** The engine's side: the response will not complete; pending and later writes settle at once. */
  cancel(): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#queue.length = 0
    for (const settle of this.#settle.splice(0)) settle()
    this.#takeReader()?.resolve(null)
    for (const callback of this.#onAbort.splice(0)) runGuarded(callback)
  }

  #takeReader() {
    const reader = this.#reader
    this.#reader = undefined
    return reader
  }
}

/** The writing end of a server-sent events response (`c.sse(async (s) => { await s.writeSSE({ data }) })`). */
export class SSEWriter extends StreamWriter {
  #keepAlive: ReturnType<typeof setInterval> | undefined

  /** `keepAlive`: milliseconds between keep-alive comments, 0 for none; `start` as for `StreamWriter`. */
  constructor(keepAlive = 0, start?: () => void) {
    super(() => {
      if (keepAlive > 0 && !this.closed && !this.aborted) {
        this.#keepAlive = setInterval(() => {
          this.comment('keep-alive').catch(() => {})
        }, keepAlive)
        // A stream waiting on its client must not keep a process alive that is otherwise done.
        this.#keepAlive.unref?.()
      }
      start?.()
    })
  }

  override close(): void {
    clearInterval(this.#keepAlive)
    super.close()
  }

  override fail(error: unknown): void {
    clearInterval(this.#keepAlive)
    super.fail(error)
  }

  override cancel(): void {
    clearInterval(this.#keepAlive)
    super.cancel()
  }

  /** Sends one event, framed as the EventSource format requires, and flushed at once. */
  writeSSE(message: SSEMessage): Promise<void> {
    let frame: string
    try {
      frame = formatSSE(message)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.write(frame)
  }

  /** Sends a comment line (`: text`), which clients ignore: a keep-alive, or a note for someone reading raw. */
  comment(text: string): Promise<void> {
    return this.write(`: ${oneLine('comment', text)}\n\n`)
  }
}

/** The EventSource wire format of one event. Throws on a field that would break the framing. */
export function formatSSE(message: SSEMessage): string {
  if (message === null || typeof message !== 'object') throw new TypeError('writeSSE() takes { data, event?, id?, retry? }')
  let out = ''
  if (message.event !== undefined) out += `event: ${oneLine('event', message.event)}\n`
  if (message.id !== undefined) {
    const id = oneLine('id', message.id)
    if (id.includes('\0')) throw new TypeError('An SSE id cannot contain NUL')
    out += `id: ${id}\n`
  }
  if (message.retry !== undefined) {
    if (!Number.isInteger(message.retry) || message.retry < 0) {
      throw new RangeError(`An SSE retry must be a whole number of milliseconds, got ${String(message.retry)}`)
    }
    out += `retry: ${message.retry}\n`
  }
  const data = typeof message.data === 'string' ? message.data : String(message.data)
  // One line, the usual event: no split (a regular expression and an array per event on a hot path).
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${out}data: ${data}\n\n`
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`
  return `${out}\n`
}

function oneLine(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`An SSE ${field} must be a string, got ${typeof value}`)
  if (/[\r\n]/.test(value)) throw new TypeError(`An SSE ${field} cannot contain a line break: ${JSON.stringify(value)}`)
  return value
}

function runGuarded(callback: () => void): void {
  try {
    const out = callback() as unknown
    if (out instanceof Promise) out.catch((err) => console.error('gust: an onAbort callback failed', err))
  } catch (err) {
    console.error('gust: an onAbort callback failed', err)
  }
}
