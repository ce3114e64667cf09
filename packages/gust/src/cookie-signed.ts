/**
 * Signed cookies: a value the client can read but not change unnoticed, in Hono's format (`value.signature`,
 * HMAC-SHA256, base64) so cookies signed by either one read back in the other.
 * @module
 */
import { builtin } from './builtins.js'

import type { Context } from './context.js'
import type { CookieOptions } from './cookie.js'
import { getCookie, setCookie } from './cookie-helpers.js'
import { emptyRecord } from './record.js'

/** A base64 HMAC-SHA256 is 44 characters: 43 for the 32 bytes and one `=` of padding. */
const SIGNATURE_LENGTH = 44

/**
 * Sets a cookie whose value carries an HMAC-SHA256 signature made with `secret`, so `getSignedCookie` can tell
 * whether the client changed it. The value is readable by the client, not encrypted. The format is Hono's
 * (`value.base64signature`), so cookies signed by either one read back in the other.
 * @example
 * setSignedCookie(c, 'user', '42', process.env.COOKIE_SECRET!, { httpOnly: true, sameSite: 'Lax' })
 */
export function setSignedCookie(
  c: Context,
  name: string,
  value: string,
  secret: string | Uint8Array,
  options?: CookieOptions,
): void {
  checkSecret(secret)
  setCookie(c, name, `${value}.${sign(value, secret)}`, options)
}

/**
 * Reads a signed cookie: its value when the signature matches `secret`, `false` when the cookie is there but its
 * signature is wrong or missing (changed by the client, or signed with another secret), `undefined` when absent.
 * With no name, every cookie that carries a signature, each as its value or `false`; unsigned cookies are left out.
 * Synchronous; `await` on it works too, as with Hono's.
 * @example
 * const user = getSignedCookie(c, secret, 'user')
 * if (user === false) throw new HTTPException(401, 'Tampered cookie')
 */
export function getSignedCookie(c: Context, secret: string | Uint8Array): Record<string, string | false>
export function getSignedCookie(
  c: Context,
  secret: string | Uint8Array,
  name: string,
  prefix?: 'secure' | 'host',
): string | false | undefined
export function getSignedCookie(
  c: Context,
  secret: string | Uint8Array,
  name?: string,
  prefix?: 'secure' | 'host',
): string | false | undefined | Record<string, string | false> {
  checkSecret(secret)
  if (name !== undefined) {
    const raw = getCookie(c, name, prefix)
    return raw === undefined ? undefined : verify(raw, secret)
  }
  const all = getCookie(c)
  const out = emptyRecord() as Record<string, string | false>
  for (const key in all) {
    const raw = all[key]!
    if (looksSigned(raw)) out[key] = verify(raw, secret)
  }
  return out
}

function checkSecret(secret: unknown): asserts secret is string | Uint8Array {
  if (typeof secret !== 'string' && !(secret instanceof Uint8Array)) {
    throw new TypeError(`A cookie secret must be a string or a Uint8Array, not ${typeof secret}`)
  }
  if (secret.length === 0) throw new TypeError('A cookie secret must not be empty: anyone could sign cookies with it')
}

/** Base64 (standard alphabet, padded) of the HMAC-SHA256 of the value, as Hono computes it. */
function sign(value: string, secret: string | Uint8Array): string {
  return builtin('node:crypto').createHmac('sha256', secret).update(value, 'utf8').digest('base64')
}

function looksSigned(raw: string): boolean {
  return raw.length > SIGNATURE_LENGTH && raw.charCodeAt(raw.length - SIGNATURE_LENGTH - 1) === 46 && raw.endsWith('=')
}

/**
 * The value before the last `.` when the signature after it is right; compared in constant time, so response
 * timing tells an attacker nothing about how much of a forged signature was right.
 */
function verify(raw: string, secret: string | Uint8Array): string | false {
  if (!looksSigned(raw)) return false
  const value = raw.slice(0, raw.length - SIGNATURE_LENGTH - 1)
  const expected = Buffer.from(sign(value, secret), 'latin1')
  const given = Buffer.from(raw.slice(raw.length - SIGNATURE_LENGTH), 'latin1')
  // Both are 44 bytes unless the client sent non-ASCII; timingSafeEqual throws on unequal lengths.
  return given.length === expected.length && builtin('node:crypto').timingSafeEqual(given, expected) ? value : false
}
