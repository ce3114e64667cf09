/**
 * Buffered log output: lines gathered during a turn of the event loop go out in one write, at the next turn or
 * once 64 KiB wait. One write per turn instead of one per request (pino's default destination writes per line)
 * is most of what makes `logger({ format: 'json' })` cheap.
 *
 * Memory stays bounded when the reader is slow (a log shipper behind a pipe): `process.stdout` / `stderr` and
 * file paths are written synchronously, as pino's default destination is, so nothing queues behind them (a
 * write that cannot go on for a second is dropped and counted); any other stream's backpressure is honoured,
 * lines waiting while it drains being capped at 16 MiB, beyond which they are dropped and counted. Whatever
 * waits at exit is written synchronously where the destination has a file descriptor.
 * @module
 */
import { builtin } from '../builtins.js'

/**
 * Where `logger()` writes its lines: a stream (`process.stdout`, the default; `process.stderr`; a pino or
 * sonic-boom destination), a function given chunks of whole lines (each ending in `\n`), or the path of a file
 * to append to (opened once, written synchronously: nothing is lost when the process exits).
 * @example
 * app.use(logger({ format: 'json', destination: process.stderr }))
 */
export type LogDestination = { write(chunk: string): unknown } | ((chunk: string) => void) | string

/** Bytes (UTF-16 units) gathered before a write is made without waiting for the turn to end. */
const MAX_BUFFER = 64 * 1024
/** Lines kept while a stream destination drains; beyond, new lines are dropped (and counted). */
const MAX_PENDING = 16 * 1024 * 1024
/** How long a synchronous write waits for a full pipe (EAGAIN) before it drops its chunk. */
const STALL_LIMIT_MS = 1000

/** Sinks with lines waiting, written on `exit` (a `process.exit()` right after a request included). */
const waiting = new Set<LogSink>()
let exitHooked = false

function flushAll(): void {
  for (const sink of waiting) sink.flush(true)
}

/** How a sink writes: `write` returns false when the destination asked to wait for `onDrain`. */
export interface Writer {
  write(chunk: string): boolean
  /** Calls `resume` once the destination takes writes again (streams only). */
  onDrain?(resume: () => void): void
  /** Writes synchronously at exit, where the destination allows it. */
  writeAtExit?(chunk: string): void
}

let sleeper: Int32Array | undefined

/**
 * Writes all of `chunk` to `fd`. A non-blocking pipe that is full answers EAGAIN: wait a millisecond and retry,
 * as sonic-boom does, for at most `STALL_LIMIT_MS`; then the rest is dropped with an error (reported once).
 */
function writeAllSync(fd: number, chunk: string): void {
  const fs = builtin('node:fs')
  const bytes = Buffer.from(chunk)
  let stalled = 0
  for (let at = 0; at < bytes.length; ) {
    try {
      at += fs.writeSync(fd, bytes, at)
    } catch (err) {
      if ((err as { code?: string }).code !== 'EAGAIN' || stalled >= STALL_LIMIT_MS) throw err
      Atomics.wait((sleeper ??= new Int32Array(new SharedArrayBuffer(4))), 0, 0, 1)
      stalled++
    }
  }
}

/** Turns a destination into a writer; throws naming the option when it cannot be used. */
export function writerOf(destination: unknown, where: string): Writer {
  if (typeof destination === 'function') {
    const fn = destination as (chunk: string) => void
    return { write: (chunk) => (fn(chunk), true) }
  }
  if (typeof destination === 'string') {
    if (destination === '') throw new TypeError(`${where}: option "destination" is an empty path`)
    let fd: number
    try {
      fd = builtin('node:fs').openSync(destination, 'a')
    } catch (err) {
      // The system's reason, as Node words it: "ENOENT: no such file or directory", "EACCES: permission denied".
      const reason = err instanceof Error ? `: ${err.message.split(',')[0]}` : ''
      throw new Error(`${where}: option "destination": cannot open ${JSON.stringify(destination)} for appending${reason}`, { cause: err })
    }
    return { write: (chunk) => (writeAllSync(fd, chunk), true) }
  }
  if (destination === process.stdout || destination === process.stderr) {
    // Straight to the descriptor: Node's stdout to a pipe is asynchronous and queues without limit, and what
    // it queues at exit is lost.
    const fd = (destination as { fd: number }).fd
    return { write: (chunk) => (writeAllSync(fd, chunk), true) }
  }
  if (typeof destination === 'object' && destination !== null && typeof (destination as { write?: unknown }).write === 'function') {
    const stream = destination as { write(chunk: string): unknown; once?: (event: string, fn: () => void) => unknown; fd?: unknown }
    return {
      write: (chunk) => stream.write(chunk) !== false || typeof stream.once !== 'function',
      onDrain: (resume) => void stream.once?.('drain', resume),
      writeAtExit: typeof stream.fd === 'number' ? (chunk) => writeAllSync(stream.fd as number, chunk) : undefined,
    }
  }
  throw new TypeError(
    `${where}: option "destination" must be a stream with write(), a function or a file path, got ${destination === null ? 'null' : typeof destination}`,
  )
}

/** One destination's buffer. Write failures and dropped lines are reported once (a full disk must not flood stderr). */
export class LogSink {
  #buffer = ''
  #scheduled = false
  #failed = false
  /** The stream asked to wait: lines gather (up to MAX_PENDING) until it drains. */
  #blocked = false
  #dropped = 0
  readonly #writer: Writer
  /** Bound once: scheduling a flush allocates no closure. */
  readonly #onTurn = (): void => {
    this.#scheduled = false
    this.flush()
  }
  readonly #onDrain = (): void => {
    this.#blocked = false
    this.flush()
  }

  constructor(writer: Writer) {
    this.#writer = writer
    if (!exitHooked) {
      exitHooked = true
      process.on('exit', flushAll)
    }
  }

  /** Adds a line (ending in `\n`); written at the next turn, or now if the buffer is full. */
  add(line: string): void {
    if (this.#blocked && this.#buffer.length >= MAX_PENDING) {
      if (this.#dropped++ === 0) {
        console.error(`gust: logger()'s destination is not keeping up; lines beyond ${MAX_PENDING} waiting bytes are dropped (reported once)`)
      }
      return
    }
    if (this.#buffer.length === 0) waiting.add(this)
    this.#buffer += line
    if (this.#blocked) return
    if (this.#buffer.length >= MAX_BUFFER) {
      this.flush()
    } else if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#onTurn)
    }
  }

  /** How many lines were dropped because the destination did not keep up. */
  get dropped(): number {
    return this.#dropped
  }

  /** Writes what waits, in one call (at exit: synchronously where the destination allows). */
  flush(atExit = false): void {
    if (this.#blocked && !atExit) return
    waiting.delete(this)
    const chunk = this.#buffer
    if (chunk === '') return
    this.#buffer = ''
    try {
      if (atExit && this.#writer.writeAtExit !== undefined) {
        this.#writer.writeAtExit(chunk)
      } else if (!this.#writer.write(chunk) && !atExit) {
        this.#blocked = true
        this.#writer.onDrain?.(this.#onDrain)
      }
    } catch (err) {
      if (!this.#failed) {
        this.#failed = true
        console.error('gust: logger() could not write to its destination; its lines are dropped (reported once)', err)
      }
    }
  }
}
