// WebSockets over HTTP/2 (RFC 8441) in a real browser: a Gust app serves a page over HTTPS (HTTP/2 by ALPN)
// whose script opens `new WebSocket('wss://…')`. Chromium sends it as an extended CONNECT on the connection it
// already holds, because the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL; the app's `upgrade` sees the
// method and HTTP version, and the socket echoes a text message and 1 MiB of bytes exactly. Headless Chromium
// (installed by `make test-browser`) loads the page, which posts its results back to the app; headless Chromium's
// virtual clock (`--dump-dom` with a time budget) stalls on sockets, so the wait is in real time, bounded.
//
//   node scripts/websocket-browser.mjs [--chromium /usr/bin/chromium]
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Gust } from 'gust'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const fixture = (name) => join(root, 'crates', 'gust-core', 'tests', 'fixtures', 'tls', name)
const args = process.argv.slice(2)
const chromium = args.includes('--chromium') ? args[args.indexOf('--chromium') + 1] : 'chromium'

const page = `<!doctype html><meta charset="utf-8"><title>ws</title>
<script type="module">
const results = []
try {
  const ws = new WebSocket('wss://' + location.host + '/echo')
  ws.binaryType = 'arraybuffer'
  const next = () => new Promise((resolve, reject) => {
    ws.onmessage = (e) => resolve(e.data)
    ws.onerror = () => reject(new Error('socket error'))
  })
  results.push(await next())
  ws.send('héllo')
  results.push(await next())
  // Far past HTTP/2's initial 64 KiB window: window updates must flow both ways.
  const big = new Uint8Array(1 << 20)
  for (let i = 0; i < big.length; i++) big[i] = i % 251
  ws.send(big)
  const back = new Uint8Array(await next())
  results.push(back.length === big.length && back.every((b, i) => b === big[i]) ? 'bytes exact' : 'bytes differ')
  const closed = new Promise((resolve) => (ws.onclose = (e) => resolve(e.code)))
  ws.close(1000)
  results.push('closed ' + (await closed))
} catch (err) {
  results.push('failed ' + err)
}
await fetch('/result', { method: 'POST', body: JSON.stringify(results) })
</script>`

let report
const reported = new Promise((resolve) => (report = resolve))
const app = new Gust()
  .get('/', (c) => c.html(page))
  .post('/result', async (c) => {
    report(await c.req.text())
    return c.body(null, 204)
  })
  .ws('/echo', {
    upgrade: (c) => ({ how: `${c.req.method} HTTP/${c.req.httpVersion}` }),
    open: (ws) => ws.send(`opened by ${ws.data.how}`),
    message: (ws, msg) => ws.send(msg),
  })

const server = await app.listen({ hostname: '127.0.0.1', port: 0, tls: { cert: fixture('cert.pem'), key: fixture('key.pem') } })
const browser = spawn(
  chromium,
  [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    // The test certificate's CA is not the system's.
    '--ignore-certificate-errors',
    `https://localhost:${server.port}/`,
  ],
  { stdio: 'ignore' },
)
try {
  const timeout = new Promise((resolve) => setTimeout(() => resolve('(no result within 60 s)'), 60_000).unref())
  const text = await Promise.race([reported, timeout])
  const expected = JSON.stringify(['opened by CONNECT HTTP/2.0', 'héllo', 'bytes exact', 'closed 1000'])
  if (text !== expected) {
    console.error(`websocket-browser: expected\n  ${expected}\ngot\n  ${text}`)
    process.exitCode = 1
  } else {
    console.log('websocket-browser: headless Chromium opened a WebSocket over HTTP/2 (RFC 8441): text and 1 MiB of bytes echoed exactly, closed 1000')
  }
} finally {
  browser.kill('SIGKILL')
  await server.stop({ force: true })
}
