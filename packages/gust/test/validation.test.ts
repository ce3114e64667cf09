import assert from 'node:assert/strict'

import { Gust, ValidationError } from 'gust'
import * as v from 'valibot'
import { z } from 'zod'

import { describe, runtime, test } from './framework.js'
import { bothWays } from './support.js'

const json = (body: unknown) => ({
  method: 'POST',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
})

bothWays((s) => {
  describe(`validation with Standard Schema (${runtime}, ${s.mode})`, () => {
    test('Zod and Valibot schemas validate and transform params, query, headers, cookies and JSON', async () => {
      const app = new Gust().post(
        '/users/:id',
        (c) =>
          c.json({
            params: c.req.valid('params'),
            query: c.req.valid('query'),
            headers: c.req.valid('headers'),
            cookies: c.req.valid('cookies'),
            json: c.req.valid('json'),
          }),
        {
          validate: {
            params: z.object({ id: z.coerce.number().int() }),
            query: v.object({ page: v.pipe(v.string(), v.transform(Number)) }),
            headers: z.object({ 'x-tenant': z.string().min(1) }),
            cookies: z.object({ session: z.string() }),
            json: z.object({ name: z.string(), tags: z.array(z.string()).default([]) }),
          },
        },
      )
      await s.serve(app, async (base) => {
        const ok = await s.fetch(`${base}/users/7?page=2`, {
          ...json({ name: 'ann' }),
          headers: { 'content-type': 'application/json', 'x-tenant': 't1', cookie: 'session=abc' },
        })
        assert.equal(ok.status, 200)
        const body = (await ok.json()) as Record<string, Record<string, unknown>>
        assert.deepEqual(body.params, { id: 7 })
        assert.deepEqual(body.query, { page: 2 })
        assert.equal(body.headers!['x-tenant'], 't1')
        assert.deepEqual(body.cookies, { session: 'abc' })
        assert.deepEqual(body.json, { name: 'ann', tags: [] })
      })
    })

    test('a failure is a 400 with a stable JSON shape naming the target and each issue path', async () => {
      let ran = false
      const app = new Gust().post(
        '/items',
        { validate: { json: z.object({ name: z.string(), items: z.array(z.object({ qty: z.number().positive() })) }) } },
        (c) => {
          ran = true
          return c.json(c.req.valid('json'))
        },
      )
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/items`, json({ name: 1, items: [{ qty: 1 }, { qty: -1 }] }))
        assert.equal(res.status, 400)
        assert.equal(res.headers.get('content-type'), 'application/json')
        const body = (await res.json()) as { error: string; target: string; issues: { message: string; path: (string | number)[] }[] }
        assert.equal(body.error, 'Validation failed')
        assert.equal(body.target, 'json')
        assert.deepEqual(body.issues.map((i) => i.path), [['name'], ['items', 1, 'qty']])
        assert.ok(body.issues.every((i) => typeof i.message === 'string' && i.message.length > 0))
        assert.equal(ran, false, 'the handler never sees invalid input')
        // Not JSON at all, or JSON under another content type: the same shape, before any parsing.
        const text = await s.fetch(`${base}/items`, { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } })
        assert.equal(text.status, 400)
        assert.equal(((await text.json()) as { target: string }).target, 'json')
        const broken = await s.fetch(`${base}/items`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } })
        assert.equal(broken.status, 400)
        assert.match(await broken.text(), /Malformed JSON/)
      })
    })

    test('forms validate as objects: repeated fields become arrays, files stay files; async schemas work', async () => {
      const app = new Gust().post(
        '/form',
        (c) => {
          const form = c.req.valid('form')
          return c.json({ name: form.name, tags: form.tags, file: `${form.file.name}:${form.file.size}` })
        },
        {
          validate: {
            form: z.object({
              name: z.string().refine(async (n) => n !== 'taken', 'name taken'),
              tags: z.array(z.string()),
              file: z.instanceof(File),
            }),
          },
        },
      )
      await s.serve(app, async (base) => {
        const form = new FormData()
        form.append('name', 'ann')
        form.append('tags', 'a')
        form.append('tags', 'b')
        form.append('file', new File(['12345'], 'f.txt'))
        const res = await s.fetch(`${base}/form`, { method: 'POST', body: form })
        assert.deepEqual(await res.json(), { name: 'ann', tags: ['a', 'b'], file: 'f.txt:5' })
        const taken = new FormData()
        taken.append('name', 'taken')
        const bad = await s.fetch(`${base}/form`, { method: 'POST', body: taken })
        assert.equal(bad.status, 400)
        const body = (await bad.json()) as { issues: { path: string[] }[] }
        assert.deepEqual(body.issues.map((i) => i.path[0]).sort(), ['file', 'name', 'tags'])
      })
    })

    test('onError sees a ValidationError and may reshape it; validation runs after middleware', async () => {
      const order: string[] = []
      const app = new Gust()
        .use(async (_c, next) => {
          order.push('mw')
          await next()
        })
        .get('/q', (c) => c.json(c.req.valid('query')), { validate: { query: z.object({ n: z.coerce.number() }) } })
        .onError((err, c) => {
          order.push('onError')
          if (err instanceof ValidationError) return c.json({ problems: err.issues.length, where: err.target }, 422)
          return c.text('other', 500)
        })
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/q?n=abc`)
        assert.equal(res.status, 422)
        assert.deepEqual(await res.json(), { problems: 1, where: 'query' })
        assert.deepEqual(order, ['mw', 'onError'])
      })
    })
  })
})

describe(`validation: mistakes are named (${runtime})`, () => {
  test('a validate option that is not a schema, or names an unknown target, throws at registration', () => {
    const app = new Gust()
    assert.throws(() => app.post('/a', () => '', { validate: { json: { parse() {} } } as never }), /validate\.json is not a Standard Schema \(v1\) validator \(a schema of Zod ≥ 3\.24, Valibot ≥ 1 or ArkType ≥ 2 is one\)$/)
    assert.throws(() => app.post('/b', () => '', { validate: { body: z.string() } as never }), /cannot validate "body"; known targets/)
    assert.throws(() => app.post('/c', () => '', { validate: 'zod' as never }), /option "validate" must be an object/)
  })

  test('c.req.valid() for a target the route does not validate throws naming it', async () => {
    const app = new Gust().get('/x', (c) => {
      try {
        c.req.valid('json' as never)
        return 'no error'
      } catch (err) {
        return (err as Error).message
      }
    })
    const res = await app.request('/x')
    assert.match(await res.text(), /c\.req\.valid\('json'\): this route has no "json" schema/)
  })
})
