import { answer, Context, isAnswered, replyFor } from '../context.js'
import { detach, GustRequest } from '../request.js'
import { errorReply, Reply } from '../reply.js'
import { AnswerWriter } from './answer.js'
import type { BindingServer } from './binding.js'
import { type Batch, batchOf, recordKind, REQUEST } from './wire.js'

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
  /** The answers of the batch being written, and who they answer (kept for error messages and the retry). */
  readonly #out = new AnswerWriter()
  readonly #replies: Reply[] = []
  readonly #ids: number[] = []
  readonly #contexts: Context[] = []
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
    let open: Context[] | undefined
    try {
      const batch = batchOf(buf)
      const words = batch.words
      for (let i = 0, at = 0; i < count; at += words[(at >>> 2) + 1]!) {
        // Kinds this version does not handle are skipped whole.
        if (recordKind(words, at >>> 2) !== REQUEST) continue
        i++
        const c = this.#run(batch, at)
        if (!isAnswered(c)) (open ??= []).push(c)
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
        for (const c of later) if (!isAnswered(c)) detach(c.req)
      })
    }
  }

  #run(batch: Batch, at: number): Context {
    const id = batch.words[(at >>> 2) + 2]!
    const handler = batch.words[(at >>> 2) + 3]!
    const entry = this.entries[handler]
    const c = new Context(new GustRequest(batch, at, entry?.names ?? []))
    if (entry === undefined) {
      this.#fail(id, c, new Error(`no handler with index ${handler}`))
      return c
    }
    let out: unknown
    try {
      out = entry.run(c)
    } catch (err) {
      this.#fail(id, c, err)
      return c
    }
    this.#settle(id, c, out, false)
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
      if (!isAnswered(c)) this.#push(id, c, errorReply(null))
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
    if (isAnswered(c)) return
    const problem = reply instanceof Reply ? replyProblem(reply) : 'not a Reply'
    if (problem !== null) {
      console.error(`gust: invalid response to ${c.req.method} ${c.req.path}: ${problem}; sent 500 instead`)
      reply = errorReply(null)
    }
    answer(c)
    this.#out.add(id, reply)
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
    const ids = this.#ids
    const contexts = this.#contexts
    let invalid
    try {
      invalid = this.#out.send(this.#server)
    } catch (err) {
      // Should not happen: every reply was checked in #push. Answer each request alone so one cannot sink the rest.
      console.error('gust: could not send a batch of responses; retrying one by one', err)
      this.#respondOneByOne()
    }
    for (const { id, message } of invalid ?? []) {
      const c = contexts[ids.indexOf(id)]
      const where = c === undefined ? `request ${id}` : `${c.req.method} ${c.req.path}`
      console.error(`gust: invalid response to ${where}: ${message}; sent 500 instead`)
    }
    // Emptied in place: nothing here allocates per flush. Nothing can be pushed meanwhile (this runs alone).
    this.#out.clear()
    this.#replies.length = 0
    ids.length = 0
    contexts.length = 0
  }

  #respondOneByOne(): void {
    const one = new AnswerWriter()
    for (let i = 0; i < this.#ids.length; i++) {
      for (const r of [this.#replies[i]!, errorReply(null)]) {
        one.clear()
        one.add(this.#ids[i]!, r)
        try {
          one.send(this.#server!)
          break
        } catch {
          // Falls through to the plain 500.
        }
      }
    }
  }
}
