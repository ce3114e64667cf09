/**
 * `c.req.formData()`: `application/x-www-form-urlencoded` and `multipart/form-data` bodies as a Web `FormData`,
 * within limits on parts, field values and files. The body is already buffered (within `maxBodySize`); parsing
 * is one pass with `Buffer.indexOf` for the boundaries, copying each part's bytes once.
 * @module
 */
import { HTTPException } from './http-exception.js'

/** Limits of `formData()`; a breach is an `HTTPException` (413) naming the limit. */
export interface FormDataLimits {
  /** Fields and files together. Default 1000. */
  maxParts?: number
  /** Bytes of one text field's value. Default 1 MiB. */
  maxFieldSize?: number
  /** Bytes of one file. Default: no limit beyond the body's own (`maxBodySize`). */
  maxFileSize?: number
}

const DEFAULTS: Required<FormDataLimits> = { maxParts: 1000, maxFieldSize: 1024 * 1024, maxFileSize: Infinity }

function checkLimits(limits: FormDataLimits | undefined): Required<FormDataLimits> {
  if (limits === undefined) return DEFAULTS
  if (typeof limits !== 'object' || limits === null) throw new TypeError('formData() limits must be an object')
  const out = { ...DEFAULTS }
  for (const [key, value] of Object.entries(limits)) {
    if (!(key in DEFAULTS)) {
      throw new TypeError(`Unknown formData() limit "${key}"; known limits: ${Object.keys(DEFAULTS).join(', ')}`)
    }
    if (value === undefined) continue
    if (typeof value !== 'number' || !(value >= 0) || (!Number.isInteger(value) && value !== Infinity)) {
      throw new RangeError(`formData() limit "${key}" must be a whole number of at least 0, or Infinity`)
    }
    out[key as keyof FormDataLimits] = value
  }
  return out
}

function tooLarge(what: string): HTTPException {
  return new HTTPException(413, `Payload Too Large: ${what}`)
}

function malformed(what: string): HTTPException {
  return new HTTPException(400, `Bad Request: malformed multipart body (${what})`)
}

/** A `content-type` parameter's value (`boundary=x` or `boundary="x"`), or undefined. */
function parameter(contentType: string, name: string): string | undefined {
  for (const piece of contentType.split(';').slice(1)) {
    const eq = piece.indexOf('=')
    if (eq === -1 || piece.slice(0, eq).trim().toLowerCase() !== name) continue
    const value = piece.slice(eq + 1).trim()
    return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value
  }
  return undefined
}

/** Parses `bytes` as the form `contentType` says it is. */
export function parseFormData(contentType: string, bytes: Uint8Array, limits?: FormDataLimits): FormData {
  const max = checkLimits(limits)
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (type === 'application/x-www-form-urlencoded') return urlEncoded(buf, max)
  if (type === 'multipart/form-data') {
    const boundary = parameter(contentType, 'boundary')
    if (boundary === undefined || boundary === '' || boundary.length > 70) {
      throw new HTTPException(400, 'Bad Request: multipart/form-data needs a boundary of 1 to 70 characters')
    }
    return multipart(buf, boundary, max)
  }
  throw new HTTPException(
    415,
    `Unsupported Media Type: formData() reads application/x-www-form-urlencoded or multipart/form-data, got ${
      type === '' ? 'no content-type' : type
    }`,
  )
}

function urlEncoded(buf: Buffer, max: Required<FormDataLimits>): FormData {
  const form = new FormData()
  let parts = 0
  for (const [name, value] of new URLSearchParams(buf.toString('utf8'))) {
    if (++parts > max.maxParts) throw tooLarge(`more than ${max.maxParts} parts (maxParts)`)
    if (Buffer.byteLength(value) > max.maxFieldSize) {
      throw tooLarge(`field "${name}" is over ${max.maxFieldSize} bytes (maxFieldSize)`)
    }
    form.append(name, value)
  }
  return form
}

const CRLF = Buffer.from('\r\n')
const HEADERS_END = Buffer.from('\r\n\r\n')

function multipart(buf: Buffer, boundary: string, max: Required<FormDataLimits>): FormData {
  const form = new FormData()
  // Every delimiter but the first follows a CRLF, which belongs to the delimiter, not the content before it.
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let at: number
  if (buf.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2))) at = delimiter.length - 2
  else {
    const first = buf.indexOf(delimiter)
    if (first === -1) throw malformed('no boundary found')
    at = first + delimiter.length
  }
  let parts = 0
  for (;;) {
    // After a delimiter: `--` closes the body; otherwise optional whitespace, then CRLF and the part.
    if (buf[at] === 0x2d && buf[at + 1] === 0x2d) return form
    while (buf[at] === 0x20 || buf[at] === 0x09) at++
    if (!buf.subarray(at, at + 2).equals(CRLF)) throw malformed('a boundary is not followed by a line break')
    at += 2
    if (++parts > max.maxParts) throw tooLarge(`more than ${max.maxParts} parts (maxParts)`)
    const headersEnd = buf.indexOf(HEADERS_END, at - 2)
    if (headersEnd === -1) throw malformed('a part without the end of its headers')
    const head = partHeaders(buf.toString('utf8', at, headersEnd))
    const start = headersEnd + 4
    const end = buf.indexOf(delimiter, start)
    if (end === -1) throw malformed('the body ends inside a part')
    const size = end - start
    if (head.filename !== undefined) {
      if (size > max.maxFileSize) throw tooLarge(`file "${head.name}" is over ${max.maxFileSize} bytes (maxFileSize)`)
      const file = new File([buf.subarray(start, end)], head.filename, {
        type: head.type ?? 'application/octet-stream',
      })
      form.append(head.name, file)
    } else {
      if (size > max.maxFieldSize) {
        throw tooLarge(`field "${head.name}" is over ${max.maxFieldSize} bytes (maxFieldSize)`)
      }
      form.append(head.name, buf.toString('utf8', start, end))
    }
    at = end + delimiter.length
  }
}

interface PartHead {
  name: string
  filename: string | undefined
  type: string | undefined
}

/** A part's `content-disposition` (its name, and filename for a file) and `content-type`. */
function partHeaders(text: string): PartHead {
  let disposition: string | undefined
  let type: string | undefined
  for (const line of text.split('\r\n')) {
    if (line === '') continue
    const colon = line.indexOf(':')
    if (colon === -1) throw malformed('a part header without a colon')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') type = value
  }
  if (disposition === undefined || !/^form-data\s*(;|$)/i.test(disposition)) {
    throw malformed('a part without content-disposition: form-data')
  }
  const name = dispositionParam(disposition, 'name')
  if (name === undefined) throw malformed('a part without a name')
  return { name, filename: dispositionParam(disposition, 'filename'), type }
}

/**
 * One parameter of a `content-disposition` value. Browsers quote names and filenames and escape `"`, CR and LF
 * as `%22`, `%0D` and `%0A` (the HTML standard's multipart encoding); those are undone here.
 */
function dispositionParam(disposition: string, param: string): string | undefined {
  const pattern = new RegExp(`;\\s*${param}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i')
  const found = pattern.exec(disposition)
  if (found === null) return undefined
  const raw = found[1] !== undefined ? found[1].replace(/\\(.)/g, '$1') : found[2]!
  return raw.replace(/%22/gi, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n')
}
