/**
 * Bun, one-thread engine: the pipe Bun's own loop watches for the engine, so no thread of ours waits on its
 * behalf. The addon turns each readiness of the engine's sockets into a byte on it (an io_uring poll linked to a
 * write, `crates/gust-napi/src/binding_ring.rs`); each chunk read is a turn of the engine (`woken`). Where
 * io_uring cannot be set up (seccomp, `kernel.io_uring_disabled`, macOS), the addon keeps its waiting thread and
 * there is no pipe.
 * @module
 */
import { closeSync } from 'node:fs'

import { type BindingServer, native } from './binding.js'

/**
 * Tells the addon whether the next servers may use io_uring, from `GUST_IO_URING` (`0` turns it off: the waiting
 * thread then, as where io_uring cannot be set up; `1` or unset: on where it can be). Anything else throws.
 */
export function applyIoUringSetting(): void {
  const given = process.env.GUST_IO_URING
  if (given !== undefined && given !== '' && given !== '0' && given !== '1') {
    throw new TypeError(`GUST_IO_URING must be '0' or '1', got ${JSON.stringify(given)}`)
  }
  native.useIoUring(given !== '0')
}

/** What `Bun.file(fd).stream()` gives: only the reader is used. */
interface BunLike {
  file(fd: number): { stream(): ReadableStream<Uint8Array> }
}

/**
 * Watches the pipe `server` hands over, if any, until it ends (the server's engine finished and the addon closed
 * the write end); then closes the read end, which Bun leaves open. Cost per wake-up: the read of one byte and a
 * resolved promise.
 */
export function watchWakePipe(server: BindingServer): void {
  const bun = (globalThis as { Bun?: BunLike }).Bun
  if (bun === undefined) return
  const fd = server.takeWakeReader()
  if (fd === null || fd === undefined) return
  const reader = bun.file(fd).stream().getReader()
  const next = (): void => {
    reader.read().then(
      ({ done }) => {
        if (done) {
          closeSync(fd)
          return
        }
        server.woken()
        next()
      },
      (err: unknown) => console.error('gust: the one-thread engine stopped hearing its sockets; its wake-up pipe failed', err),
    )
  }
  next()
}
