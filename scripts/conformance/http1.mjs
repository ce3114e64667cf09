// Runs HTTP/1.1 conformance cases written as data (h1spec-cases.mjs, http11probe-cases.mjs; the schema is at the
// top of http11probe-cases.mjs) against a server over raw sockets, each case on its own connection, and judges
// each by its rules: 'pass', 'warn' or 'fail'.
//
// A response is read the way Http11Probe reads one: until the end of its head (or, for h1spec's cases, until any
// byte arrives), then 100 ms more for what follows; the connection counts as closed by the server if it closed
// by then or within 50 ms after. Nothing within the case's read time is a time-out.
//
// Usage as a script: node scripts/conformance/http1.mjs <port> [--only h1spec|http11probe] [--verbose]
import net from 'node:net'

const HEAD_END = '\r\n\r\n'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * A step's bytes: `{host}`, repeated text, captured header values, then regions' lengths (`{begin:x}…{end:x}`
 * measured into `{len:x}` / `{hexlen:x}`, regions without an unresolved length inside first).
 */
export function render(text, c, host, captured = {}) {
  let out = text.replaceAll('{host}', host)
  if (c.repeat) {
    const { marker, text: piece, times, join = '' } = c.repeat
    out = out.replaceAll(marker, Array.from({ length: times }, (_, i) => piece.replaceAll('{i}', String(i))).join(join))
  }
  for (const [name, value] of Object.entries(captured)) out = out.replaceAll(name, value)
  const placeholder = /\{(?:len|hexlen):(\w+)\}/
  for (let guard = 0; placeholder.test(out); guard++) {
    if (guard > 16) throw new Error(`${c.id}: region lengths that depend on each other`)
    for (const name of new Set([...out.matchAll(/\{(?:len|hexlen):(\w+)\}/g)].map((m) => m[1]))) {
      const from = out.indexOf(`{begin:${name}}`)
      const to = out.indexOf(`{end:${name}}`)
      if (from < 0 || to < from) throw new Error(`${c.id}: no region ${name}`)
      const inside = out.slice(from + `{begin:${name}}`.length, to).replace(/\{(?:begin|end):\w+\}/g, '')
      if (placeholder.test(inside)) continue
      const length = Buffer.byteLength(inside, 'latin1')
      out = out.replaceAll(`{len:${name}}`, String(length)).replaceAll(`{hexlen:${name}}`, length.toString(16))
    }
  }
  return Buffer.from(out.replace(/\{(?:begin|end):\w+\}/g, ''), 'latin1')
}

/** A captured header value, transformed as the case says. */
function capture(spec, responses) {
  const value = responses[spec.response]?.headers.get(spec.header.toLowerCase())
  if (value === undefined) return spec.fallback
  if (spec.transform === 'unquote') return value.replace(/^W\//, '').replace(/^"(.*)"$/, '$1')
  if (spec.transform === 'weak') return value.startsWith('W/') ? value : `W/${value}`
  return value
}

/** One connection to the server; `read()` collects a response as described at the top. */
function connect(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    let data = Buffer.alloc(0)
    let closed = false
    let wake = () => {}
    socket.on('data', (d) => {
      data = Buffer.concat([data, d])
      wake()
    })
    const close = () => {
      closed = true
      wake()
    }
    socket.on('end', close)
    socket.on('close', close)
    // A reset counts as a close by the server, as Http11Probe's client sees it.
    socket.on('error', close)
    socket.once('connect', () =>
      resolve({
        get closed() {
          return closed
        },
        get text() {
          return data.toString('latin1')
        },
        /** Writes; false when the server had closed already. */
        async send(bytes) {
          if (closed) return false
          return new Promise((done) => socket.write(bytes, (err) => done(!err)))
        },
        /**
         * Waits for a response starting at byte `from`: { state, end } with state 'closed', 'open' or 'timeout'.
         * `anyByte`: the first byte is enough (h1spec's single read).
         */
        async read(from, readMs, anyByte) {
          const deadline = Date.now() + readMs
          const ready = () => (anyByte ? data.length > from : data.indexOf(HEAD_END, from, 'latin1') >= 0)
          while (!ready() && !closed && Date.now() < deadline) {
            await new Promise((r) => {
              wake = r
              setTimeout(r, Math.max(1, deadline - Date.now()))
            })
          }
          wake = () => {}
          if (closed) return { state: 'closed', end: data.length }
          if (!ready()) return { state: 'timeout', end: data.length }
          await sleep(anyByte ? 0 : 100)
          if (!closed) await sleep(50)
          return { state: closed ? 'closed' : 'open', end: data.length }
        },
        destroy: () => socket.destroy(),
      }),
    )
    socket.once('error', reject)
  })
}

