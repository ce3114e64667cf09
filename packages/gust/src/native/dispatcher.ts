import { Context, replyFor } from '../context.js'
import { GustRequest } from '../request.js'
import { errorReply, Reply } from '../reply.js'
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
  #replies: Reply[] = []
  #ids: number[] = []
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
      reply = replyFor(c, value)
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
    encodeAnswer(this.#meta, this.#headers, id, reply)
    this.#bodies.push(reply.body)
    this.#replies.push(reply)
    this.#ids.push(id)
    this.#contexts.push(c)
    if (!this.#inBatch && !this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    if (this.#ids.length === 0 || this.#server === undefined) return
    const { meta, headers, bodies, replies, ids, contexts } = this.#take()
    let invalid
    try {
      invalid = this.#server.respond(new Uint32Array(meta), headers.join(''), bodies)
    } catch (err) {
      // Should not happen: every reply was checked in #push. Answer each request alone so one cannot sink the rest.
      console.error('gust: could not send a batch of responses; retrying one by one', err)
      this.#respondOneByOne(ids, replies)
    }
    for (const { id, message } of invalid ?? []) {
      const c = contexts[ids.indexOf(id)]
      const where = c === undefined ? `request ${id}` : `${c.req.method} ${c.req.path}`
      console.error(`gust: invalid response to ${where}: ${message}; sent 500 instead`)
    }
  }

  #take() {
    const taken = {
      meta: this.#meta,
      headers: this.#headers,
      bodies: this.#bodies,
      replies: this.#replies,
      ids: this.#ids,
      contexts: this.#contexts,
    }
    this.#meta = []
    this.#headers = []
    this.#bodies = []
    this.#replies = []
    this.#ids = []
    this.#contexts = []
    return taken
  }

  #respondOneByOne(ids: number[], replies: Reply[]): void {
    for (let i = 0; i < ids.length; i++) {
      for (const r of [replies[i]!, errorReply(null)]) {
        const meta: number[] = []
        const headers: string[] = []
        encodeAnswer(meta, headers, ids[i]!, r)
        try {
          this.#server!.respond(new Uint32Array(meta), headers.join(''), [r.body])
          break
        } catch {
          // Falls through to the plain 500.
        }
      }
    }
  }
}

/**
 * Appends one answer in the layout `BindingServer.respond` reads: `[id, status, headerCount]` then a name and
 * value length per header in `meta`; the header texts themselves, concatenated, in `headers`. Lengths are in
 * UTF-16 code units, so no character can shift a boundary; the engine rejects anything that is not valid HTTP.
 */
function encodeAnswer(meta: number[], headers: string[], id: number, reply: Reply): void {
  const h = reply.headers
  meta.push(id, reply.status, h.length >> 1)
  for (let i = 0; i < h.length; i++) {
    meta.push(h[i]!.length)
    headers.push(h[i]!)
  }
}
