// node:http2 through its compatibility API, as Fastify and Express-style code use it: h2c by prior knowledge
// on a plain port, or over TLS with TLS_CERT and TLS_KEY (ALPN h2, HTTP/1.1 allowed). Runs under node and bun.
import { readFileSync } from 'node:fs'
import http2 from 'node:http2'

import { handler } from './node-handler.js'

const server = process.env.TLS_CERT
  ? http2.createSecureServer({ cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY), allowHTTP1: true }, handler)
  : http2.createServer(handler)
// A client that breaks a session must not take the server down (node:http2 throws on unhandled session errors).
server.on('sessionError', () => {})
server.listen(Number(process.env.PORT ?? 3000))