/** The first response in `text` as Http11Probe parses it: status line, headers, and everything after the head. */
export function parse(text) {
  const lineEnd = text.indexOf('\n')
  if (lineEnd < 0) return null
  const m = /^(\S+) (\d+)(?: |$)/.exec(text.slice(0, lineEnd).replace(/\r$/, ''))
  if (!m) return null
  const headers = parseHeaders(text, lineEnd + 1)
  const head = text.indexOf(HEAD_END)
  const body = head >= 0 && head + 4 < text.length ? text.slice(head + 4, head + 4 + 4096) : null
  return { status: Number(m[2]), headers, body }
}

function parseHeaders(text, pos) {
  const headers = new Map()
  while (pos < text.length) {
    let next = text.indexOf('\n', pos)
    if (next < 0) next = text.length
    const line = text.slice(pos, next).replace(/\r$/, '')
    if (line.length === 0) break
    const colon = line.indexOf(':')
    if (colon > 0) {
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value)
    }
    pos = next + 1
  }
  return headers
}

/** A chunked body decoded, or null when it is not whole. */
function dechunk(text) {
  let out = ''
  let at = 0
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at)
    if (lineEnd < 0) return null
    const size = parseInt(text.slice(at, lineEnd).split(';')[0], 16)
    if (Number.isNaN(size)) return null
    if (size === 0) return { body: out, end: text.indexOf('\r\n\r\n', lineEnd) < 0 ? text.length : text.indexOf('\r\n\r\n', lineEnd) + 4 }
    out += text.slice(lineEnd + 2, lineEnd + 2 + size)
    at = lineEnd + 2 + size + 2
  }
}

/**
 * Every response on the connection, in order, framed by its length or chunked coding (no body for 1xx, 204,
 * 304 or an answer to HEAD; `methods`: the requests' methods in the order sent).
 */
export function parseAll(text, methods) {
  const out = []
  let at = 0
  let request = 0
  while (at < text.length) {
    const m = /^HTTP\/\d\.\d (\d{3})/.exec(text.slice(at, at + 16))
    if (!m) break
    const head = text.indexOf(HEAD_END, at)
    if (head < 0) break
    const status = Number(m[1])
    const headers = parseHeaders(text, text.indexOf('\n', at) + 1)
    let end = head + 4
    let body = ''
    const bodiless = (status >= 100 && status < 200) || status === 204 || status === 304 || methods[request] === 'HEAD'
    if (!bodiless) {
      if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
        const d = dechunk(text.slice(end))
        body = d?.body ?? text.slice(end)
        end = d === null ? text.length : end + d.end
      } else if (headers.has('content-length')) {
        const length = Number(headers.get('content-length'))
        body = text.slice(end, end + length)
        end += length
      } else {
        body = text.slice(end)
        end = text.length
      }
    }
    out.push({ status, headers, body })
    if (status >= 200) request++
    at = end
  }
  return out
}

/** HTTP status lines in `text` (a second one means a second response). */
function statusLines(text) {
  return text.match(/HTTP\/\d\.\d \d{3}/g)?.length ?? 0
}

const inRange = (status, want) => (Array.isArray(want) ? status >= want[0] && status <= want[1] : status === want)

function headerHolds(headers, want) {
  const value = headers.get(want.name.toLowerCase())
  if ('present' in want) return (value !== undefined) === want.present
  if ('equals' in want) return value === want.equals
  if ('matches' in want) return value !== undefined && new RegExp(want.matches, want.flags ?? '').test(value)
  throw new Error(`header condition without present, equals or matches: ${JSON.stringify(want)}`)
}

/** The body Http11Probe compares: de-chunked when the response says chunked, trailing CR/LF trimmed. */
function effectiveBody(r) {
  const body = r.body ?? ''
  const chunked = /chunked/i.test(r.headers.get('transfer-encoding') ?? '') ? dechunk(body)?.body : undefined
  return (chunked ?? body).replace(/[\r\n]+$/, '')
}

const includes = (body, want) => (Array.isArray(want) ? want : [want]).every((w) => (body ?? '').includes(w))

/** Whether `body`, read as `Name: Value` lines, has the header `want` describes. */
function echoes(body, want) {
  return (body ?? '').split('\n').some((line) => {
    const colon = line.indexOf(':')
    if (colon < 0) return false
    const name = line.slice(0, colon)
    const value = line.slice(colon + 1).replace(/^\s+/, '').replace(/\r$/, '')
    const nameOk = want.exact ? name === want.name : name.toLowerCase() === want.name.toLowerCase()
    return nameOk && value.toLowerCase() === want.value.toLowerCase()
  })
}

