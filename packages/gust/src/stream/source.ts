/**
 * Where a streamed response's bytes come from when the dispatcher pulls them: a Web `ReadableStream` or any
 * async iterable (an async generator, a Node `Readable`), one chunk at a time and only while the engine has room,
 * so a slow client pauses the producer instead of filling memory. A writer a handler fills (`c.stream()`,
 * `c.sse()`) pushes instead (`stream/writer.ts`).
 * @module
 */

/** A chunk of a streamed body, as the engine takes it. */
export type Chunk = string | Uint8Array

/** The pulling end of a streamed body; internal. */
export interface BodySource {
  /** The next chunk, or `null` at the end. Rejects when the producer failed. */
  read(): Promise<Chunk | null>
  /** The response will not be completed (the client left, or the engine refused it): stop producing. */
  cancel(reason: Error): void
}

/** Turns what a producer yielded into a chunk, or throws naming the mistake. */
export function toChunk(value: unknown): Chunk {
  if (typeof value === 'string' || value instanceof Uint8Array) return value
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  const kind = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value
  throw new TypeError(`A response stream produced a ${kind}; a chunk must be a string or bytes`)
}

/** Whether `value` can be read with `for await` (and is not a string or bytes, which are whole bodies). */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  )
}

/** Pulls a `ReadableStream` through its reader; cancelling it runs the stream's own `cancel`. */
export function fromReadableStream(stream: ReadableStream<unknown>): BodySource {
  return fromReader(stream.getReader())
}

/** Pulls a stream's reader, starting with a read already under way if there is one. */
export function fromReader(
  reader: ReadableStreamDefaultReader<unknown>,
  pending: ReturnType<ReadableStreamDefaultReader<unknown>['read']> | null = null,
): BodySource {
  return {
    async read() {
      const r = await (pending ?? reader.read())
      pending = null
      return r.done ? null : toChunk(r.value)
    },
    cancel(reason) {
      reader.cancel(reason).catch(() => {})
    },
  }
}

/** Pulls an async iterable; cancelling calls its iterator's `return()`, so a generator's `finally` runs. */
export function fromAsyncIterable(iterable: AsyncIterable<unknown>): BodySource {
  const iterator = iterable[Symbol.asyncIterator]()
  return {
    async read() {
      const r = await iterator.next()
      return r.done ? null : toChunk(r.value)
    },
    cancel() {
      try {
        // A generator suspended at an `await` finishes that step first, then runs its `finally`.
        Promise.resolve(iterator.return?.()).catch(() => {})
      } catch {
        // A hostile or broken iterator: nothing more to stop.
      }
    },
  }
}

/** A source that yields `first` and then what `rest` yields. */
export function prepend(first: Chunk[], rest: BodySource): BodySource {
  let i = 0
  return {
    read: () => (i < first.length ? Promise.resolve(first[i++]!) : rest.read()),
    cancel: (reason) => rest.cancel(reason),
  }
}

/** Chunks as one body: text when all are text, bytes otherwise. */
export function concatChunks(chunks: Chunk[]): Chunk {
  if (chunks.length === 0) return ''
  if (chunks.length === 1) return chunks[0]!
  if (chunks.every((c) => typeof c === 'string')) return chunks.join('')
  return Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))
}

/** A byte stream of one chunk, `bytes`, then its end (a body that came whole, read as `Request.body`). */
export function streamOnce(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let left: Uint8Array | undefined = bytes
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left !== undefined) controller.enqueue(left)
      left = undefined
      controller.close()
    },
  })
}
