/**
 * Buffered log output: lines gathered during a turn of the event loop go out in one write, at the next turn or
 * once 64 KiB wait, and whatever waits is written when the process exits. One write per turn instead of one per
 * request (pino's default destination writes per line) is most of what makes `logger({ format: 'json' })` cheap.
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

/** Sinks with lines waiting, written on `exit` (a `process.exit()` right after a request included). */
const waiting = new Set<LogSink>()
let exitHooked = false

function flushAll(): void {
  for (const sink of waiting) sink.flush()
}

/** Turns a destination into a write function; throws naming the option when it cannot be used. */
export function writerOf(destination: unknown, where: string): (chunk: string) => void {
  if (typeof destination === 'function') return destination as (chunk: string) => void
  if (typeof destination === 'string') {
    if (destination === '') throw new TypeError(`${where}: option "destination" is an empty path`)
    const fs = builtin('node:fs')
    let fd: number
    try {
      fd = fs.openSync(destination, 'a')
    } catch (err) {
      throw new Error(`${where}: option "destination": cannot open ${JSON.stringify(destination)} for appending`, { cause: err })
    }
    return (chunk) => {
      const bytes = Buffer.from(chunk)
      for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at)
    }
  }
  if (typeof destination === 'object' && destination !== null && typeof (destination as { write?: unknown }).write === 'function') {
    const stream = destination as { write(chunk: string): unknown }
    return (chunk) => {
      stream.write(chunk)
    }
  }
  throw new TypeError(
    `${where}: option "destination" must be a stream with write(), a function or a file path, got ${destination === null ? 'null' : typeof destination}`,
  )
}

/** One destination's buffer. Write failures are reported once (a full disk must not flood stderr) and dropped. */
export class LogSink {
  #buffer = ''
  #scheduled = false
  #failed = false
  readonly #write: (chunk: string) => void
  /** Bound once: scheduling a flush allocates no closure. */
  readonly #onTurn = (): void => {
    this.#scheduled = false
    this.flush()
  }

  constructor(write: (chunk: string) => void) {
    this.#write = write
    if (!exitHooked) {
      exitHooked = true
      process.on('exit', flushAll)
    }
  }

  /** Adds a line (ending in `\n`); written at the next turn, or now if the buffer is full. */
  add(line: string): void {
    if (this.#buffer.length === 0) waiting.add(this)
    this.#buffer += line
    if (this.#buffer.length >= MAX_BUFFER) {
      this.flush()
    } else if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#onTurn)
    }
  }

  /** Writes what waits, in one call. */
  flush(): void {
    waiting.delete(this)
    const chunk = this.#buffer
    if (chunk === '') return
    this.#buffer = ''
    try {
      this.#write(chunk)
    } catch (err) {
      if (!this.#failed) {
        this.#failed = true
        console.error('gust: logger() could not write to its destination; its lines are dropped (reported once)', err)
      }
    }
  }
}
