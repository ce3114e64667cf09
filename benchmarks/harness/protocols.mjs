// The protocols compare-fair can load a scenario over (`--protocol`): what each contestant is told (`PROTOCOL`,
// and the test certificate's paths), how the harness talks to it to validate it, and which load tool drives it.
import { readFileSync } from 'node:fs'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const fixtures = resolve(root, 'crates/gust-core/tests/fixtures/tls')

/**
 * The certificate every TLS contestant serves (a P-256 test certificate for `localhost` and `127.0.0.1`, signed
 * by a test CA the harness trusts): the same key type for all, so handshakes cost the same work. `--rsa`
 * switches everyone to a self-signed RSA-2048 one.
 */
export function tlsFiles(rsa = false) {
  return rsa
    ? { cert: resolve(fixtures, 'rsa-cert.pem'), key: resolve(fixtures, 'rsa-key.pem') }
    : { cert: resolve(fixtures, 'cert.pem'), key: resolve(fixtures, 'key.pem') }
}
// The RSA certificate is self-signed: trusted as its own authority.
const CA = [readFileSync(resolve(fixtures, 'ca.pem')), readFileSync(resolve(fixtures, 'rsa-cert.pem'))]

/**
 * Each protocol: its URL scheme, whether it is TLS, whether it is HTTP/2, its load tool, and what it measures.
 * `handshake` is HTTPS/1.1 with `Connection: close` on every request: each request pays a full handshake (wrk
 * keeps no TLS session to resume), so requests per second are handshakes per second.
 */
export const PROTOCOLS = {
  h1: { scheme: 'http', tls: false, h2: false, tool: null, about: 'HTTP/1.1, keep-alive' },
  https: { scheme: 'https', tls: true, h2: false, tool: 'wrk', about: 'HTTPS/1.1 (TLS 1.3), keep-alive' },
  handshake: { scheme: 'https', tls: true, h2: false, tool: 'wrk', about: 'HTTPS/1.1 with `Connection: close`: a full TLS 1.3 handshake per request' },
  h2c: { scheme: 'http', tls: false, h2: true, tool: 'h2load', about: 'HTTP/2 over cleartext (prior knowledge)' },
  h2: { scheme: 'https', tls: true, h2: true, tool: 'h2load', about: 'HTTP/2 over TLS 1.3 (ALPN)' },
}

export function protocolOf(name) {
  const p = PROTOCOLS[name]
  if (!p) throw new Error(`unknown protocol ${name}; known: ${Object.keys(PROTOCOLS).join(', ')}`)
  return { name, ...p }
}

/** The environment a contestant starts with for `protocol`. */
export function serverEnv(protocol, rsa) {
  if (protocol.name === 'h1') return {}
  const files = tlsFiles(rsa)
  return { PROTOCOL: protocol.name, ...(protocol.tls ? { TLS_CERT: files.cert, TLS_KEY: files.key } : {}) }
}

/** HTTP/2 sessions the harness keeps per origin while validating, closed by `closeClients()`. */
const sessions = new Map()

export function closeClients() {
  for (const s of sessions.values()) s.close()
  sessions.clear()
}

function session(origin) {
  let s = sessions.get(origin)
  if (!s || s.closed || s.destroyed) {
    s = http2.connect(origin, { ca: CA })
    s.on('error', () => sessions.delete(origin))
    sessions.set(origin, s)
  }
  return s
}

/**
 * One request over `protocol`, trusting the test CA; resolves with `{ status, header(name), text }`. HTTP/1.1
 * goes through node:http or node:https without keep-alive, HTTP/2 through one node:http2 session per origin.
 */
export function request(protocol, url, { method = 'GET', headers = {}, body, timeout = 5000 } = {}) {
  const u = new URL(url)
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${url} within ${timeout} ms`)), timeout)
    const done = (status, h, chunks) => {
      clearTimeout(timer)
      resolvePromise({ status, header: (name) => h[name.toLowerCase()] ?? null, text: Buffer.concat(chunks).toString() })
    }
    const fail = (err) => {
      clearTimeout(timer)
      reject(err)
    }
    if (protocol.h2) {
      const s = session(u.origin)
      s.once('error', fail)
      const stream = s.request({ ':method': method, ':path': `${u.pathname}${u.search}`, ...headers })
      const chunks = []
      let h = {}
      stream.on('response', (r) => (h = r))
      stream.on('data', (d) => chunks.push(d))
      stream.on('end', () => {
        s.off('error', fail)
        done(Number(h[':status']), h, chunks)
      })
      stream.on('error', (err) => {
        s.off('error', fail)
        fail(err)
      })
      stream.end(body)
      return
    }
    const lib = protocol.tls ? https : http
    const req = lib.request(url, { method, headers, ca: CA, agent: false }, (res) => {
      const chunks = []
      res.on('data', (d) => chunks.push(d))
      res.on('end', () => done(res.statusCode, res.headers, chunks))
      res.on('error', fail)
    })
    req.on('error', fail)
    req.end(body)
  })
}
