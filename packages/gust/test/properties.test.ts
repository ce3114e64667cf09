// Property-based tests (fast-check) of the package's own parsers of untrusted text: query strings, cookies,
// multipart/form-data and SSE framing. Each property holds for every input fast-check generates (a few hundred
// per run, new ones every run; a failure prints its seed and the shrunk input, to add to the cases beside it).
// The engine's decoders are fuzzed in Rust (fuzz/, `make fuzz`).
import assert from 'node:assert/strict'

import fc from 'fast-check'
import { Gust, parseCookies, serializeCookie } from 'gust'

import { parseQuery } from '../src/query.js'

import { describe, runtime, test } from './framework.js'

/** Text biased towards what parsers split and decode on, with any other UTF-16 unit now and then. */
const tricky = fc.string({
  unit: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('%', '&', '=', '+', ';', ',', '"', ' ', '\t', '\r', '\n', '-', '2', 'F', 'a', 'é', '€', '😀') },
    { weight: 2, arbitrary: fc.constantFrom('%2', '%C3', '%A9', '%zz', '%25', '%00', '%FF', '%F0%9F%98%80') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 1 }) },
  ),
  maxLength: 60,
})

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"
const token = fc.string({ unit: fc.constantFrom(...TOKEN), minLength: 1, maxLength: 12 })
/**
 * A field name or filename as a browser sends it (the HTML standard's multipart encoding: `"`, CR and LF as
 * `%22`, `%0D`, `%0A`, nothing else escaped). A literal `%` or `\\` in a name is ambiguous in that encoding (the
 * parser reads `%0A` and `\\"` as escapes), so the names generated hold neither.
 */
const formName = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }).filter((s) => !/[%\\]/.test(s))
const browserEncoded = (name: string) => name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')

function viaURLSearchParams(query: string): string[] {
  const out: string[] = []
  for (const [k, v] of new URLSearchParams(query)) out.push(k, v)
  return out
}

/** A multipart body holding `parts`, with `boundary`. */
function multipart(boundary: string, parts: { name: string; value: string | Uint8Array; filename?: string }[]): Uint8Array {
  const chunks: Uint8Array[] = []
  const text = (s: string) => chunks.push(new TextEncoder().encode(s))
  for (const part of parts) {
    text(`--${boundary}\r\ncontent-disposition: form-data; name="${browserEncoded(part.name)}"`)
    if (part.filename !== undefined) text(`; filename="${browserEncoded(part.filename)}"\r\ncontent-type: application/octet-stream`)
    text('\r\n\r\n')
    if (typeof part.value === 'string') text(part.value)
    else chunks.push(part.value)
    text('\r\n')
  }
  text(`--${boundary}--\r\n`)
  return Buffer.concat(chunks)
}

/** An EventSource parser, as the WHATWG spec reads a stream: the events' data, event type and id. */
function parseEventStream(stream: string): { data: string; event: string; id: string | undefined }[] {
  const events = []
  let data: string[] = []
  let event = ''
  let id: string | undefined
  for (const line of stream.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length) events.push({ data: data.join('\n'), event, id })
      ;[data, event] = [[], '']
      continue
    }
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
    else if (field === 'id') id = value
  }
  return events
}