/** Whether every condition of `when` holds for the case's observation `o`. */
function holds(when, o) {
  const r = o.first
  for (const [key, want] of Object.entries(when)) {
    let ok
    switch (key) {
      case 'status':
        ok = r !== null && inRange(r.status, want)
        break
      case 'noResponse':
        ok = (r === null) === want
        break
      case 'closed':
        ok = (o.state === 'closed') === want
        break
      case 'timedOut':
        ok = (o.state === 'timeout') === want
        break
      case 'responses':
        ok = statusLines(o.text) === want
        break
      case 'responsesAtLeast':
        ok = statusLines(o.text) >= want
        break
      case 'header':
        ok = r !== null && headerHolds(r.headers, want)
        break
      case 'bodyEquals':
        ok = r !== null && effectiveBody(r) === want
        break
      case 'bodyIncludes':
        ok = r !== null && includes(r.body, want)
        break
      case 'bodyMatches':
        ok = r !== null && new RegExp(want.regex, want.flags ?? '').test(r.body ?? '')
        break
      case 'nothingAfterHeaders':
        ok = r !== null && (r.body === null || r.body === '') === want
        break
      case 'echoHeader':
        ok = r !== null && echoes(r.body, want)
        break
      case 'stepsSent':
        ok = o.stepsSent === want
        break
      case 'nth':
        ok = (Array.isArray(want) ? want : [want]).every((n) => {
          const x = o.responses[n.index]
          if (x === undefined) return false
          if (n.status !== undefined && !inRange(x.status, n.status)) return false
          if (n.header !== undefined && !headerHolds(x.headers, n.header)) return false
          if (n.bodyIncludes !== undefined && !includes(x.body, n.bodyIncludes)) return false
          if (n.bodyEquals !== undefined && x.body.replace(/[\r\n]+$/, '') !== n.bodyEquals) return false
          return true
        })
        break
      default:
        throw new Error(`unknown condition "${key}"`)
    }
    if (!ok) return false
  }
  return true
}

/** The verdict of `c` for its observation. */
function judge(c, o) {
  for (const [when, result] of c.verdict) if (holds(when, o)) return result
  return 'fail'
}

/** Runs one case against `port`: { id, verdict, status, state, ms }, or verdict 'error' naming what broke. */
export async function runCase(c, port, readMs = 5000) {
  const started = Date.now()
  const host = `127.0.0.1:${port}`
  let conn
  try {
    conn = await connect(port)
    const steps = c.steps ?? [{ send: c.request }]
    const methods = []
    let from = 0
    let state = 'open'
    let stepsSent = 0
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]
      if (conn.closed) break
      if (step.pauseMs) await sleep(step.pauseMs)
      const captured = {}
      for (const [name, spec] of Object.entries(c.captures ?? {})) captured[name] = capture(spec, parseAll(conn.text, methods))
      const bytes = render(step.send, c, host, captured)
      methods.push(...[...bytes.toString('latin1').matchAll(/(?:^|\r\n\r\n)([A-Z]+) \S+ HTTP\//g)].map((m) => m[1]))
      if (!(await conn.send(bytes))) break
      stepsSent++
      if (step.awaitResponse || i === steps.length - 1) {
        const got = await conn.read(from, c.readMs ?? readMs, c.firstStatusOnly === true)
        from = got.end
        state = got.state
        if (state !== 'open') break
      }
    }
    if (conn.closed) state = 'closed'
    const text = conn.text
    const o = { first: parse(text), responses: parseAll(text, methods), state, text, stepsSent }
    return { id: c.id, verdict: judge(c, o), status: o.first?.status ?? null, state, ms: Date.now() - started }
  } catch (err) {
    return { id: c.id, verdict: 'error', status: null, state: err.message, ms: Date.now() - started }
  } finally {
    conn?.destroy()
  }
}

/** Runs `cases` against `port`, `parallel` at a time; results in the cases' order. */
export async function runCases(cases, port, { parallel = 16, readMs } = {}) {
  const results = new Array(cases.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(parallel, cases.length) }, async () => {
      while (next < cases.length) {
        const i = next++
        results[i] = await runCase(cases[i], port, readMs)
      }
    }),
  )
  return results
}

/** The suites this runner knows, by name. */
export async function suites() {
  const { cases: h1spec } = await import('./h1spec-cases.mjs')
  const { cases: http11probe } = await import('./http11probe-cases.mjs')
  return { h1spec, http11probe }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2])
  if (!port) throw new Error('usage: node scripts/conformance/http1.mjs <port> [--only h1spec|http11probe] [--verbose]')
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null
  for (const [name, cases] of Object.entries(await suites())) {
    if (only && name !== only) continue
    const results = await runCases(cases, port)
    const tally = {}
    for (const r of results) tally[r.verdict] = (tally[r.verdict] ?? 0) + 1
    console.log(`${name}: ${JSON.stringify(tally)}`)
    for (const r of results) {
      if (r.verdict !== 'pass' || process.argv.includes('--verbose')) {
        const c = cases.find((x) => x.id === r.id)
        console.log(`  ${r.verdict.padEnd(5)} ${r.id} (${r.status ?? 'no response'}, ${r.state}): ${c.description}`)
      }
    }
  }
}
