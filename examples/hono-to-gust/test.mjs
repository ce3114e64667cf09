// The same requests against the Hono app on Hono's own server, on Gust through serve(), and against its native
// Gust port: every answer (status, media type, body, the headers a client acts on) must be the same, and right.
import assert from 'node:assert/strict'

import { checks, sseEvents, start } from '../test-support.mjs'

const KEY = { 'x-api-key': 'dev-key', 'content-type': 'application/json' }
const ORIGIN = 'https://notes.example'

/** The headers compared between the servers (the rest, such as `date` or `content-length`, may differ). */
const COMPARED = ['location', 'access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'vary']

/** Each request of the scenario, in order: [name, path, init]. */
const scenario = [
  ['the root is text', '/'],
  ['the list starts empty', '/notes'],
  ['a write without the key is 401', '/notes', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"x"}' }],
  ['an invalid note is 400 with the issues', '/notes', { method: 'POST', headers: KEY, body: JSON.stringify({ text: '  ', tags: ['Not A Tag'] }) }],
  ['a note is created', '/notes', { method: 'POST', headers: KEY, body: JSON.stringify({ text: '  buy milk ' }) }],
  ['a second one, tagged', '/notes', { method: 'POST', headers: KEY, body: JSON.stringify({ text: 'ship it', tags: ['work'] }) }],
  ['the list filters by tag', '/notes?tag=work'],
  ['one note by id', '/notes/1'],
  ['an unknown id is 404', '/notes/99'],
  ['a delete is 204', '/notes/1', { method: 'DELETE', headers: KEY }],
  ['a deleted note is gone', '/notes/1'],
  ['an unknown path is the app’s 404', '/nowhere'],
  ['a CORS preflight', '/notes', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key' } }],
  ['a cross-origin read', '/notes', { headers: { origin: ORIGIN } }],
]

/** What a client sees of each answer, with the one value that differs by nature (a creation time) checked and masked. */
async function transcript(base) {
  const out = {}
  for (const [name, path, init] of scenario) {
    const res = await fetch(`${base}${path}`, init)
    const type = (res.headers.get('content-type') ?? '').toLowerCase().replace(/;\s*/g, '; ')
    let body = await res.text()
    if (type.startsWith('application/json')) {
      body = JSON.parse(body, (key, value) => {
        if (key !== 'created') return value
        assert.ok(Math.abs(Date.parse(value) - Date.now()) < 60_000, `created: ${value}`)
        return '<time>'
      })
    }
    // Lists compared as lists: Hono writes `a,b`, Gust `a, b`.
    const headers = Object.fromEntries(COMPARED.flatMap((h) => (res.headers.has(h) ? [[h, res.headers.get(h).split(/\s*,\s*/)]] : [])))
    out[name] = { status: res.status, type, body, headers }
  }
  const feed = []
  for await (const e of sseEvents(await fetch(`${base}/events`))) feed.push(e)
  out['the event feed'] = feed
  return out
}

/**
 * Hono's `c.text()` leaves the content type to the runtime (`new Response(text)`: Node's Response adds
 * `text/plain;charset=UTF-8`, Bun's adds none and leaves it to Bun.serve). Once a middleware sets a header after
 * `next()`, as its cors() sets Vary, Hono copies the response into a new one whose body is a stream, and on Bun
 * the type is lost: Bun.serve then sends `application/octet-stream` (honojs/hono#4286, closed as "not bug").
 * Gust's serve() gives the string body its standard type before the copy, so it sends `text/plain` on both
 * runtimes, as the native port does. This checks that one answer's type on each server, then sets it to the
 * native port's so the rest compares.
 */
const BUN = typeof Bun !== 'undefined'
const ROOT_TYPE = {
  'Hono on its own server': BUN ? 'application/octet-stream' : 'text/plain; charset=utf-8',
  'Hono on Gust (serve)': 'text/plain; charset=utf-8',
  'the native Gust port': 'text/plain; charset=utf-8',
}
function rootTypeChecked(name) {
  const copy = structuredClone(transcripts[name])
  assert.equal(copy['the root is text'].type, ROOT_TYPE[name], `${name}: the root's content type`)
  copy['the root is text'].type = 'text/plain; charset=utf-8'
  return copy
}

const servers = {
  'Hono on its own server': await start(new URL('./hono-server.js', import.meta.url)),
  'Hono on Gust (serve)': await start(new URL('./gust-serve.js', import.meta.url)),
  'the native Gust port': await start(new URL('./gust-native.js', import.meta.url)),
}
const transcripts = {}

await checks(
  {
    ...Object.fromEntries(Object.entries(servers).map(([name, server]) => [`${name} answers the scenario`, async () => (transcripts[name] = await transcript(server.url))])),

    'the Hono app answers as it should': async () => {
      const t = rootTypeChecked('Hono on its own server')
      assert.deepEqual(t['the root is text'], { status: 200, type: 'text/plain; charset=utf-8', body: 'Notes API: GET /notes, POST /notes, GET /events', headers: { vary: ['Origin'] } })
      assert.deepEqual(t['a write without the key is 401'].body, { error: 'a valid x-api-key is required' })
      const invalid = t['an invalid note is 400 with the issues']
      assert.equal(invalid.status, 400)
      assert.equal(invalid.body.error, 'Validation failed')
      assert.deepEqual(invalid.body.issues.map((i) => i.path), [['text'], ['tags', 0]])
      const created = t['a note is created']
      assert.equal(created.status, 201)
      assert.deepEqual(created.body, { id: 1, text: 'buy milk', tags: [], created: '<time>' })
      assert.deepEqual(created.headers.location, ['/notes/1'])
      assert.deepEqual(t['the list filters by tag'].body, [{ id: 2, text: 'ship it', tags: ['work'], created: '<time>' }])
      assert.deepEqual(t['an unknown id is 404'], { status: 404, type: 'application/json', body: { error: 'no note 99' }, headers: { vary: ['Origin'] } })
      assert.equal(t['a delete is 204'].status, 204)
      assert.equal(t['a delete is 204'].body, '')
      assert.equal(t['a deleted note is gone'].status, 404)
      assert.deepEqual(t['an unknown path is the app’s 404'].body, { error: 'not found' })
      const preflight = t['a CORS preflight']
      assert.equal(preflight.status, 204)
      assert.deepEqual(preflight.headers['access-control-allow-origin'], [ORIGIN])
      assert.deepEqual(preflight.headers['access-control-allow-methods'], ['GET', 'POST', 'DELETE'])
      assert.deepEqual(preflight.headers['access-control-allow-headers'], ['content-type', 'x-api-key'])
      assert.deepEqual(t['a cross-origin read'].headers['access-control-allow-origin'], [ORIGIN])
      assert.deepEqual(t['the event feed'], [1, 2, 3].map((i) => ({ event: 'count', id: String(i), data: '{"notes":1}' })))
    },

    "Hono on Gust through serve() answers as on its own server (the root's type on Bun aside, above)": async () => {
      assert.deepEqual(rootTypeChecked('Hono on Gust (serve)'), rootTypeChecked('Hono on its own server'))
    },

    'the native Gust port answers exactly as the Hono app, but for one Vary on the preflight': async () => {
      const native = rootTypeChecked('the native Gust port')
      const hono = rootTypeChecked('Hono on its own server')
      // Hono's cors() adds Access-Control-Request-Headers to a preflight's Vary although its allowed headers are
      // a fixed list; Gust's varies the answer on Origin only, which is all it depends on.
      assert.deepEqual(hono['a CORS preflight'].headers.vary, ['Origin', 'Access-Control-Request-Headers'])
      assert.deepEqual(native['a CORS preflight'].headers.vary, ['Origin'])
      native['a CORS preflight'].headers.vary = hono['a CORS preflight'].headers.vary
      assert.deepEqual(native, hono)
    },

    'each stops on SIGTERM': async () => {
      for (const server of Object.values(servers)) assert.equal(await server.stop(), 0)
    },
  },
  async () => {
    for (const server of Object.values(servers)) await server.stop()
  },
)
