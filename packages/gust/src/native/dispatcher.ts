import { Context, contextState } from '../context.js'
import { GustRequest } from '../request.js'
import { errorReply, Reply, toReply } from '../reply.js'
import type { BindingServer } from './binding.js'
import { readRecord, type RequestRecord } from './wire.js'

/** One dispatchable handler: its parameter names and what runs it (the handler itself, or a composed chain). */
export interface Entry {
  names: readonly string[]
  run: (c: Context<any>) => unknown
}

/** Turns an error into a response; may itself throw (then the default 500 is sent). */
export type ErrorResponder = (err: unknown, c: Context) => unknown

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function'
}

/** Why a reply cannot be sent as it is (a middleware may have edited `c.res` by hand), or null. */
function replyProblem(reply: Reply): string | null {
  if (!Number.isInteger(reply.status)) return `status ${String(reply.status)} is not an integer`
  const headers = reply.headers
  if (!Array.isArray(headers) || headers.length % 2 !== 0) return 'headers must be an array of name, value pairs'
  for (const h of headers) if (typeof h !== 'string') return `header ${JSON.stringify(h) ?? String(h)} is not a string`
  if (typeof reply.body !== 'string' && !(reply.body instanceof Uint8Array)) return 'body must be a string or bytes'
  return null
}


/**
 * Runs the handlers of each batch and sends their answers back in as few native calls as possible: one for
 * everything answered synchronously during the batch, one per later turn for asynchronous answers.
 */
export class Dispatcher {
  #server: BindingServer | undefined
  #meta: number[] = []
  #headers: string[] = []
  #bodies: (string | Uint8Array)[] = []
  #contexts: Context[] = []
  #inBatch = false
  #scheduled = false

  constructor(
    private readonly entries: readonly Entry[],
    private readonly onError: ErrorResponder,
  ) {}

  attach(server: BindingServer): void {
    this.#server = server
  }

  /** Called by the engine with every request of one event-loop turn. Never throws: that would kill the process. */
  readonly onBatch = (buf: Buffer, count: number): void => {
    this.#inBatch = true
    try {
      let at = 0
      for (let i = 0; i < count; i++) {
        const rec = readRecord(buf, at)
        at = rec.bodyEnd
        this.#run(rec)
      }
    } catch (err) {
      // Only a bug of Gust's own can land here; the requests left unanswered get the engine's timeout.
      console.error('gust: could not dispatch a request batch', err)
    } finally {
      this.#inBatch = false
      this.#flush()
    }
  }

  #run(rec: RequestRecord): void {
    const entry = this.entries[rec.handler]
    const c = new Context(new GustRequest(rec, entry?.names ?? []))
    if (entry === undefined) {
      this.#fail(rec.id, c, new Error(`no handler with index ${rec.handler}`))
      return
    }
    let out: unknown
    try {
      out = entry.run(c)
    } catch (err) {
      this.#fail(rec.id, c, err)
      return
    }
    if (isThenable(out)) {
      out.then(
        (value) => this.#finish(rec.id, c, value, false),
        (err) => this.#fail(rec.id, c, err),
      )
    } else {
      this.#finish(rec.id, c, out, false)
    }
  }

  #finish(id: number, c: Context, value: unknown, failing: boolean): void {
    let reply: Reply | Promise<Reply>
    try {
      const [status, headers] = contextState(c)
      reply = toReply(value, status, headers)
    } catch (err) {
      if (failing) this.#push(id, c, errorReply(err))
      else this.#fail(id, c, err)
      return
    }
    if (reply instanceof Reply) {
      this.#push(id, c, reply)
    } else {
      reply.then(
        (r) => this.#push(id, c, r),
        (err) => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err)),
      )
    }
  }

  #fail(id: number, c: Context, err: unknown): void {
    let out: unknown
    try {
      out = this.onError(err, c)
    } catch (handlerErr) {
      console.error('gust: the error handler threw', handlerErr)
      this.#push(id, c, errorReply(handlerErr))
      return
    }
    const fallback = (e: unknown) => {
      console.error('gust: the error handler threw', e)
      this.#push(id, c, errorReply(e))
    }
    if (isThenable(out)) out.then((value) => this.#finish(id, c, value, true), fallback)
    else this.#finish(id, c, out, true)
  }

  #push(id: number, c: Context, reply: Reply): void {
    const problem = reply instanceof Reply ? replyProblem(reply) : 'not a Reply'
    if (problem !== null) {
      console.error(`gust: invalid response to ${c.req.method} ${c.req.path}: ${problem}; sent 500 instead`)
      reply = errorReply(null)
    }
    const headers = reply.headers
    this.#meta.push(id, reply.status, headers.length >> 1)
    for (let i = 0; i < headers.length; i++) this.#headers.push(headers[i]!)
    this.#bodies.push(reply.body)
    this.#contexts.push(c)
    if (!this.#inBatch && !this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    if (this.#meta.length === 0 || this.#server === undefined) return
    const meta = this.#meta
    const contexts = this.#contexts
    let invalid
    try {
      invalid = this.#server.respond(new Uint32Array(meta), this.#headers, this.#bodies)
    } catch (err) {
      // Should not happen: every reply was checked in #push. Answer each request alone so one cannot sink the rest.
      console.error('gust: could not send a batch of responses; retrying one by one', err)
      this.#respondOneByOne(meta, this.#headers, this.#bodies)
    }
    this.#meta = []
    this.#headers = []
    this.#bodies = []
    this.#contexts = []
    for (const { id, message } of invalid ?? []) {
      const i = contexts.findIndex((_, k) => meta[k * 3] === id)
      const where = i === -1 ? `request ${id}` : `${contexts[i]!.req.method} ${contexts[i]!.req.path}`
      console.error(`gust: invalid response to ${where}: ${message}; sent 500 instead`)
    }
  }

  #respondOneByOne(meta: number[], headers: string[], bodies: (string | Uint8Array)[]): void {
    let h = 0
    for (let i = 0; i < bodies.length; i++) {
      const [id, status, count] = [meta[i * 3]!, meta[i * 3 + 1]!, meta[i * 3 + 2]!]
      const own = headers.slice(h, h + count * 2)
      h += count * 2
      try {
        this.#server!.respond(Uint32Array.of(id, status, count), own, [bodies[i]!])
      } catch {
        const fallback = errorReply(null)
        this.#server!.respond(Uint32Array.of(id, 500, fallback.headers.length >> 1), fallback.headers, [fallback.body])
      }
    }
  }
}
