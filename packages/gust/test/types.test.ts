/**
 * Type tests: compiled by `tsc` in `make test`; a wrong inference is a compile error. The runtime test checks
 * that the keys the types promise are the keys requests carry.
 */
import assert from 'node:assert/strict'

import { Gust, type Params, type ParamKeys } from 'gust'
import * as v from 'valibot'
import { z } from 'zod'

import { test } from './framework.js'
import { serve } from './support.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expectType<T extends true>(_: T = true as T): void {}

expectType<Equal<ParamKeys<'/id/:id'>, 'id'>>()
expectType<Equal<ParamKeys<'/a/:x/b/:y'>, 'x' | 'y'>>()
expectType<Equal<ParamKeys<'/files/*'>, '*'>>()
expectType<Equal<ParamKeys<'/files/*rest'>, 'rest'>>()
expectType<Equal<ParamKeys<'/static'>, never>>()
expectType<Equal<Params<'/u/:id/*'>, { id: string; '*': string }>>()
expectType<Equal<Params<string>, Record<string, string>>>()

const app = new Gust()
  .get('/id/:id/:name', (c) => {
    expectType<Equal<typeof c.params, { id: string; name: string }>>()
    expectType<Equal<typeof c.params.id, string>>()
    // @ts-expect-error: `other` is not a parameter of this route
    void c.params.other
    expectType<Equal<ReturnType<typeof c.req.param<'name'>>, string>>()
    return c.json(c.params)
  })
  .post('/wild/*', (c) => {
    expectType<Equal<typeof c.params, { '*': string }>>()
    return c.json({ rest: c.params['*'] })
  })
  .get('/static', (c) => {
    expectType<Equal<typeof c.query.anything, string | undefined>>()
    return ''
  })

test('the parameters the types promise are the ones a request carries', async () => {
  await serve(app, async (base) => {
    assert.deepEqual(await (await fetch(`${base}/id/7/ann`)).json(), { id: '7', name: 'ann' })
    assert.deepEqual(await (await fetch(`${base}/wild/a/b`, { method: 'POST' })).json(), { rest: 'a/b' })
  })
})

// Params through prefixes: basePath() views type their handlers with the whole path.
const v1 = new Gust().basePath('/v1/:tenant')
v1.get('/users/:id', (c) => {
  expectType<Equal<typeof c.params, { tenant: string; id: string }>>()
  return c.json(c.params)
})
v1.basePath('/admin').get('/', (c) => {
  expectType<Equal<typeof c.params, { tenant: string }>>()
  return ''
})

// Validated values are typed from the schemas' outputs, options before or after the handler.
const User = z.object({ name: z.string(), age: z.coerce.number() })
const Page = v.object({ page: v.pipe(v.string(), v.transform(Number)) })
new Gust()
  .post(
    '/users/:id',
    (c) => {
      const body = c.req.valid('json')
      expectType<Equal<typeof body, { name: string; age: number }>>()
      expectType<Equal<ReturnType<typeof c.req.valid<'query'>>, { page: number }>>()
      // @ts-expect-error: no headers schema on this route
      c.req.valid('headers')
      expectType<Equal<typeof c.params, { id: string }>>()
      return body
    },
    { validate: { json: User, query: Page } },
  )
  .get('/search', { validate: { query: Page } }, (c) => {
    expectType<Equal<ReturnType<typeof c.req.valid<'query'>>, { page: number }>>()
    return ''
  })

// route(): a sub-app's handlers keep their own params; mounting returns the parent, still chainable and typed.
const posts = new Gust().get('/:postId', (c) => {
  expectType<Equal<typeof c.params, { postId: string }>>()
  return c.params.postId
})
const mounted = new Gust().route('/users/:id/posts', posts).get('/after/:x', (c) => {
  expectType<Equal<typeof c.params, { x: string }>>()
  return ''
})
// The returned app records its routes for `gust/client`, and is still a `Gust` wherever one is expected.
const plainApp: Gust = mounted
void plainApp
