// The scenario for node:http, node:https and node:http2's compatibility API (the `(req, res)` handler every
// Node framework builds on): node-http.js and node-http2.js.

/** 16 KiB of `x`: a download's chunk. */
const X16 = Buffer.alloc(16 * 1024, 'x')

export const handler = (req, res) => {
  const q = req.url.indexOf('?')
  const path = q === -1 ? req.url : req.url.slice(0, q)
  if (req.method === 'GET' && path === '/') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Hi')
  } else if (req.method === 'GET' && path.startsWith('/id/')) {
    const name = new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1)).get('name')
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-powered-by': 'benchmark' })
      .end(`${decodeURIComponent(path.slice(4))} ${name}`)
  } else if (req.method === 'GET' && path.startsWith('/stream/')) {
    const n = decodeURIComponent(path.slice(8))
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    for (let i = 1; i <= 8; i++) res.write(`${n}:${i}\n`)
    res.end()
  } else if (req.method === 'GET' && path.startsWith('/download/')) {
    const n = decodeURIComponent(path.slice(10))
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    res.write(`${n}:`)
    for (let i = 0; i < 64; i++) res.write(X16)
    res.end(`:${n}\n`)
  } else if (req.method === 'GET' && path.startsWith('/sse/')) {
    const n = decodeURIComponent(path.slice(5))
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    for (let i = 1; i <= 16; i++) res.write(`data: ${n}:${i}\n\n`)
    res.end()
  } else if (req.method === 'POST' && path === '/json') {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      let body
      try {
        body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString()))
      } catch {
        res.writeHead(400).end('Malformed JSON')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(body)
    })
  } else {
    res.writeHead(404).end('Not Found')
  }
}
