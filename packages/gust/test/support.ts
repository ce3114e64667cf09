/** Helpers for end-to-end tests over real sockets on 127.0.0.1. */
import { readFileSync } from 'node:fs'
import http2 from 'node:http2'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

import type { Gust, ListenOptions, Server } from 'gust'

/** Starts `app` on a free port, runs `fn`, and always stops the server. */
export async function serve<T>(app: Gust, fn: (base: string, server: Server) => Promise<T>, options: ListenOptions = {}): Promise<T> {
  const server = await app.listen({ hostname: '127.0.0.1', port: 0, ...options })
  try {
    return await fn(server.url, server)
  } finally {
    await server.stop({ force: true })
  }
}

export interface RawResponse {
  status: number
  headers: [string, string][]
  body: Buffer
  raw: Buffer
}

/** First value of a header in a raw response. */
export function header(res: RawResponse, name: string): string | undefined {
  return res.headers.find(([n]) => n === name)?.[1]
}

/** Parses every complete content-length-framed response in `data`. HEAD responses are read as bodiless. */
export function parseResponses(data: Buffer, bodiless = false): RawResponse[] {
  const out: RawResponse[] = []
  let at = 0
  while (at < data.length) {
    const end = data.indexOf('\r\n\r\n', at)
    if (end === -1) break
    const head = data.toString('latin1', at, end).split('\r\n')
    const status = Number(head[0]!.split(' ')[1])
    const headers = head.slice(1).map((l) => {
      const i = l.indexOf(':')
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()] as [string, string]
    })
    const len = bodiless ? 0 : Number(headers.find(([n]) => n === 'content-length')?.[1] ?? 0)
    if (end + 4 + len > data.length) break
    out.push({ status, headers, body: data.subarray(end + 4, end + 4 + len), raw: data.subarray(at, end + 4 + len) })
    at = end + 4 + len
  }
  return out
}

/** Sends raw bytes and collects what comes back until the server closes or `count` responses arrived. */
export function raw(
  base: string,
  payload: string | Buffer,
  opts: { count?: number; timeoutMs?: number; bodiless?: boolean } = {},
): Promise<{ responses: RawResponse[]; closed: boolean; data: Buffer }> {
  const { port, hostname } = new URL(base)
  const count = opts.count ?? 1
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname)
    const chunks: Buffer[] = []
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const data = Buffer.concat(chunks)
      resolve({ responses: parseResponses(data, opts.bodiless), closed, data })
    }
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 5000)
    socket.on('data', (d) => {
      chunks.push(d)
      if (parseResponses(Buffer.concat(chunks), opts.bodiless).length >= count && !opts.timeoutMs) finish(false)
    })
    socket.on('error', () => finish(true))
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('connect', () => socket.write(payload))
    socket.on('timeout', () => reject(new Error('socket timeout')))
  })
}

/** Resolves when the server closes `socket`, or with false after `ms`. */
export function closedWithin(base: string, setup: (s: net.Socket) => void, ms: number): Promise<boolean> {
  const { port, hostname } = new URL(base)
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => setup(socket))
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(false)
    }, ms)
    const closed = () => {
      clearTimeout(timer)
      resolve(true)
    }
    socket.on('close', closed)
    socket.on('error', () => {})
    socket.resume()
  })
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Resolves once `done()` holds, polling every 10 ms; rejects naming `what` after `ms` (generous: a gate on a slow
 * machine waits for the condition, never for a fixed time).
 */
export async function until(done: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`)
    await sleep(10)
  }
}

/** A handler that holds its requests until `release()`: `entered` counts those that reached it. */
export function holding(answer = 'slow'): { handler: () => Promise<string>; entered: () => number; release: () => void } {
  let entered = 0
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  return {
    handler: async () => {
      entered++
      await held
      return answer
    },
    entered: () => entered,
    release,
  }
}

/** Runs `fn` with console.error captured (and silenced); returns what was logged. */
export async function captureErrors(fn: () => Promise<unknown>): Promise<string[]> {
  const logged: string[] = []
  const original = console.error
  console.error = (...args: unknown[]) => logged.push(args.map(String).join(' '))
  try {
    await fn()
  } finally {
    console.error = original
  }
  return logged
}

/** How a spec reaches its app: over a real socket, or in process through `app.request()` (no socket). */
export interface Client {
  mode: 'socket' | 'in-process'
  /** Serves `app` for `fn`: on a free port, or (in process, with no listen options) nowhere at all. */
  serve: typeof serve
  /** `fetch`, or `app.request()` for a URL under an in-process base. */
  fetch: (input: string, init?: RequestInit) => Promise<Response>
}

/**
 * Registers a spec twice, over a socket and in process: what a test proves with `app.request()` is then
 * checked against what a client over TCP gets, from the same lines.
 */
export function bothWays(fn: (client: Client) => void): void {
  fn({ mode: 'socket', serve, fetch: (input, init) => fetch(input, init) })
  const apps = new Map<string, Gust>()
  let next = 0
  fn({
    mode: 'in-process',
    async serve(app, body, options = {}) {
      if (Object.keys(options).length > 0) return serve(app, body, options)
      const base = `http://in-process-${next++}.test`
      apps.set(base, app)
      try {
        return await body(base, undefined as unknown as Server)
      } finally {
        apps.delete(base)
      }
    },
    fetch(input, init) {
      for (const [base, app] of apps) if (input.startsWith(base)) return app.request(input, init)
      return fetch(input, init)
    },
  })
}

/** A test certificate or key (`crates/gust-core/tests/fixtures/tls`, shared with the Rust tests), as a path. */
export const tlsFixture = (name: string) =>
  fileURLToPath(new URL(`../../../../crates/gust-core/tests/fixtures/tls/${name}`, import.meta.url))
/** The test CA that signed the fixtures' certificates, for clients to trust. */
export const CA = readFileSync(tlsFixture('ca.pem'))
/** `listen()`'s `tls` for `localhost` and `127.0.0.1`. */
export const TLS = { cert: tlsFixture('cert.pem'), key: tlsFixture('key.pem') }

/** An HTTP/2 answer as a test reads it. */
export interface H2Got {
  status: number
  headers: http2.IncomingHttpHeaders
  body: Buffer
}

/** An HTTP/2 session to `url` (h2c for `http:`, ALPN for `https:`), once its SETTINGS are in. */
export function h2Connect(url: string, options: http2.SecureClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, options)
    session.once('connect', () => resolve(session))
    session.once('error', reject)
  })
}

/** One stream on `session` and its whole answer. */
export function h2Request(
  session: http2.ClientHttp2Session,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<H2Got> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':method': init.method ?? 'GET', ...init.headers })
    const chunks: Buffer[] = []
    let headers: http2.IncomingHttpHeaders = {}
    stream.on('response', (h) => (headers = h))
    stream.on('data', (d: Buffer) => chunks.push(d))
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks) }))
    stream.on('error', reject)
    stream.end(init.body)
  })
}

/** Counts the bytes of a body stream, checking each is `byte`. */
export async function countBytes(body: ReadableStream<Uint8Array>, byte: number): Promise<number> {
  let n = 0
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    if (chunk[0] !== byte || chunk[chunk.length - 1] !== byte) throw new Error('a chunk with the wrong bytes')
    // A chunk lent as a view of its batch may share it with its own record's head only, never with another
    // request's headers or body (which `chunk.buffer` would expose).
    if (chunk.buffer.byteLength > chunk.byteLength + 20) throw new Error(`a chunk's buffer holds ${chunk.buffer.byteLength} bytes`)
    n += chunk.byteLength
  }
  return n
}
