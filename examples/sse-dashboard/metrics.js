// The process's live metrics, sampled on one timer and handed to every watcher: the dashboard's data source.
/** How often the event loop's delay is probed while someone watches (100 probes a second). */
const PROBE_MS = 10

/**
 * Samples the process every `intervalMs` while someone watches, and only then: with no watcher there is no timer
 * and no event-loop histogram, so an idle dashboard costs nothing. Keeps the last `keep` samples for clients that
 * connect (or reconnect) later.
 * @example
 * const metrics = new Metrics({ intervalMs: 1000 })
 * const stop = metrics.subscribe((sample, json) => console.log(json))
 * metrics.count() // one request more in the current interval
 * stop()
 */
export class Metrics {
  #intervalMs
  #keep
  #history = []
  #watchers = new Set()
  #timer
  #probe
  /** How late each probe ran in the current interval, in milliseconds. */
  #delays = []
  #nextId = 1
  #requests = 0
  #requestsTotal = 0
  #cpu
  #at

  constructor({ intervalMs = 1000, keep = 60 } = {}) {
    if (!(intervalMs >= 10)) throw new RangeError(`intervalMs must be at least 10, got ${intervalMs}`)
    this.#intervalMs = intervalMs
    this.#keep = keep
  }

  /** One request more, counted into the current interval (two counters: no allocation, no time read). */
  count() {
    this.#requests++
    this.#requestsTotal++
  }

  /** How many watchers are subscribed. */
  get watchers() {
    return this.#watchers.size
  }

  /** The latest sample, or undefined before the first. */
  get latest() {
    return this.#history.at(-1)
  }

  /** The kept samples with an id above `afterId` (all of them when it is not a number). */
  since(afterId) {
    return Number.isFinite(afterId) ? this.#history.filter((s) => s.id > afterId) : [...this.#history]
  }

  /** Calls `fn(sample, json)` with every sample from now on; returns the function that unsubscribes. */
  subscribe(fn) {
    this.#watchers.add(fn)
    if (this.#watchers.size === 1) this.#start()
    return () => {
      if (this.#watchers.delete(fn) && this.#watchers.size === 0) this.#stop()
    }
  }

  #start() {
    // A timer that should fire every PROBE_MS: how late it runs is how long the event loop was kept from turning.
    // (perf_hooks' monitorEventLoopDelay counts this differently on Node and on Bun; this reads the same on both.)
    let expected = performance.now() + PROBE_MS
    this.#probe = setInterval(() => {
      const now = performance.now()
      this.#delays.push(Math.max(0, now - expected))
      expected = now + PROBE_MS
    }, PROBE_MS)
    this.#cpu = process.cpuUsage()
    this.#at = performance.now()
    this.#requests = 0
    this.#timer = setInterval(() => this.#sample(), this.#intervalMs)
  }

  #stop() {
    clearInterval(this.#timer)
    clearInterval(this.#probe)
    this.#delays = []
  }

  #sample() {
    const now = performance.now()
    const seconds = (now - this.#at) / 1000
    const cpu = process.cpuUsage(this.#cpu)
    const memory = process.memoryUsage()
    const sample = {
      id: this.#nextId++,
      at: Date.now(),
      // User and system CPU time over wall time: 100 is one core busy the whole interval (workers would add up).
      cpuPercent: round(((cpu.user + cpu.system) / 1e3 / (now - this.#at)) * 100),
      rssMB: round(memory.rss / 2 ** 20),
      heapUsedMB: round(memory.heapUsed / 2 ** 20),
      // How late timers ran: a handler that blocks the event loop shows here first.
      eventLoopDelayMs: percentiles(this.#delays),
      requestsPerSecond: round(this.#requests / seconds),
      requestsTotal: this.#requestsTotal,
      watchers: this.#watchers.size,
      uptimeSeconds: Math.round(process.uptime()),
    }
    this.#cpu = process.cpuUsage()
    this.#at = now
    this.#requests = 0
    this.#delays = []
    this.#history.push(sample)
    if (this.#history.length > this.#keep) this.#history.shift()
    // Serialised once for every watcher.
    const json = JSON.stringify(sample)
    for (const fn of this.#watchers) fn(sample, json)
  }
}

const round = (n) => Math.round(n * 100) / 100

/** p50, p99 and max of `values` (a hundred or so a second: sorting them is cheap). */
function percentiles(values) {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0 }
  const sorted = values.toSorted((a, b) => a - b)
  const at = (q) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))])
  return { p50: at(0.5), p99: at(0.99), max: round(sorted.at(-1)) }
}
