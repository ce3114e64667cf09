/**
 * The main thread's side of `listen({ workers })`: starts the worker threads, waits until each has joined the
 * engine, replaces one that exits while serving (with backoff), and ends them once the server has stopped.
 * @module
 */

import { builtin } from '../builtins.js'
import type { BindingServer } from '../native/binding.js'

/** What the pool reads of the server its workers serve: each one's requests in flight. */
type Lanes = Pick<BindingServer, 'lanes'>
import type { Worker } from 'node:worker_threads'
import type { WorkerMessage, WorkerRole } from './role.js'

/** A worker thread as `server.workers` shows it. */
export interface WorkerInfo {
  /** Its number in the pool, from 0; a replacement keeps the number of the worker it replaces. */
  readonly index: number
  /** Its `threadId` (the current one, after a restart). */
  readonly threadId: number
  /** Whether it has joined the engine and takes requests. */
  readonly ready: boolean
  /** Requests handed to it and not yet answered. */
  readonly inFlight: number
  /** How many times this slot's worker exited while serving and was replaced. */
  readonly restarts: number
}

interface Slot {
  index: number
  worker: Worker | undefined
  /** The engine lane it joined as, once ready. */
  lane: number
  ready: boolean
  restarts: number
  /** Replacements in a row that died young: the backoff grows with them. */
  failures: number
  startedAt: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** The first replacement waits this long; each further one in a row twice as long, up to `MAX_BACKOFF`. */
const FIRST_BACKOFF = 100
const MAX_BACKOFF = 10_000
/** A worker that served this long is healthy: its replacement starts without waiting. */
const HEALTHY = 10_000
/** How long a stop waits for a worker to end before it is left to the process. */
const END_WAIT = 5_000

export class WorkerPool {
  readonly #slots: Slot[]
  readonly #entry: string
  readonly #role: Omit<WorkerRole, 'index'>
  readonly #binding: Lanes
  #stopping = false
  #ended: Promise<void> | undefined

  constructor(count: number, entry: string, role: Omit<WorkerRole, 'index'>, binding: Lanes) {
    this.#entry = entry
    this.#role = role
    this.#binding = binding
    this.#slots = Array.from({ length: count }, (_, index) => ({
      index,
      worker: undefined,
      lane: -1,
      ready: false,
      restarts: 0,
      failures: 0,
      startedAt: 0,
      timer: undefined,
    }))
  }

  /** Starts every worker; resolves once all have joined, rejects with the first one's failure to. */
  start(): Promise<void> {
    return Promise.all(this.#slots.map((slot) => this.#spawn(slot))).then(() => undefined)
  }

  #spawn(slot: Slot): Promise<void> {
    slot.timer = undefined
    slot.ready = false
    slot.lane = -1
    slot.startedAt = Date.now()
    return new Promise<void>((resolve, reject) => {
      let settled = false
      const settle = (err?: Error) => {
        if (settled) return
        settled = true
        if (err === undefined) resolve()
        else reject(err)
      }
      let worker: Worker
      try {
        worker = new (builtin('node:worker_threads').Worker)(this.#entry, { workerData: { gustWorker: { ...this.#role, index: slot.index } } })
      } catch (err) {
        settle(new Error(`gust: worker ${slot.index} could not start from ${this.#entry}`, { cause: err }))
        return
      }
      slot.worker = worker
      worker.on('message', (message: WorkerMessage | undefined) => {
        if (message?.gust === 'ready') {
          slot.ready = true
          slot.lane = message.lane
          settle()
        } else if (message?.gust === 'failed') {
          settle(new Error(`gust: worker ${slot.index} could not join the server: ${message.message}`))
        }
      })
      // Without a listener a worker's uncaught error would be thrown on this thread.
      worker.on('error', (err) => {
        // Its error and its `failed` message may come in either order: both say why.
        const why = err instanceof Error ? err.message : String(err)
        if (!settled) settle(new Error(`gust: worker ${slot.index} could not join the server: ${why}`, { cause: err }))
        else if (!this.#stopping) console.error(`gust: worker ${slot.index} failed:`, err)
      })
      worker.on('exit', (code) => {
        if (slot.worker !== worker) return
        slot.worker = undefined
        slot.ready = false
        if (!settled) {
          settle(new Error(`gust: worker ${slot.index} exited with code ${code} before it joined the server (did the entry module call listen({ workers })?)`))
          return
        }
        if (!this.#stopping) this.#replace(slot, code)
      })
    })
  }

  /** A worker exited while serving (its requests were answered 503 by the engine): a new one takes its place. */
  #replace(slot: Slot, code: number): void {
    slot.restarts++
    const lived = Date.now() - slot.startedAt
    slot.failures = lived >= HEALTHY ? 0 : slot.failures + 1
    const wait = slot.failures === 0 ? 0 : Math.min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (slot.failures - 1))
    console.error(`gust: worker ${slot.index} exited with code ${code}; a new one starts${wait === 0 ? ' now' : ` in ${wait} ms`}`)
    slot.timer = setTimeout(() => {
      if (this.#stopping) return
      this.#spawn(slot).catch((err: unknown) => {
        console.error(err instanceof Error ? err.message : err)
        // It is gone already, or goes now: its exit brings the next try, with a longer wait.
        void slot.worker?.terminate()
      })
    }, wait)
  }

  /** A snapshot of every worker, with the engine's count of its requests in flight. */
  info(): WorkerInfo[] {
    const lanes = this.#stopping ? [] : this.#binding.lanes()
    return this.#slots.map((slot) => ({
      index: slot.index,
      threadId: slot.worker?.threadId ?? -1,
      ready: slot.ready,
      inFlight: slot.ready ? (lanes.find((l) => l.lane === slot.lane)?.inFlight ?? 0) : 0,
      restarts: slot.restarts,
    }))
  }

  /** Nothing is replaced from now on (the server is stopping). */
  stopping(): void {
    this.#stopping = true
    for (const slot of this.#slots) clearTimeout(slot.timer)
  }

  /** Ends every worker (once the server has stopped, their lanes have nothing left to do). Idempotent. */
  end(): Promise<void> {
    this.stopping()
    this.#ended ??= Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker
        if (worker === undefined) return
        let timer: ReturnType<typeof setTimeout> | undefined
        await Promise.race([
          worker.terminate().catch(() => {}),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, END_WAIT))),
        ])
        clearTimeout(timer)
      }),
    ).then(() => undefined)
    return this.#ended
  }
}
