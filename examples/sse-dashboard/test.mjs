// The dashboard over real sockets: the feed's history and samples, Last-Event-ID on a reconnect, requests and a
// blocked event loop showing in the numbers, sampling only while watched, and a stop that ends open feeds.
import assert from 'node:assert/strict'

import { checks, sleep, sseEvents, start, waitFor } from '../test-support.mjs'

const INTERVAL = 50
const server = await start(new URL('./server.js', import.meta.url), { INTERVAL_MS: String(INTERVAL) })

/** An open feed: its parsed events as they come, and `next(match)` to wait for one. */
async function watch(headers = {}) {
  const controller = new AbortController()
  const res = await fetch(`${server.url}/events`, { headers, signal: controller.signal })
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'text/event-stream')
  const events = sseEvents(res)
  return {
    /** The next event `match` accepts, within `ms`. */
    async next(match = () => true, ms = 5_000) {
      const deadline = Date.now() + ms
      const skipped = []
      for (;;) {
        let timer
        const timeout = new Promise((resolve) => (timer = setTimeout(resolve, deadline - Date.now(), { timedOut: true })))
        const { value, done, timedOut } = await Promise.race([events.next(), timeout])
        clearTimeout(timer)
        if (timedOut) throw new Error(`no matching event within ${ms} ms; skipped ${JSON.stringify(skipped.slice(-5))}`)
        if (done) throw new Error('the feed ended')
        const event = { ...value, data: JSON.parse(value.data) }
        if (match(event)) return event
        skipped.push(event)
      }
    },
    /** Drains the feed until the server ends it. */
    async ended() {
      for await (const _ of events);
    },
    close: () => controller.abort(),
  }
}

const latest = async () => (await fetch(`${server.url}/api/metrics`)).json()
const feeds = []

await checks(
  {
    'the page is served': async () => {
      const res = await fetch(server.url)
      assert.equal(res.status, 200)
      assert.match(await res.text(), /new EventSource\('\/events'\)/)
    },

    'nothing is sampled before someone watches': async () => {
      assert.equal((await latest()).watchers, 0)
    },

    'a feed starts with the kept history, then streams samples': async () => {
      const feed = await watch()
      feeds.push(feed)
      const history = await feed.next()
      assert.equal(history.event, 'history')
      assert.deepEqual(history.data, [])
      const samples = [await feed.next(), await feed.next(), await feed.next()]
      for (const s of samples) {
        assert.equal(s.event, 'sample')
        assert.equal(s.id, String(s.data.id))
        assert.equal(s.data.watchers, 1)
        for (const key of ['cpuPercent', 'rssMB', 'heapUsedMB', 'requestsPerSecond', 'requestsTotal', 'uptimeSeconds']) {
          assert.equal(typeof s.data[key], 'number', key)
        }
        assert.ok(s.data.rssMB > 10, `rss ${s.data.rssMB} MB`)
      }
      assert.deepEqual(samples.map((s) => s.data.id), [samples[0].data.id, samples[0].data.id + 1, samples[0].data.id + 2])
    },

    'API requests and a blocked event loop show in the next samples': async () => {
      const before = (await latest()).requestsTotal
      for (let i = 0; i < 5; i++) assert.deepEqual(await (await fetch(`${server.url}/api/work?ms=20`)).json(), { busyMs: 20 })
      await (await fetch(`${server.url}/api/work?ms=150`)).json()
      // Seen in one sample or two: the 5 + 1 requests above and this /api/metrics one (the sample it returned was
      // taken before it), and the 150 ms the handler kept the event loop busy, as the probe timer saw it.
      let counted = false
      let blocked = false
      await feeds[0].next((e) => {
        counted ||= e.data.requestsTotal === before + 7
        blocked ||= e.data.eventLoopDelayMs.max >= 100 && e.data.eventLoopDelayMs.max < 1000
        return counted && blocked
      })
      assert.equal((await fetch(`${server.url}/api/work?ms=9999`)).status, 400)
    },

    'a reconnect with Last-Event-ID gets exactly what it missed': async () => {
      const seen = await feeds[0].next()
      await sleep(INTERVAL * 4)
      const again = await watch({ 'last-event-id': seen.id })
      feeds.push(again)
      const history = await again.next()
      assert.equal(history.event, 'history')
      const ids = history.data.map((s) => s.id)
      assert.ok(ids.length >= 2, `missed ${ids}`)
      assert.deepEqual(ids, ids.map((_, i) => Number(seen.id) + 1 + i))
      assert.equal(history.id, String(ids.at(-1)))
      assert.equal((await again.next((e) => e.event === 'sample' && e.data.watchers === 2)).data.watchers, 2)
    },

    'a closed tab is noticed, and sampling stops with the last watcher': async () => {
      feeds[0].close()
      await feeds[1].next((e) => e.data.watchers === 1)
      feeds[1].close()
      const last = await waitFor('the sampler to stop', async () => {
        const a = await latest()
        await sleep(INTERVAL * 3)
        const b = await latest()
        return a.id === b.id && b
      })
      assert.equal(last.watchers, 1)
    },

    'SIGTERM ends open feeds and the process exits 0 at once': async () => {
      const feed = await watch()
      await feed.next((e) => e.event === 'sample')
      const began = performance.now()
      const exit = server.stop()
      await feed.ended()
      assert.equal(await exit, 0)
      assert.ok(performance.now() - began < 2_000, 'no wait for the feeds')
    },
  },
  async () => {
    for (const feed of feeds) feed.close()
    await server.stop()
  },
)
