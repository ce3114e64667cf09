/**
 * How the one-thread engine is woken: on Node by libuv watching its descriptor, on Bun (Linux) by Bun's own loop
 * watching a pipe an io_uring writes to, and on Bun where that cannot be set up (or `GUST_IO_URING=0`) by a
 * waiting thread. Each way must carry requests, engine timers that fire while no client speaks, and a stop.
 */
import assert from 'node:assert/strict'
import { readdirSync, readlinkSync } from 'node:fs'

import { Gust } from 'gust'

import { describe, isBun, runtime, test } from './framework.js'
import { closedWithin, serve } from './support.js'

const local = process.platform !== 'win32'

/** This process's io_uring instances (Linux): how the test tells which wake-up Bun got. */
function rings(): number {
  let n = 0
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:[io_uring]') n++
    } catch {
      // Closed meanwhile (the listing's own descriptor).
    }
  }
  return n
}
const wakes = [
  { name: 'the default wake-up', env: undefined },
  { name: 'the waiting thread (GUST_IO_URING=0)', env: '0' },
]

describe(`the one-thread engine's wake-up (${runtime})`, () => {
  for (const { name, env } of wakes) {
    test(`${name}: keep-alive requests, an async answer, a handler timeout and a header timeout with nobody speaking, a stop`, async () => {
      if (!local) return
      const saved = process.env.GUST_IO_URING
      if (env === undefined) delete process.env.GUST_IO_URING
      else process.env.GUST_IO_URING = env
      try {
        const app = new Gust()
          .get('/n/:n', (c) => `n ${c.params.n}`)
          .get('/later', async () => {
            await new Promise((r) => setTimeout(r, 20))
            return 'later'
          })
          .get('/never', () => new Promise<string>(() => {}))
        const before = process.platform === 'linux' ? rings() : 0
        await serve(
          app,
          async (base, server) => {
            assert.equal(server.engine, 'one-thread')
            // On Bun (Linux) the default wake-up is the ring, and GUST_IO_URING=0 leaves it out; Node needs none.
            if (isBun && process.platform === 'linux') assert.equal(rings() - before, env === undefined ? 1 : 0, 'io_uring instances made')
            // One keep-alive connection: each request wakes a loop that went idle after the last answer.
            for (let i = 0; i < 50; i++) assert.equal(await (await fetch(`${base}/n/${i}`)).text(), `n ${i}`)
            assert.equal(await (await fetch(`${base}/later`)).text(), 'later')
            // The engine's own timers, with no client traffic to wake it: the handler timeout answers 503 ...
            const started = Date.now()
            const res = await fetch(`${base}/never`)
            assert.equal(res.status, 503)
            assert.ok(Date.now() - started >= 250, `503 after ${Date.now() - started} ms, before the 300 ms timeout`)
            // ... and a head that never ends is cut off.
            assert.ok(await closedWithin(base, (s) => s.write('GET / HTTP/1.1\r\nHost: x\r\n'), 10_000), 'an unfinished head was not cut off')
          },
          { engine: 'one-thread', handlerTimeout: 300, headerTimeout: 400 },
        )
      } finally {
        if (saved === undefined) delete process.env.GUST_IO_URING
        else process.env.GUST_IO_URING = saved
      }
    })
  }

  test('GUST_IO_URING takes 0 or 1: anything else rejects listen(), naming the variable', async () => {
    const saved = process.env.GUST_IO_URING
    process.env.GUST_IO_URING = 'yes'
    try {
      await assert.rejects(new Gust().get('/', () => 'x').listen({ port: 0 }), /GUST_IO_URING must be '0' or '1', got "yes"/)
    } finally {
      if (saved === undefined) delete process.env.GUST_IO_URING
      else process.env.GUST_IO_URING = saved
    }
  })
})
