// Idle keep-alive connections: what each one costs a server in memory while it waits for its next request.
import net from 'node:net'
import http2 from 'node:http2'
import tls from 'node:tls'
import { readFileSync } from 'node:fs'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** The resident set of a process, in KiB. */
export function rssKb(pid) {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1])
}

/**
 * Opens `count` connections to `port`, sends one `GET /` on each (so each is past its first request, as a real
 * keep-alive client is), waits until every answer is in and the server has settled, and reads how much the
 * server's RSS grew. Connections are opened 500 at a time, so the accept queue never overflows.
 *
 * A warm-up comes first: a thousand connections (at most `count`) take one request each and close, so that what
 * a server loads or grows once (its code paged in on first use: over 5 MB of Bun's own binary for a JavaScript
 * handler, a pool sized to the burst) is in the reading before, and the growth is what the idle connections hold.
 */
export async function measureIdle(pid, port, count, protocol = 'h1') {
  await sleep(500)
  const warm = await openIdle(port, Math.min(count, WARM_UP), protocol)
  warm.close()
  await sleep(1000)
  const before = rssKb(pid)
  const idle = await openIdle(port, count, protocol)
  await sleep(1000)
  const after = rssKb(pid)
  // Closed before the reading (a server's idle timeout): counted in `failed`, since they were not held idle.
  const closed = idle.closed
  idle.close()
  await sleep(200)
  return { connections: count, answered: idle.answered, failed: idle.failed + closed, ...growth(before, after, idle.answered - closed, 'kb_per_connection') }
}

/** Connections of the warm-up before the reading. */
export const WARM_UP = 1000

/**
 * `count` connections to `port` over `protocol`, each past one `GET /`, once every answer is in (or a minute has
 * passed): `{ answered, failed, closed, close() }`.
 */
export async function openIdle(port, count, protocol = 'h1') {
  const sockets = []
  const seen = { answered: 0, failed: 0, closed: 0 }
  for (let i = 0; i < count; i++) {
    if (protocol === 'h2' || protocol === 'h2c') {
      // An HTTP/2 session past one stream, as a browser's is between page loads.
      const session = http2.connect(`${protocol === 'h2' ? 'https' : 'http'}://127.0.0.1:${port}`, { rejectUnauthorized: false })
      session.on('error', () => seen.failed++)
      session.on('close', () => seen.closed++)
      const stream = session.request({ ':path': '/' })
      stream.on('error', () => {})
      stream.once('response', () => seen.answered++)
      stream.resume()
      stream.end()
      sockets.push({ destroy: () => session.destroy() })
    } else {
      const s = protocol === 'https' ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1')
      s.setNoDelay(true)
      s.on('error', () => seen.failed++)
      s.on('close', () => seen.closed++)
      s.once('data', () => seen.answered++)
      s.write('GET / HTTP/1.1\r\nHost: bench\r\n\r\n')
      sockets.push(s)
    }
    // TLS handshakes cost the server more than a TCP accept: smaller steps, so none waits past a timeout.
    const step = protocol === 'h1' || protocol === 'h2c' ? 500 : 100
    if (i % step === step - 1) await sleep(50)
  }
  for (let t = 0; t < 600 && seen.answered + seen.failed < count; t++) await sleep(100)
  return {
    get answered() {
      return seen.answered
    },
    get failed() {
      return seen.failed
    },
    /** Connections the server (or an error) has closed so far: they no longer count as idle. */
    get closed() {
      return seen.closed
    },
    close() {
      for (const s of sockets) s.destroy()
    },
  }
}

/** RSS before and after in MB, and the growth per connection in KB under `key`. */
export function growth(before, after, count, key) {
  return {
    rss_before_mb: Math.round(before / 102.4) / 10,
    rss_after_mb: Math.round(after / 102.4) / 10,
    [key]: count ? Math.round(((after - before) / count) * 10) / 10 : null,
  }
}
