/**
 * The `tls` option of `listen()`: the certificate chain and private key a server presents, each given as PEM text,
 * its bytes (`Buffer`, `Uint8Array`), a path to a PEM file, or a `Bun.file(path)`. Read here, once, as the
 * server starts; the engine parses and checks them, and `listen()` rejects with an error naming a bad
 * certificate or key.
 * @example
 * await app.listen({ port: 443, tls: { cert: './cert.pem', key: './key.pem' } })
 * await app.listen({ port: 443, tls: { cert: readFileSync('cert.pem'), key: Bun.file('key.pem') } })
 * @module
 */
import { readFileSync } from 'node:fs'

import type { BindingTls } from './native/binding.js'

/** PEM text, its bytes, a path to a PEM file, or a file object that carries its path (`Bun.file(path)`). */
export type TlsSource = string | Uint8Array | { readonly name?: string }

/** HTTPS settings: the shapes of Bun.serve's and Node's `https` options where they agree. */
export interface TlsOptions {
  /** The certificate chain, PEM: the server's own certificate first, then its intermediates. */
  cert: TlsSource
  /** The private key of that certificate, PEM (PKCS#8, PKCS#1 or SEC1), not encrypted. */
  key: TlsSource
}

const KNOWN = ['cert', 'key']

/** Node's and Bun's options this server does not take yet, each with what to do instead. */
const NOT_YET: Record<string, string> = {
  passphrase: 'encrypted keys are not read: decrypt the key first (`openssl pkey -in key.pem -out key.plain.pem`)',
  ca: 'client certificates (mTLS) are not supported yet',
  requestCert: 'client certificates (mTLS) are not supported yet',
  rejectUnauthorized: 'client certificates (mTLS) are not supported yet',
  serverName: 'SNI (several certificates) is not supported yet',
}

/** Checks the `tls` option and reads its files; `undefined` when it is absent. */
export function resolveTls(value: unknown): BindingTls | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`listen() option "tls" must be an object like { cert, key }, got ${describe(value)}`)
  }
  const given = value as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (key in NOT_YET) throw new Error(`tls option "${key}" is not supported: ${NOT_YET[key]}`)
    if (!KNOWN.includes(key)) throw new Error(`Unknown tls option "${key}"; known options: ${KNOWN.join(', ')}`)
  }
  return { cert: read('cert', given.cert), key: read('key', given.key) }
}

function read(name: string, source: unknown): Buffer {
  if (typeof source === 'string') return source.includes('-----BEGIN') ? Buffer.from(source) : readPath(name, source)
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength)
  if (typeof source === 'object' && source !== null && typeof (source as { name?: unknown }).name === 'string') {
    return readPath(name, (source as { name: string }).name)
  }
  throw new TypeError(
    `tls.${name} must be PEM text, a Buffer or Uint8Array, a path to a PEM file or Bun.file(path), got ${describe(source)}`,
  )
}

function readPath(name: string, path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message
    throw new Error(`tls.${name}: cannot read the file ${JSON.stringify(path)} (${why}); give PEM text, its bytes or a path`)
  }
}

function describe(value: unknown): string {
  return value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value))
}
