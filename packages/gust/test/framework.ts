/**
 * The same spec files run under `node --test` and `bun test`: this picks the runner of the runtime at hand.
 * Assertions use `node:assert/strict`, which both runtimes provide.
 */
type Fn = () => unknown | Promise<unknown>
interface Runner {
  describe(name: string, fn: () => void): void
  test(name: string, fn: Fn): void
  before(fn: Fn): void
  after(fn: Fn): void
}

export const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined'
export const runtime = isBun ? 'bun' : 'node'
/**
 * Whether this run's servers use the one-thread engine (`GUST_ENGINE=one-thread`, as `make test` runs the suites a
 * second time): what only the threaded engine does (answering while the JavaScript thread is blocked) is not
 * asked of it.
 */
export const oneThread = process.env.GUST_ENGINE === 'one-thread'

const runner: Runner = isBun
  ? await import('bun:test').then((m) => ({
      describe: m.describe,
      test: (name: string, fn: Fn) => m.test(name, fn as () => Promise<void>),
      before: m.beforeAll,
      after: m.afterAll,
    }))
  : await import('node:test').then((m) => ({
      describe: m.describe,
      test: (name: string, fn: Fn) => m.test(name, fn as () => Promise<void>),
      before: m.before,
      after: m.after,
    }))

export const { describe, test, before, after } = runner

/** `test` in the threaded pass only, for what only the threaded engine promises (left out of the one-thread pass). */
export const threadsTest: typeof test = oneThread ? () => {} : test
