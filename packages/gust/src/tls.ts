/**
 * The `tls` option of `listen()` and `reload()`: certificates and keys, each given as PEM text, its bytes
 * (`Buffer`, `Uint8Array`), a path to a PEM file, or a `Bun.file(path)`; client certificates (mutual TLS); the
 * oldest TLS version; the ALPN protocols. Read and checked here, once, as the server starts; the engine parses
 * the PEM, and `listen()` rejects with an error naming a bad certificate, key, passphrase or CA.
 * @example
 * await app.listen({ port: 443, tls: { cert: './cert.pem', key: './key.pem' } })
 * await app.listen({ port: 443, tls: { cert: readFileSync('cert.pem'), key: Bun.file('key.pem'), passphrase } })
 * // several certificates, chosen by the host the client names (SNI); the first is the default
 * await app.listen({ port: 443, tls: [{ cert, key }, { serverName: 'api.example.com', cert: apiCert, key: apiKey }] })
 * // client certificates: only clients with one signed by `ca` get in
 * await app.listen({ port: 443, tls: { cert, key, ca: './clients-ca.pem', requestCert: true } })
 * @module
 */

import { builtin } from './builtins.js'
import type { BindingIdentity, BindingTls } from './native/binding.js'

/** PEM text, its bytes, a path to a PEM file, or a file object that carries its path (`Bun.file(path)`). */
export type TlsSource = string | Uint8Array | { readonly name?: string }

/** A certificate chain, its private key, and the host it is for. */
export interface TlsIdentity {
  /** The certificate chain, PEM: the server's own certificate first, then its intermediates. */
  cert: TlsSource
  /** The private key of that certificate, PEM: PKCS#8 (encrypted with `passphrase`, or not), PKCS#1 or SEC1. */
  key: TlsSource
  /** The passphrase of an encrypted PKCS#8 key (`-----BEGIN ENCRYPTED PRIVATE KEY-----`). */
  passphrase?: string
  /**
   * The host this certificate is for, as clients name it (SNI): `example.com`, or `*.example.com` for any one
   * label in front of it. Required on every certificate after the first; the first is given to clients that
   * name no host, or one no other certificate is for.
   */
  serverName?: string
}

/** HTTPS settings: the shapes of Node's `https` and Bun.serve's `tls` options where they agree. */
export interface TlsOptions extends TlsIdentity {
  /**
   * The certificate authorities client certificates must chain to, PEM (one source, or several); with
   * `requestCert` only.
   */
  ca?: TlsSource | readonly TlsSource[]
  /** Ask clients for a certificate (mutual TLS). Default `false`. */
  requestCert?: boolean
  /**
   * With `requestCert`: a client without a certificate signed by `ca` fails its handshake. Default `true`; with
   * `false` every client gets in, and `c.req.tls` says whether it was authorized and why not.
   */
  rejectUnauthorized?: boolean
  /** The oldest TLS version offered: `'TLSv1.2'` (default) or `'TLSv1.3'`. TLS 1.0 and 1.1 are never offered. */
  minVersion?: 'TLSv1.2' | 'TLSv1.3'
  /** ALPN protocols offered, most preferred first. Default `['h2', 'http/1.1']` (`['http/1.1']` with `http2: false`). */
  ALPNProtocols?: readonly ('h2' | 'http/1.1')[]
}

/**
 * The `tls` option: one certificate with its settings, or several (Bun's shape): the first holds the settings
 * and is the default certificate, each other is chosen by its `serverName`.
 */
export type TlsConfig = TlsOptions | readonly [TlsOptions, ...TlsIdentity[]]

const IDENTITY_KEYS = ['cert', 'key', 'passphrase', 'serverName']
const SHARED_KEYS = ['ca', 'requestCert', 'rejectUnauthorized', 'minVersion', 'ALPNProtocols']
const KNOWN = [...IDENTITY_KEYS, ...SHARED_KEYS]

/** Node's options this server has no use for, each with why. */
const REFUSED: Record<string, string> = {
  maxVersion: 'the newest version is always TLS 1.3; set minVersion to refuse older ones',
  ciphers: 'the cipher suites are rustls\'s (modern AEAD only), not configurable',
  pfx: 'give the certificate and key as PEM (`openssl pkcs12 -in file.pfx -nodes`)',
  SNICallback: 'give several certificates instead: tls: [{ cert, key }, { serverName, cert, key }]',
}

/** Checks the `tls` option and reads its files; `undefined` when it is absent. */
export function resolveTls(value: unknown, http2 = true): BindingTls | undefined {
  if (value === undefined) return undefined
  const entries = Array.isArray(value) ? (value as unknown[]) : [value]
  if (entries.length === 0) throw new TypeError('listen() option "tls" must hold at least one { cert, key }')
  const several = Array.isArray(value)
  const identities: BindingIdentity[] = []
  let first: Record<string, unknown> = {}
  entries.forEach((entry, i) => {
    const at = several ? `tls[${i}]` : 'tls'
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new TypeError(`listen() option "${at}" must be an object like { cert, key }, got ${describe(entry)}`)
    }
    const given = entry as Record<string, unknown>
    for (const key of Object.keys(given)) {
      if (given[key] === undefined) continue
      if (key in REFUSED) throw new Error(`${at}.${key} is not supported: ${REFUSED[key]}`)
      if (!KNOWN.includes(key)) throw new Error(`Unknown tls option "${key}"; known options: ${KNOWN.join(', ')}`)
      if (i > 0 && SHARED_KEYS.includes(key)) {
        throw new Error(`${at}.${key}: settings for every certificate go on the first one (tls[0].${key})`)
      }
    }
    if (i === 0) first = given
    identities.push(identity(at, given))
  })
  return { identities, ...shared(first, http2) }
}

