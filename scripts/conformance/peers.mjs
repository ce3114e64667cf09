// The peers the conformance suites run against beside Gust, each the way its users set it up: an echo WebSocket
// server with permessage-deflate, and an HTTP/2 server. `node peers.mjs <kind>` or `bun peers.mjs <kind>`; prints
// `listening <port>`. Kinds: bun-ws (Bun.serve's ServerWebSocket), ws (the ws package on node:http),
// bun-h2 (Bun.serve with http2 over TLS), node-h2 (node:http2 over TLS), node-h2c (node:http2, cleartext),
// bun-h1 and node-h1 (Bun.serve and node:http serving what the HTTP/1.1 suites ask for).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const kind = process.argv[2]
const [context] = process.argv.slice(3)
const fixture = (name) => fileURLToPath(new URL(`../../crates/gust-core/tests/fixtures/tls/${name}`, import.meta.url))
// Section 13 offers every window size and context takeover: context kept both ways where the peer can.
const dedicated = context === 'dedicated'

async function readBody(req) {
  let n = 0
  for await (const chunk of req) n += chunk.length
  return n
}

if (kind === 'bun-ws') {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response('Not Found', { status: 404 })),
    websocket: {
      maxPayloadLength: 64 * 1024 * 1024,
      perMessageDeflate: dedicated ? { compress: 'dedicated', decompress: 'dedicated' } : true,
      message: (ws, msg) => ws.send(msg, true),
    },
  })
  console.log(`listening ${server.port}`)
} else if (kind === 'ws') {
  // The benchmarks' copy of ws (a dependency of the benchmarks workspace, not of Gust).
  const { WebSocketServer } = createRequire(new URL('../../benchmarks/package.json', import.meta.url))('ws')
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    maxPayload: 64 * 1024 * 1024,
    perMessageDeflate: { serverNoContextTakeover: !dedicated, clientNoContextTakeover: !dedicated, threshold: 0 },
  })
  wss.on('connection', (ws) => {
    // As ws's README sets it up: a protocol error closes the socket with its code and is reported here.
    ws.on('error', () => {})
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
  })
  wss.on('listening', () => console.log(`listening ${wss.address().port}`))
} else if (kind === 'bun-h2') {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    http2: true,
    tls: { cert: Bun.file(fixture('cert.pem')), key: Bun.file(fixture('key.pem')) },
    fetch: async (req) => new Response(`got ${(await req.arrayBuffer()).byteLength}`),
  })
  console.log(`listening ${server.port}`)
} else if (kind === 'node-h2' || kind === 'node-h2c') {
  const http2 = await import('node:http2')
  const handler = async (req, res) => {
    try {
      res.end(`got ${await readBody(req)}`)
    } catch {
      // a stream the suite resets mid-body
    }
  }
  const server =
    kind === 'node-h2'
      ? http2.createSecureServer({ cert: readFileSync(fixture('cert.pem')), key: readFileSync(fixture('key.pem')) }, handler)
      : http2.createServer(handler)
  server.on('error', () => {})
  server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`))
} else if (kind === 'bun-h1') {
  // What the HTTP/1.1 suites ask of a server (scripts/conformance/http11probe-cases.mjs): `/` answered and its
  // POST echoed, `/echo` listing the request's headers, `/cookie` its cookies.
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const { pathname } = new URL(req.url)
      if (pathname === '/' && req.method === 'POST') return new Response(await req.text())
      if (pathname === '/') return new Response('OK')
      if (pathname === '/echo') return new Response(headerLines(req.headers))
      if (pathname === '/cookie') return new Response(cookieLines(req.headers.get('cookie')))
      return new Response('Not Found', { status: 404 })
    },
  })
  console.log(`listening ${server.port}`)
} else if (kind === 'node-h1') {
  const http = await import('node:http')
  const server = http.createServer((req, res) =>
    answer(req, res).catch(() => {
      // An odd target or header the handler could not read (as an app would answer it).
      if (!res.headersSent) res.statusCode = 500
      res.end()
    }),
  )
  async function answer(req, res) {
    const { pathname } = new URL(req.url, 'http://x')
    if (pathname === '/' && req.method === 'POST') {
      const parts = []
      for await (const chunk of req) parts.push(chunk)
      return res.end(Buffer.concat(parts))
    }
    if (pathname === '/') return res.end('OK')
    if (pathname === '/echo') return res.end(headerLines(new Headers(req.headers)))
    if (pathname === '/cookie') return res.end(cookieLines(req.headers.cookie))
    res.statusCode = 404
    res.end('Not Found')
  }
  server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`))
} else {
  throw new Error(`unknown peer ${kind}`)
}

/** The request's headers, one `name: value` per line. */
function headerLines(headers) {
  let out = ''
  headers.forEach((value, name) => (out += `${name}: ${value}\n`))
  return out
}

/** A Cookie header's pairs, one `name=value` per line. */
function cookieLines(cookie) {
  return (cookie ?? '')
    .split(';')
    .map((p) => p.trimStart())
    .filter((p) => p.includes('='))
    .join('\n')
}
