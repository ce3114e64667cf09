/**
 * Reading a request's header section, as the engine writes it: `name:value\n` per header line, names lower-case,
 * values as received (latin1). Pure functions over the section's text; `request.ts` decodes the text once and
 * caches what these return.
 * @module
 */
import { emptyRecord } from './record.js'

/** The section as `[name, value, name, value, …]`, in order. Cost: two strings per header line. */
export function splitHeaders(text: string): string[] {
  const out: string[] = []
  let at = 0
  while (at < text.length) {
    const colon = text.indexOf(':', at)
    const nl = text.indexOf('\n', colon)
    out.push(text.slice(at, colon), text.slice(colon + 1, nl))
    at = nl + 1
  }
  return out
}

/**
 * One header looked up in the section's text without splitting every line into pairs: most requests read one or
 * two headers (`host` for `url`), and the pairs cost an allocation per header. Repeated lines are joined with
 * `, ` as `Headers.get` does; `lower` must be lower-case.
 */
export function scanHeader(text: string, lower: string): string | undefined {
  const key = `${lower}:`
  let found: string | undefined
  let from = 0
  for (;;) {
    let at: number
    if (from === 0 && text.startsWith(key)) {
      at = 0
    } else {
      const line = text.indexOf(`\n${key}`, from === 0 ? 0 : from - 1)
      if (line === -1) return found
      at = line + 1
    }
    const nl = text.indexOf('\n', at)
    const value = text.slice(at + key.length, nl)
    found = found === undefined ? value : `${found}, ${value}`
    from = nl + 1
  }
}

/** Every header as a record, repeated ones joined with `, `. */
export function headerRecord(pairs: readonly string[]): Record<string, string> {
  const out = emptyRecord()
  for (let i = 0; i < pairs.length; i += 2) {
    const k = pairs[i]!
    out[k] = k in out ? `${out[k]}, ${pairs[i + 1]}` : pairs[i + 1]!
  }
  return out
}

/** One header's lines joined with `, `, or undefined; `lower` must be lower-case. */
export function headerValue(pairs: readonly string[], lower: string): string | undefined {
  let found: string | undefined
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] === lower) found = found === undefined ? pairs[i + 1] : `${found}, ${pairs[i + 1]}`
  }
  return found
}

/** Every line of one header, in order, without joining; `lower` must be lower-case. */
export function headerValues(pairs: readonly string[], lower: string): string[] {
  const out: string[] = []
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === lower) out.push(pairs[i + 1]!)
  return out
}

/**
 * `Host`, read from the section's bytes `[start, end)` when it is the first line (as clients send it; the engine
 * refuses a request with two), else undefined: `url` is read by every fetch app, and decoding the whole section
 * for it was half its cost.
 */
export function hostLine(b: Uint8Array & { toString(encoding: 'latin1', start: number, end: number): string }, start: number, end: number): string | undefined {
  // `host:` in lower case (the engine writes names so), and a line that ends within the section.
  if (end - start > 5 && b[start] === 0x68 && b[start + 1] === 0x6f && b[start + 2] === 0x73 && b[start + 3] === 0x74 && b[start + 4] === 0x3a) {
    const nl = b.indexOf(0x0a, start + 5)
    if (nl !== -1 && nl < end) return b.toString('latin1', start + 5, nl)
  }
  return undefined
}

/** The pairs as a Web `Headers`. */
export function webHeaders(pairs: readonly string[]): Headers {
  const headers = new Headers()
  for (let i = 0; i < pairs.length; i += 2) headers.append(pairs[i]!, pairs[i + 1]!)
  return headers
}
