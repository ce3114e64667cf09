// `gust/client` in a real browser: a Gust app serves a page whose module script imports the client's built file
// (dist/bundle/client.js, as the package ships it: it imports nothing) and calls the app's routes with it —
// a path parameter, a query, a JSON body, a 404 — then writes what it got into the page. Headless Chromium (from
// Debian's packages, installed by `make test-client-browser`) loads the page, and the DOM it dumps must hold
// the expected answers.
//
//   node scripts/client-browser.mjs [--chromium /usr/bin/chromium]
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

import { Gust } from 'gust'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const chromium = args.includes('--chromium') ? args[args.indexOf('--chromium') + 1] : 'chromium'

const page = `<!doctype html><meta charset="utf-8"><title>client</title>
<pre id="out">waiting</pre>
<script type="module">
import { client } from '/client.js'
const out = document.getElementById('out')
try {
  const api = client(location.origin)
  const user = await api.get('/users/:id', { params: { id: 'a b' }, query: { fields: ['id', 'name'] } })
  const created = await api.post('/users', { json: { name: 'Grace' } })
  const missing = await api.get('/users/:id', { params: { id: 'nobody' } })
  out.textContent = 'result ' + JSON.stringify([user.status, await user.json(), created.status, await created.json(), missing.status])
} catch (err) {
  out.textContent = 'failed ' + err
}
</script>`

const app = new Gust()
  .get('/', (c) => c.html(page))
  .get('/client.js', (c) => c.file(join(root, 'packages', 'gust', 'dist', 'bundle', 'client.js'), { contentType: 'text/javascript' }))
  .get('/users/:id', (c) =>
    c.params.id === 'nobody' ? c.json({ error: 'no such user' }, 404) : c.json({ id: c.params.id, fields: c.req.queries('fields') ?? [] }),
  )
  .post('/users', async (c) => c.json({ created: (await c.req.json()).name }, 201))

const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
try {
  const { stdout } = await promisify(execFile)(
    chromium,
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--virtual-time-budget=10000', '--dump-dom', `${server.url}/`],
    { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
  )
  const match = /<pre id="out">([^<]*)<\/pre>/.exec(stdout)
  const text = match?.[1].replaceAll('&quot;', '"') ?? '(no output element)'
  const expected = `result ${JSON.stringify([200, { id: 'a b', fields: ['id', 'name'] }, 201, { created: 'Grace' }, 404])}`
  if (text !== expected) {
    console.error(`client-browser: expected\n  ${expected}\ngot\n  ${text}`)
    process.exitCode = 1
  } else {
    console.log('client-browser: gust/client ran in headless Chromium: path parameter, query, JSON body and 404 as typed')
  }
} finally {
  await server.stop({ force: true })
}
