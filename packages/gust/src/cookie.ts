/**
 * Cookies as text: reading the `Cookie` request header and building `Set-Cookie` values, as Hono's do. The
 * helpers that get, set and delete them on a context are in `cookie-helpers.ts`, above the context; this file
 * is below the request, which parses its cookies with it.
 * @example
 * parseCookies('a=1; b=2') // { a: '1', b: '2' }
 * serializeCookie('theme', 'dark', { maxAge: 3600, sameSite: 'Lax' }) // 'theme=dark; Max-Age=3600; SameSite=Lax'
 * @module
 */
import { emptyRecord } from './record.js'
import { isToken } from './reply.js'

/** Options of a `Set-Cookie` value: its attributes, and a name prefix the browser enforces. */
export interface CookieOptions {
  /** Seconds the cookie lives, a whole number from 0 to 400 days (34560000), the most browsers keep one. */
  maxAge?: number
  /** When the cookie expires, at most 400 days ahead; `maxAge` wins in browsers that see both. */
  expires?: Date
  /**
   * The path the cookie is sent for, starting with `/`. `setCookie` defaults it to `/` (the whole site) as Hono
   * does; without it a browser scopes the cookie to the request's directory, which surprises more than it helps.
   */
  path?: string
  /** The domain the cookie is sent to, subdomains included; leave it out to pin the cookie to this host. */
  domain?: string
  /** Send the cookie over HTTPS only (browsers also accept it from `http://localhost`). */
  secure?: boolean
  /** Hide the cookie from page scripts (`document.cookie`). */
  httpOnly?: boolean
  /** Whether cross-site requests carry the cookie; `None` needs `secure`. Any letter case is accepted. */
  sameSite?: 'Strict' | 'Lax' | 'None' | 'strict' | 'lax' | 'none'
  /** Keep the cookie per top-level site (CHIPS) for embedded content; needs `secure`. */
  partitioned?: boolean
  /** Which cookies Chrome evicts first when a site has too many. */
  priority?: 'Low' | 'Medium' | 'High' | 'low' | 'medium' | 'high'
  /**
   * Names the cookie `__Secure-<name>` (`'secure'`: the browser keeps it only if it is Secure) or `__Host-<name>`
   * (`'host'`: Secure, `Path=/` and no `Domain`, so no other host or path can set or shadow it). `secure` and,
   * for `'host'`, `path: '/'` are implied; contradicting them throws. Read it back with the same prefix.
   */
  prefix?: 'secure' | 'host'
}

/** The longest lifetime browsers grant a cookie, in seconds (RFC 6265bis caps `Max-Age` and `Expires` here). */
const MAX_AGE = 400 * 24 * 60 * 60

/**
 * Parses a `Cookie` request header into a record of names to percent-decoded values. When a name repeats, the
 * first one wins: browsers send the cookie with the longest path first (RFC 6265 §5.4), which is the one meant
 * for this URL. Pairs without `=` or whose name is not a token are skipped; a value that is not valid
 * percent-encoding is kept as sent. The record has no inherited members, so `__proto__` is an ordinary name.
 * @example
 * parseCookies('a=1; b="two%20words"; a=shadowed') // { a: '1', b: 'two words' }
 */
