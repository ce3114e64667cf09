import type { BindingServer } from './native/binding.js'

/**
 * A listening server, as returned by `app.listen()`.
 * @example
 * const server = await app.listen({ port: 0 })
 * console.log(server.url)
 * await server.stop()
 */
export class Server {
  /** The bound port. */
  readonly port: number
  /** The bound address. */
  readonly hostname: string
  #binding: BindingServer
  #onStop: () => void
  #stopping: Promise<void> | undefined

  /** @internal */
  constructor(binding: BindingServer, onStop: () => void) {
    this.#binding = binding
    this.#onStop = onStop
    this.port = binding.port
    this.hostname = binding.address
  }

  /** `http://host:port`, with `127.0.0.1` when bound to all interfaces. */
  get url(): string {
    const host = this.hostname === '0.0.0.0' ? '127.0.0.1' : this.hostname === '::' ? '[::1]' : this.hostname
    return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${this.port}`
  }

  /**
   * Stops accepting connections and resolves once every connection is closed. By default in-flight requests
   * finish and idle keep-alive connections close; `{ force: true }` closes everything at once, and may follow a
   * graceful stop to cut it short. The app can `listen()` again afterwards.
   */
  async stop(options: { force?: boolean } = {}): Promise<void> {
    const force = options.force === true
    const done = this.#binding.stop(force)
    if (this.#stopping === undefined) {
      this.#stopping = done
      this.#onStop()
    }
    await done
  }
}
