import { Context, replyFor } from '../context.js'
import { detach, GustRequest } from '../request.js'
import { errorReply, Reply } from '../reply.js'
import { encodeAnswer } from './answer.js'
import type { BindingServer } from './binding.js'
import { readRecord, recordEnd, type RequestRecord } from './wire.js'

/** One dispatchable handler: its parameter names and what runs it (the handler itself, or a composed chain). */
export interface Entry {
  names: readonly string[]
  run: (c: Context<any>) => unknown
}

/** Turns an error into a response; may itself throw (then the default 500 is sent). */
export type ErrorResponder = (err: unknown, c: Context) => unknown

/** `value.then` if it is a thenable; reading it may run a getter, which must not throw past us. */
function thenOf(value: unknown): PromiseLike<unknown>['then'] | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  const then = (value as PromiseLike<unknown>).then
  return typeof then === 'function' ? then : undefined
}

/** A value named in a log line, without calling anything on it (`JSON.stringify` throws on `1n` or cycles). */
function kindOf(value: unknown): string {
  return typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value
}

/** Why a reply cannot be sent as it is (a middleware may have edited `c.res` by hand), or null. Never throws. */
function replyProblem(reply: Reply): string | null {
  const status = reply.status
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    return `status ${kindOf(status)} is not an integer from 200 to 599`
  }
  const headers = reply.headers
  if (!Array.isArray(headers) || headers.length % 2 !== 0) return 'headers must be an array of name, value pairs'
  for (let i = 0; i < headers.length; i++) {
    if (typeof headers[i] !== 'string') return `header ${i >> 1} has a ${kindOf(headers[i])} where a string belongs`
  }
  if (typeof reply.body !== 'string' && !(reply.body instanceof Uint8Array)) return 'body must be a string or bytes'
  return null
}

/**
 * Runs the handlers of each batch and sends their answers back in as few native calls as possible: one for
 * everything answered synchronously during the batch, one per later turn for asynchronous answers.
 *
 * Every path from a handler's result to its answer is guarded: whatever a handler, middleware or error handler
 * returns or throws, each request gets exactly one answer and no other request of its batch is disturbed.
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
  /** Contexts answered since their batch; a request still open a turn after its batch is moved out of it. */
  #answered = new WeakSet<Context>()

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
    let open: Context[] | undefined
    try {
      let at = 0
      for (let i = 0; i < count; at = recordEnd(buf, at)) {
        const rec = readRecord(buf, at)
        if (rec === null) continue
        i++
        const c = this.#run(rec)
        if (!this.#answered.has(c)) (open ??= []).push(c)
      }
    } catch (err) {
      // Only a bug of Gust's own can land here; the requests left unanswered get the engine's timeout.
      console.error('gust: could not dispatch a request batch', err)
    } finally {
      this.#inBatch = false
      this.#flush()
    }
    // A handler still busy a turn later (awaiting a database, say) must not keep every other request of its
    // batch, bodies included, alive: it gets a copy of its own record. Quick async handlers are done by then.
    if (open !== undefined) {
      const later = open
      setImmediate(() => {
        for (const c of later) if (!this.#answered.has(c)) detach(c.req)
      })
    }
  }

  #run(rec: RequestRecord): Context {
    const entry = this.entries[rec.handler]
    const c = new Context(new GustRequest(rec, entry?.names ?? []))
    if (entry === undefined) {
      this.#fail(rec.id, c, new Error(`no handler with index ${rec.handler}`))
      return c
    }
    let out: unknown
    try {
      out = entry.run(c)
    } catch (err) {
      this.#fail(rec.id, c, err)
      return c
    }
    this.#settle(rec.id, c, out, false)
    return c
  }

  /** Waits for `out` if it is a thenable, then finishes; every continuation is guarded. */
  #settle(id: number, c: Context, out: unknown, failing: boolean): void {
    let then
    try {
      then = thenOf(out)
    } catch (err) {
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err)))
      return
    }
    if (then === undefined) {
      this.#guard(id, c, () => this.#finish(id, c, out, failing))
      return
    }
    try {
      then.call(
        out,
        (value) => this.#guard(id, c, () => this.#finish(id, c, value, failing)),
        (err) => this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err))),
      )
    } catch (err) {
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err)))
    }
  }

  /** Runs a step; if it throws (a bug, or a hostile value), the request still gets a plain 500. */
  #guard(id: number, c: Context, step: () => void): void {
    try {
      step()
    } catch (err) {
      console.error('gust: could not build a response; sent 500 instead', err)
      if (!this.#answered.has(c)) this.#push(id, c, errorReply(null))
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
    if (reply instanceof Reply) this.#push(id, c, reply)
    else this.#settle(id, c, reply, failing)
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
    this.#settle(id, c, out, true)
  }

  #push(id: number, c: Context, reply: Reply): void {
    if (this.#answered.has(c)) return
    const problem = reply instanceof Reply ? replyProblem(reply) : 'not a Reply'
    if (problem !== null) {
      console.error(`gust: invalid response to ${c.req.method} ${c.req.path}: ${problem}; sent 500 instead`)
      reply = errorReply(null)
    }
    this.#answered.add(c)
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