describe(`properties of the parsers of untrusted text (${runtime})`, () => {
  test('a query string parses as URLSearchParams does, whatever its escapes', () => {
    fc.assert(fc.property(tricky, (q) => assert.deepEqual(parseQuery(q), viaURLSearchParams(q))), { numRuns: 500 })
  })

  test('a cookie header never throws, and keeps only token names with string values', () => {
    fc.assert(
      fc.property(tricky, (header) => {
        const cookies = parseCookies(header)
        // No inherited members: a record whose prototype chain holds nothing (`__proto__` is an ordinary name).
        for (let proto = Object.getPrototypeOf(cookies); proto !== null; proto = Object.getPrototypeOf(proto)) {
          assert.deepEqual(Reflect.ownKeys(proto), [], 'an inherited member')
        }
        for (const [name, value] of Object.entries(cookies)) {
          assert.ok([...name].every((ch) => TOKEN.includes(ch)) && name.length > 0, `name ${JSON.stringify(name)}`)
          assert.equal(typeof value, 'string')
        }
      }),
      { numRuns: 500 },
    )
  })

  test('a cookie serialized then parsed gives back its value, among others', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(token, fc.string({ unit: 'grapheme', maxLength: 30 })), { selector: ([n]) => n, maxLength: 5 }), (pairs) => {
        // What a browser sends back: each cookie's `name=value` part, joined with `; `.
        const header = pairs.map(([name, value]) => serializeCookie(name, value).split(';')[0]).join('; ')
        assert.deepEqual({ ...parseCookies(header) }, Object.fromEntries(pairs))
      }),
      { numRuns: 300 },
    )
  })

  test('a multipart body built from any fields and files parses back to them', async () => {
    // Through the app (`app.request`, no socket): `c.req.formData()`, each entry sent back as name, file name
    // and bytes.
    const app = new Gust().post('/form', async (c) => {
      const out = []
      for (const [name, value] of (await c.req.formData()).entries()) {
        const file = typeof value === 'string' ? undefined : (value as unknown as File)
        const bytes = file ? new Uint8Array(await file.arrayBuffer()) : new TextEncoder().encode(value as string)
        out.push({ name, filename: file?.name, bytes: Buffer.from(bytes).toString('base64') })
      }
      return c.json(out)
    })
    const field = fc.record({
      name: formName,
      value: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.uint8Array({ maxLength: 64 })),
      filename: fc.option(formName, { nil: undefined }),
    })
    await fc.assert(
      fc.asyncProperty(token, fc.array(field, { maxLength: 6 }), async (boundary, fields) => {
        // A text field is text; a byte value goes as a file.
        const parts = fields.map((f) => (typeof f.value === 'string' ? f : { ...f, filename: f.filename ?? 'blob.bin' }))
        const res = await app.request('/form', {
          method: 'POST',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: multipart(boundary, parts),
        })
        assert.equal(res.status, 200)
        const entries = (await res.json()) as { name: string; filename?: string; bytes: string }[]
        assert.deepEqual(
          entries,
          parts.map((p) => ({
            name: p.name,
            ...(p.filename === undefined ? {} : { filename: p.filename }),
            bytes: Buffer.from(typeof p.value === 'string' ? new TextEncoder().encode(p.value) : p.value).toString('base64'),
          })),
        )
      }),
      { numRuns: 200 },
    )
  })

  test('an arbitrary body claimed as multipart is parsed or refused with a 400 or 413, never anything else', async () => {
    const app = new Gust().post('/form/:max', async (c) => {
      const form = await c.req.formData({ maxParts: Number(c.params.max) })
      return c.text(String([...form.keys()].length))
    })
    await fc.assert(
      fc.asyncProperty(token, fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 200 })), fc.nat({ max: 3 }), async (boundary, noise, maxParts) => {
        // Noise spliced into a valid body, and noise alone.
        const valid = Buffer.from(multipart(boundary, [{ name: 'a', value: 'x' }, { name: 'b', value: 'y', filename: 'f' }]))
        const at = noise.length % valid.length
        for (const body of [Buffer.concat([valid.subarray(0, at), Buffer.from(noise), valid.subarray(at)]), Buffer.from(noise)]) {
          const res = await app.request(`/form/${maxParts}`, {
            method: 'POST',
            headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
            body,
          })
          const text = await res.text()
          assert.ok([200, 400, 413].includes(res.status), `status ${res.status}: ${text}`)
          if (res.status !== 200) assert.match(text, /^(Bad Request: malformed multipart body|Payload Too Large)/)
        }
      }),
      { numRuns: 300 },
    )
  })

  test('an SSE event is framed so that an EventSource reads back its data, type and id', async () => {
    // Through the app (`app.request`, no socket): the event as JSON in, the event stream out.
    const app = new Gust().post('/sse', async (c) => {
      const message = (await c.req.json()) as { data: string; event?: string; id?: string }
      return c.sse((s) => s.writeSSE(message))
    })
    const line = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !/[\r\n]/.test(s))
    await fc.assert(
      fc.asyncProperty(tricky, fc.option(line, { nil: undefined }), fc.option(line.filter((s) => !s.includes('\0')), { nil: undefined }), async (data, event, id) => {
        const res = await app.request('/sse', { method: 'POST', body: JSON.stringify({ data, event, id }) })
        assert.equal(res.headers.get('content-type'), 'text/event-stream')
        const framed = await res.text()
        const parsed = parseEventStream(framed)
        assert.equal(parsed.length, 1, `one event from ${JSON.stringify(framed)}`)
        assert.deepEqual(parsed[0], { data: data.replace(/\r\n|\r/g, '\n'), event: event ?? '', id })
      }),
      { numRuns: 200 },
    )
  })
})
