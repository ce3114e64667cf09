/**
 * What a Gust worker thread was started for: which server of its main thread it joins, and the routes that
 * server has, so its own can be checked against them.
 * @module
 */
import { builtin } from '../builtins.js'

/** The `workerData` a pool gives each of its workers. */
export interface WorkerRole {
  /** The server to join (`BindingServer.key` on the main thread). */
  key: number
  /** The worker's number in its pool, from 0. */
  index: number
  /** The main thread's route table, as `routeSignature` lists it. */
  routes: string[]
  /**
   * The engine the main thread started: `'one-thread'` when each worker serves its own slot of the port (the
   * main thread's choice holds whatever the worker's own `listen()` call names).
   */
  engine: 'threads' | 'one-thread'
  /**
   * On the one-thread engine, the engine options of the main thread's `listen()` (every worker's server takes
   * them, so all serve alike whatever their own call says); the threaded engine has one set already.
   */
  options?: Record<string, unknown>
}

/** Messages a worker sends its pool (tagged: the entry module may use `parentPort` for its own). */
export type WorkerMessage = { gust: 'ready'; lane: number } | { gust: 'failed'; message: string }

/**
 * This thread's `node:worker_threads` (none on Bun's main thread, which knows itself without it: megabytes there,
 * see builtins.ts) and its Gust role, read the first time they are asked for rather than at import: loading
 * `node:worker_threads` is part of what a cold start pays on Node, and most apps never start a worker.
 */
let here: { threads: typeof import('node:worker_threads') | undefined; role: WorkerRole | undefined } | undefined

function thisThread(): NonNullable<typeof here> {
  if (here !== undefined) return here
  const threads = (globalThis as { Bun?: { isMainThread: boolean } }).Bun?.isMainThread === true ? undefined : builtin('node:worker_threads')
  const workerData: unknown = threads !== undefined && !threads.isMainThread ? threads.workerData : undefined
  const role =
    workerData !== null && typeof workerData === 'object' && 'gustWorker' in workerData
      ? (workerData as { gustWorker: WorkerRole }).gustWorker
      : undefined
  return (here = { threads, role })
}

/** Whether this worker's `listen({ workers })` call was made. */
let claimed = false

/**
 * This thread's role for a `listen({ workers })` call: `undefined` on the main thread (or in a worker the
 * program started itself), where the call binds. In a Gust worker, the first such call joins the server the
 * worker was started for; a second one is an error (an entry module makes one).
 */
export function claimRole(): WorkerRole | undefined {
  const { role } = thisThread()
  if (role === undefined) return undefined
  if (claimed) {
    throw new Error(
      `gust: worker ${role.index} already joined its server; an entry module may make only one listen({ workers }) call`,
    )
  }
  claimed = true
  return role
}

/** Tells the pool how this worker's start went. */
export function report(message: WorkerMessage): void {
  thisThread().threads?.parentPort?.postMessage(message)
}

/** Whether this thread is a Gust worker (one started by `listen({ workers })`): code that must run once per process (a migration, a scheduler) can skip it there. */
export function isWorker(): boolean {
  return thisThread().role !== undefined
}