export function parseCookies(header: string): Record<string, string> {
  const out = emptyRecord()
  const length = header.length
  let at = 0
  while (at < length) {
    let end = header.indexOf(';', at)
    if (end === -1) end = length
    const eq = header.indexOf('=', at)
    if (eq !== -1 && eq < end) {
      const name = header.slice(at, eq).trim()
      if (out[name] === undefined && isToken(name)) {
        let value = header.slice(eq + 1, end).trim()
        if (value.length >= 2 && value.charCodeAt(0) === 34 && value.charCodeAt(value.length - 1) === 34) {
          value = value.slice(1, -1)
        }
        out[name] = value.includes('%') ? decode(value) : value
      }
    }
    at = end + 1
  }
  return out
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/**
 * Builds one `Set-Cookie` header value; `value` is percent-encoded (`encodeURIComponent`), and `parseCookies`
 * decodes it. Throws a `TypeError` or `RangeError` naming the cookie and the mistake for anything a browser would
 * silently drop or misread: a name that is not a token, a lifetime that is negative, fractional or over 400
 * days, a path or domain with `;` or control characters, `SameSite=None` or `Partitioned` without `Secure`, and
 * a `__Secure-` / `__Host-` name (given, or made by `prefix`) without the attributes its prefix demands.
 * @example
 * serializeCookie('theme', 'dark', { path: '/', maxAge: 60, sameSite: 'lax' })
 * // 'theme=dark; Max-Age=60; Path=/; SameSite=Lax'
 */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (typeof name !== 'string' || !isToken(name)) {
    throw new TypeError(
      `Invalid cookie name ${JSON.stringify(name)}: a name is a token (letters, digits and !#$%&'*+-.^_\`|~), without spaces, '=', ';', ',' or quotes`,
    )
  }
  const { prefix } = options
  if (prefix !== undefined && prefix !== 'secure' && prefix !== 'host') {
    throw new TypeError(`Cookie "${name}": prefix must be 'secure' or 'host', not ${JSON.stringify(prefix)}`)
  }
  const full = withPrefix(name, prefix)
  const secure = options.secure ?? prefix !== undefined
  const path = options.path ?? (prefix === 'host' ? '/' : undefined)
  const { maxAge, expires, domain, sameSite, priority } = options
  checkPrefixRules(full, secure, path, domain)

  let encoded: string
  try {
    encoded = encodeURIComponent(value)
  } catch (err) {
    throw new TypeError(`Cookie "${full}": the value is not valid Unicode (a lone surrogate)`, { cause: err })
  }
  let out = `${full}=${encoded}`
  if (maxAge !== undefined) {
    if (!Number.isInteger(maxAge)) {
      throw new TypeError(`Cookie "${full}": maxAge must be a whole number of seconds, not ${String(maxAge)}`)
    }
    if (maxAge < 0) {
      throw new RangeError(`Cookie "${full}": maxAge must not be negative (${maxAge}); deleteCookie() removes a cookie`)
    }
    if (maxAge > MAX_AGE) {
      throw new RangeError(
        `Cookie "${full}": maxAge ${maxAge} is more than 400 days (${MAX_AGE} seconds), the longest browsers keep a cookie`,
      )
    }
    out += `; Max-Age=${maxAge}`
  }
  if (domain !== undefined) out += `; Domain=${checkAttribute(full, 'domain', domain)}`
  if (path !== undefined) {
    if (checkAttribute(full, 'path', path).charCodeAt(0) !== 47) {
      throw new TypeError(`Cookie "${full}": path must start with '/' (browsers ignore any other), not ${JSON.stringify(path)}`)
    }
    out += `; Path=${path}`
  }
  if (expires !== undefined) {
    if (!(expires instanceof Date) || Number.isNaN(expires.getTime())) {
      throw new TypeError(`Cookie "${full}": expires must be a valid Date, not ${String(expires)}`)
    }
    if (expires.getTime() - Date.now() > MAX_AGE * 1000) {
      throw new RangeError(
        `Cookie "${full}": expires ${expires.toISOString()} is more than 400 days ahead, the longest browsers keep a cookie`,
      )
    }
    out += `; Expires=${expires.toUTCString()}`
  }
  if (options.httpOnly) out += '; HttpOnly'
  if (secure) out += '; Secure'
  if (sameSite !== undefined) {
    const canonical = oneOf(SAME_SITE, sameSite)
    if (canonical === undefined) {
      throw new TypeError(`Cookie "${full}": sameSite must be 'Strict', 'Lax' or 'None', not ${JSON.stringify(sameSite)}`)
    }
    if (canonical === 'None' && !secure) {
      throw new TypeError(`Cookie "${full}": SameSite=None needs secure: true (browsers reject it otherwise)`)
    }
    out += `; SameSite=${canonical}`
  }
  if (priority !== undefined) {
    const canonical = oneOf(PRIORITY, priority)
    if (canonical === undefined) {
      throw new TypeError(`Cookie "${full}": priority must be 'Low', 'Medium' or 'High', not ${JSON.stringify(priority)}`)
    }
    out += `; Priority=${canonical}`
  }
  if (options.partitioned) {
    if (!secure) throw new TypeError(`Cookie "${full}": partitioned needs secure: true (browsers reject it otherwise)`)
    out += '; Partitioned'
  }
  return out
}

const SAME_SITE = ['Strict', 'Lax', 'None'] as const
const PRIORITY = ['Low', 'Medium', 'High'] as const

/** The choice `value` names in any letter case; a list, not a record, so `'constructor'` finds nothing. */
function oneOf<T extends string>(choices: readonly T[], value: unknown): T | undefined {
  if (typeof value !== 'string') return undefined
  const lower = value.toLowerCase()
  return choices.find((choice) => choice.toLowerCase() === lower)
}

/** The name a cookie goes by: `__Secure-` or `__Host-` prefixed as `prefix` says. */
export function withPrefix(name: string, prefix: 'secure' | 'host' | undefined): string {
  return prefix === 'secure' ? `__Secure-${name}` : prefix === 'host' ? `__Host-${name}` : name
}

/**
 * RFC 6265bis §4.1.3: a browser drops a `__Secure-` cookie that is not Secure, and a `__Host-` one that is not
 * Secure, has a Domain or a Path other than `/`. Browsers match the prefixes in any letter case, so this does too.
 */
function checkPrefixRules(name: string, secure: boolean, path: string | undefined, domain: string | undefined): void {
  const lower = name.toLowerCase()
  const host = lower.startsWith('__host-')
  if (!host && !lower.startsWith('__secure-')) return
  const kind = host ? '__Host-' : '__Secure-'
  if (!secure) throw new TypeError(`Cookie "${name}": a ${kind} cookie must be Secure (secure: true)`)
  if (host && path !== '/') {
    throw new TypeError(`Cookie "${name}": a __Host- cookie must have Path=/, not ${JSON.stringify(path ?? null)}`)
  }
  if (host && domain !== undefined) {
    throw new TypeError(`Cookie "${name}": a __Host- cookie must not have a Domain (it is pinned to the host that set it)`)
  }
}

/** A path or domain goes into the header as is: `;` would start another attribute, control characters break it. */
function checkAttribute(name: string, what: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`Cookie "${name}": ${what} must be a non-empty string, not ${JSON.stringify(value)}`)
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 59) {
      throw new TypeError(
        `Cookie "${name}": ${what} ${JSON.stringify(value)} has a character a cookie attribute cannot carry (';', a control character or non-ASCII)`,
      )
    }
  }
  return value
}
