/**
 * The writers behind `c.stream()` and `c.sse()`: a handler writes, the engine takes, and each `write` settles
 * once its chunk was taken, so a producer that awaits its writes runs no further ahead of a slow client than
 * the engine's small per-response buffer.
 * @module
 */
import { type Chunk, toChunk } from './source.js'

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
 * Where a writer's chunks go as they are written: the engine's dispatcher, which copies each into its answer
 * batch. Cost per chunk: one call, no promise (pulling with a `read()` cost two and a turn of the microtask queue,
 * which is why writers push and only sources the dispatcher does not fill, streams and iterators, are pulled).
 */
export interface ChunkSink {
  /** Takes `chunk` now; false when it wants no more until the writer's `resume()`. */
  take(chunk: Chunk): boolean
  /**
   * After a `take`: undefined when the chunk was copied, else a promise that settles once the engine has the
   * bytes (large chunks are lent until their batch is handed over, which spares a copy of every byte); the
   * chunk's write settles with it.
   */
  lent(): Promise<void> | undefined
  /** The producer is done and every chunk was taken. */
  end(): void
  /** The producer failed after the chunks already taken. */
  fail(error: unknown): void
}

/** What a write taken at once returns: one settled promise, shared (awaiting it allocates nothing more). */
const TAKEN: Promise<void> = Promise.resolve()

/**
 * The writing end of a streamed response (`c.stream(async (s) => { await s.write('…') })`).
 * After the client has gone, writes are dropped and settle at once; `aborted` tells, and `onAbort` callbacks run.
 */
export class StreamWriter {
  /** Chunks written while the consumer could not take them, with their writes unsettled. */
  #queue: Chunk[] = []
  /** Settles the write of each queued chunk, in order, when the engine takes it. */
  #settle: (() => void)[] = []
  /** The consumer that takes chunks as they are written (see `attach`), and whether it takes them now. */
  #sink: ChunkSink | undefined
  #flowing = false
  /** The sink heard the end or the failure. */
  #told = false
  #closed = false
  #failure: { error: unknown } | undefined
  #aborted = false
  #onAbort: (() => void)[] = []
  #start: (() => void) | undefined

  /**
   * `start` runs when the engine attaches: a reply that is never sent (replaced by a middleware, refused) never
   * starts its producer; internal.
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
   * slows the producer down instead of filling memory. Bytes are not copied before then: change a buffer only
   * once its write has settled (as with Node's `res.write`).
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
    const sink = this.#sink
    if (sink !== undefined) {
      // Taken now, and copied by the time this settles, so the producer may reuse its buffer then.
      if (this.#flowing && this.#queue.length === 0) {
        try {
          this.#flowing = sink.take(c)
        } catch (err) {
          return Promise.reject(err)
        }
        return sink.lent() ?? TAKEN
      }
      // Not copied: its write settles only once the sink took it, and until then its producer waits.
      return new Promise((resolve) => {
        this.#queue.push(c)
        this.#settle.push(resolve)
      })
    }
    // Written before the engine attached (a writer made by hand): kept, copied, until it does.
    return new Promise((resolve) => {
      this.#queue.push(typeof c === 'string' ? c : new Uint8Array(c))
      this.#settle.push(resolve)
    })
  }

  /**
   * The engine's side: from now on `sink` takes each chunk as it is written, and the producer starts. When `take` returns false, writes wait until `resume()`; internal.
   */
  attach(sink: ChunkSink): void {
    this.#sink = sink
    this.#flowing = true
    const start = this.#start
    this.#start = undefined
    start?.()
    this.#deliver()
  }

  /**
   * The engine's side: the head went out and the body streams on (it was not finished within the handler's
   * turn, so it was not sent whole); internal.
   */
  streaming(): void {}

  /** The engine's side: the sink can take chunks again; waiting writes are taken (and settle) in order. */
  resume(): void {
    if (this.#sink === undefined || this.#aborted) return
    this.#flowing = true
    this.#deliver()
  }

  /** Hands queued chunks to the sink while it takes them, then the end or the failure once all are taken. */
  #deliver(): void {
    const sink = this.#sink!
    while (this.#flowing && this.#queue.length > 0) {
      // Both taken off first: taking may cancel the stream, which settles what is still queued.
      const chunk = this.#queue.shift()!
      const settle = this.#settle.shift()!
      this.#flowing = sink.take(chunk)
      const lent = sink.lent()
      if (lent === undefined) settle()
      else void lent.then(settle)
    }
    if (this.#queue.length === 0 && this.#closed && !this.#told && !this.#aborted) {
      this.#told = true
      const failure = this.#failure
      if (failure !== undefined) sink.fail(failure.error)
      else sink.end()
    }
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
    if (this.#sink !== undefined) this.#deliver()
  }

  /** The producer failed: the response is cut off after what was already sent; internal. */
  fail(error: unknown): void {
    if (this.#closed || this.#aborted) return
    this.#closed = true
    this.#failure = { error }
    // Chunks already written still go out first, then the failure.
    if (this.#sink !== undefined) this.#deliver()
  }

  /** The engine's side: the response will not complete; pending and later writes settle at once. */
  cancel(): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#queue.length = 0
    for (const settle of this.#settle.splice(0)) settle()
    for (const callback of this.#onAbort.splice(0)) runGuarded(callback)
  }
}

/** The writing end of a server-sent events response (`c.sse(async (s) => { await s.writeSSE({ data }) })`). */
export class SSEWriter extends StreamWriter {
  #every: number
  #keepAlive: ReturnType<typeof setInterval> | undefined

  /** `keepAlive`: milliseconds between keep-alive comments, 0 for none; `start` as for `StreamWriter`. */
  constructor(keepAlive = 0, start?: () => void) {
    super(start)
    this.#every = keepAlive
  }

  /**
   * Keep-alive comments start once the events stream on: a feed finished within its handler's turn goes out
   * whole and never needs them (a timer made and cleared per such response cost up to a tenth of its CPU).
   */
  override streaming(): void {
    if (this.#every > 0 && this.#keepAlive === undefined && !this.closed && !this.aborted) {
      this.#keepAlive = setInterval(() => {
        this.comment('keep-alive').catch(() => {})
      }, this.#every)
      // A stream waiting on its client must not keep a process alive that is otherwise done.
      this.#keepAlive.unref?.()
    }
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