function identity(at: string, given: Record<string, unknown>): BindingIdentity {
  const out: BindingIdentity = { cert: readTlsSource(`${at}.cert`, given.cert), key: readTlsSource(`${at}.key`, given.key) }
  const { passphrase, serverName } = given
  if (passphrase !== undefined) {
    if (typeof passphrase !== 'string') throw new TypeError(`${at}.passphrase must be a string, got ${describe(passphrase)}`)
    out.passphrase = passphrase
  }
  if (serverName !== undefined) {
    if (typeof serverName !== 'string' || serverName === '') {
      throw new TypeError(`${at}.serverName must be a host name like "example.com" or "*.example.com", got ${describe(serverName)}`)
    }
    out.serverName = serverName
  }
  return out
}

function shared(given: Record<string, unknown>, http2: boolean): Omit<BindingTls, 'identities'> {
  const requestCert = flag('requestCert', given.requestCert, false)
  const rejectUnauthorized = flag('rejectUnauthorized', given.rejectUnauthorized, true)
  const out: Omit<BindingTls, 'identities'> = { requestCert, rejectUnauthorized }
  if (!requestCert) {
    // Both only judge client certificates, which are not asked for: accepting them would promise a check that
    // never happens.
    for (const key of ['ca', 'rejectUnauthorized']) {
      if (given[key] !== undefined) {
        throw new Error(`tls.${key} judges client certificates, which are asked for only with requestCert: true`)
      }
    }
  }
  if (given.ca !== undefined) out.ca = readAuthorities('tls.ca', given.ca)
  const { minVersion, ALPNProtocols } = given
  if (minVersion !== undefined) {
    if (minVersion === 'TLSv1' || minVersion === 'TLSv1.1') {
      throw new Error(`tls.minVersion ${minVersion} is not offered: TLS 1.0 and 1.1 are obsolete (RFC 8996); use "TLSv1.2" or "TLSv1.3"`)
    }
    if (minVersion !== 'TLSv1.2' && minVersion !== 'TLSv1.3') {
      throw new TypeError(`tls.minVersion must be "TLSv1.2" or "TLSv1.3", got ${describe(minVersion)}`)
    }
    out.minVersion = minVersion
  }
  if (ALPNProtocols !== undefined) {
    if (!Array.isArray(ALPNProtocols) || ALPNProtocols.length === 0) {
      throw new TypeError(`tls.ALPNProtocols must be a non-empty array of "h2" and "http/1.1", got ${describe(ALPNProtocols)}`)
    }
    for (const p of ALPNProtocols) {
      if (p !== 'h2' && p !== 'http/1.1') throw new TypeError(`tls.ALPNProtocols: each must be "h2" or "http/1.1", got ${describe(p)}`)
      if (p === 'h2' && !http2) throw new Error('tls.ALPNProtocols offers "h2" but http2 is false')
    }
    if (new Set(ALPNProtocols).size !== ALPNProtocols.length) throw new TypeError('tls.ALPNProtocols names a protocol twice')
    out.alpn = [...ALPNProtocols]
  }
  return out
}

const NEWLINE = Buffer.from('\n')

function flag(name: string, value: unknown, otherwise: boolean): boolean {
  if (value === undefined) return otherwise
  if (typeof value !== 'boolean') throw new TypeError(`tls.${name} must be true or false, got ${describe(value)}`)
  return value
}

/** Certificate authorities, one `TlsSource` or several, read into one PEM bundle; `name` is the option, for errors. */
export function readAuthorities(name: string, given: unknown): Uint8Array {
  const sources = Array.isArray(given) ? (given as unknown[]) : [given]
  return Buffer.concat(sources.flatMap((s, i) => [readTlsSource(Array.isArray(given) ? `${name}[${i}]` : name, s), NEWLINE]))
}

/** One `TlsSource` read into bytes; `name` is the option, for errors. (`Uint8Array`, not `Buffer`: the package's types need no `@types/node`.) */
export function readTlsSource(name: string, source: unknown): Uint8Array {
  if (typeof source === 'string') return source.includes('-----BEGIN') ? Buffer.from(source) : readPath(name, source)
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength)
  if (typeof source === 'object' && source !== null && typeof (source as { name?: unknown }).name === 'string') {
    return readPath(name, (source as { name: string }).name)
  }
  throw new TypeError(
    `${name} must be PEM text, a Buffer or Uint8Array, a path to a PEM file or Bun.file(path), got ${describe(source)}`,
  )
}

function readPath(name: string, path: string): Buffer {
  try {
    return builtin('node:fs').readFileSync(path)
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message
    throw new Error(`${name}: cannot read the file ${JSON.stringify(path)} (${why}); give PEM text, its bytes or a path`)
  }
}

function describe(value: unknown): string {
  return value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value))
}
