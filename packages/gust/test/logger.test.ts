import assert from 'node:assert/strict'

import { Gust, HTTPException, logger } from 'gust'

import { describe, runtime, test } from './framework.js'
import { bothWays, captureErrors } from './support.js'

/** An app logging into an array, and the lines it logged. */
function logged(build: (app: Gust) => Gust): { app: Gust; lines: string[] } {
  const lines: string[] = []
  return { app: build(new Gust().use(logger((line) => lines.push(line)))), lines }
}

/** The time at the end of a response line: whole milliseconds under a second, else seconds with one decimal. */
const TIME = '(\\d{1,3}ms|\\d+\\.\\ds)'

bothWays((s) => {
  describe(`logger() (${runtime}, ${s.mode})`, () => {
    test('logs the request when it arrives and the response when it is ready', async () => {
      const { app, lines } = logged((app) =>
        app.get('/hello', (c) => {
          lines.push('handler')
          return c.text('hi')
        }),
      )
      await s.serve(app, async (base) => {
        assert.equal(await (await s.fetch(`${base}/hello`)).text(), 'hi')
      })
      assert.equal(lines.length, 3)
      assert.equal(lines[0], '<-- GET /hello')
      assert.equal(lines[1], 'handler')
      assert.match(lines[2]!, new RegExp(`^--> GET /hello 200 ${TIME}$`))
    })

    test('shows the query string, the method, and the status of a fixed route or a 404', async () => {
      const { app, lines } = logged((app) => app.get('/fixed', 'Hi').post('/search', (c) => c.text('', 201)))
      await s.serve(app, async (base) => {
        await (await s.fetch(`${base}/search?q=a%20b&page=2`, { method: 'POST' })).text()
        await (await s.fetch(`${base}/fixed`)).text()
        assert.equal((await s.fetch(`${base}/missing?x=1`)).status, 404)
      })
      assert.equal(lines[0], '<-- POST /search?q=a%20b&page=2')
      assert.match(lines[1]!, new RegExp(`^--> POST /search\\?q=a%20b&page=2 201 ${TIME}$`))
      assert.match(lines[3]!, new RegExp(`^--> GET /fixed 200 ${TIME}$`))
      assert.equal(lines[4], '<-- GET /missing?x=1')
      assert.match(lines[5]!, new RegExp(`^--> GET /missing\\?x=1 404 ${TIME}$`))
    })

    test('a thrown error is logged as 500 and still reaches the error handler', async () => {
      const { app, lines } = logged((app) =>
        app.get('/boom', () => {
          throw new Error('boom')
        }),
      )
      const errors = await captureErrors(() =>
        s.serve(app, async (base) => {
          const res = await s.fetch(`${base}/boom`)
          assert.equal(res.status, 500)
          assert.equal(await res.text(), 'Internal Server Error')
        }),
      )
      assert.match(lines[1]!, new RegExp(`^--> GET /boom 500 ${TIME}$`))
      assert.ok(errors.some((e) => e.includes('boom')), 'the default error handler saw the error')
    })

    test("an HTTPException is logged with its status", async () => {
      const { app, lines } = logged((app) =>
        app.get('/admin', async () => {
          await new Promise((r) => setTimeout(r, 1))
          throw new HTTPException(403, 'Forbidden')
        }),
      )
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/admin`)
        assert.equal(res.status, 403)
        assert.equal(await res.text(), 'Forbidden')
      })
      assert.match(lines[1]!, new RegExp(`^--> GET /admin 403 ${TIME}$`))
    })

    test('a second or more is shown in seconds with one decimal', async () => {
      const { app, lines } = logged((app) => app.get('/slow', () => new Promise((r) => setTimeout(() => r('late'), 1050))))
      await s.serve(app, async (base) => {
        await (await s.fetch(`${base}/slow`)).text()
      })
      assert.match(lines[1]!, /^--> GET \/slow 200 1\.\ds$/)
    })

    test('prints with console.log by default, and refuses a print that is not a function', async () => {
      const app = new Gust().use(logger()).get('/', 'x')
      const printed: string[] = []
      const original = console.log
      console.log = (...args: unknown[]) => printed.push(args.map(String).join(' '))
      try {
        await s.serve(app, async (base) => {
          await (await s.fetch(`${base}/`)).text()
        })
      } finally {
        console.log = original
      }
      // A terminal gets a coloured status; compare without the colour codes.
      const plain = printed.map((line) => line.replace(/\x1b\[\d+m/g, ''))
      assert.equal(plain[0], '<-- GET /')
      assert.match(plain[1]!, new RegExp(`^--> GET / 200 ${TIME}$`))
      assert.throws(() => logger('yes' as never), /logger\(\) takes a function that prints a line, got string/)
    })
  })
})
