// Plain node:http, the floor every Node framework builds on; node:https with TLS_CERT and TLS_KEY
// (compare-fair --protocol https, handshake).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'

import { handler } from './node-handler.js'

const server = process.env.TLS_CERT
  ? https.createServer({ cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) }, handler)
  : http.createServer(handler)
server.listen(Number(process.env.PORT ?? 3000))
