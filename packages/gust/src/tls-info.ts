/**
 * `c.req.tls`: what a TLS connection's handshake settled, decoded from the TLS section the engine appends to
 * each request record of a TLS connection (`crates/gust-core/src/wire/tls.rs` holds the layout).
 * @module
 */
import type { TextBytes } from './bytes.js'

/** What a request's TLS connection agreed on, and who the client proved to be. */
export interface TlsInfo {
  /** The TLS version: `'TLSv1.2'` or `'TLSv1.3'`. */
  readonly protocol: 'TLSv1.2' | 'TLSv1.3'
  /** The protocol agreed by ALPN (`'h2'`, `'http/1.1'`), or `false` when the client offered none. */
  readonly alpnProtocol: string | false
  /** The host the client named (SNI), or `false` when it named none (a client connecting by IP address). */
  readonly serverName: string | false
  /**
   * Whether the client's certificate chains to the server's `ca` (only with `requestCert`; always `false`
   * without it).
   */
  readonly authorized: boolean
  /**
   * With `requestCert`: why the client is not authorized (no certificate, an unknown issuer, an expired one…);
   * `undefined` when it is, or when client certificates were not asked for.
   */
  readonly authorizationError: string | undefined
  /**
   * The client's certificate, DER (`new crypto.X509Certificate(peerCertificate)` reads its subject and the rest);
   * `undefined` when it sent none.
   */
  readonly peerCertificate: Uint8Array | undefined
}

const CLIENT_CERT_ASKED = 1
const AUTHORIZED = 2

/** Decodes the section of `len` bytes at `at` in `buf`; the certificate is a copy, the request's buffer is reused. */
export function decodeTls(buf: TextBytes, at: number, len: number): TlsInfo {
  const end = at + len
  const version = buf[at]!
  const flags = buf[at + 1]!
  let p = at + 2
  const alpnLen = buf[p]!
  const alpn = buf.toString('latin1', p + 1, p + 1 + alpnLen)
  p += 1 + alpnLen
  const nameLen = buf[p]!
  const name = buf.toString('latin1', p + 1, p + 1 + nameLen)
  p += 1 + nameLen
  const errorLen = buf[p]! | (buf[p + 1]! << 8)
  const error = buf.toString('utf8', p + 2, p + 2 + errorLen)
  p += 2 + errorLen
  const authorized = (flags & AUTHORIZED) !== 0
  return {
    protocol: version === 3 ? 'TLSv1.3' : 'TLSv1.2',
    alpnProtocol: alpnLen > 0 ? alpn : false,
    serverName: nameLen > 0 ? name : false,
    authorized,
    authorizationError: authorized || (flags & CLIENT_CERT_ASKED) === 0 ? undefined : error || 'no client certificate',
    peerCertificate: p < end ? new Uint8Array(buf.subarray(p, end)) : undefined,
  }
}
