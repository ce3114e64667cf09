/**
 * Bun, one-thread engine: the socket Bun's own loop watches for the engine, so no thread of ours waits on its
 * behalf. The addon turns each readiness of the engine's sockets into a byte on it (an io_uring poll linked to a
 * write, `crates/gust-napi/src/binding_ring.rs`); each read is a turn of the engine (`woken`). Where io_uring
 * cannot be set up (seccomp, `kernel.io_uring_disabled`, macOS) or `GUST_IO_URING=0`, the addon keeps its waiting
 * thread and there is no socket.
 * @module
 */
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

/** What `Bun.connect({ fd })` needs here: a socket over a descriptor, with handlers. */
interface BunLike {
  connect(options: {
    fd: number
    socket: { data(socket: unknown, bytes: Uint8Array): void; error?(socket: unknown, err: Error): void }
  }): Promise<unknown>
}

/**
 * Watches the socket `server` hands over, if any: Bun owns it from then on, and closes it when the addon closes
 * its end (the server's engine finished). Cost per wake-up: one `recv` by Bun and a call into the addon; the
 * socket stays registered with Bun's loop, with no promise per read.
 */
export function watchWakeSocket(server: BindingServer): void {
  const bun = (globalThis as { Bun?: BunLike }).Bun
  if (bun === undefined) return
  const fd = server.takeWakeReader()
  if (fd === null || fd === undefined) return
  const failed = (err: unknown) => console.error('gust: the one-thread engine stopped hearing its sockets; its wake-up socket failed', err)
  bun
    .connect({
      fd,
      socket: {
        data: () => server.woken(),
        error: (_socket, err) => failed(err),
      },
    })
    .catch(failed)
}
