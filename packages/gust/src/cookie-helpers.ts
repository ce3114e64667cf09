/**
 * Cookie helpers on a context: get, set and delete, with Hono's names and behaviour (`hono/cookie`), so an app
 * moving over keeps its code and its users' cookies. Signed cookies are in `cookie-signed.ts`.
 * @example
 * import { getCookie, setCookie } from 'gust'
 * app.get('/', (c) => {
 *   const visits = Number(getCookie(c, 'visits') ?? 0) + 1
 *   setCookie(c, 'visits', String(visits), { maxAge: 3600, httpOnly: true, sameSite: 'Lax' })
 *   return `visit ${visits}`
 * })
 * @module
 */
import type { Context } from './context.js'
import { type CookieOptions, serializeCookie, withPrefix } from './cookie.js'

/** What `Expires` says to delete a cookie: any past date works, the epoch is the customary one. */
const EPOCH = new Date(0)

/**
 * The request's cookies as a record, or one cookie's value (`undefined` when absent). With `prefix`, reads the
 * cookie `setCookie` wrote with the same prefix (`__Secure-<name>` or `__Host-<name>`).
 * @example
 * app.get('/', (c) => getCookie(c, 'session') ?? 'no session')
 */
export function getCookie(c: Context): Record<string, string>
export function getCookie(c: Context, name: string, prefix?: 'secure' | 'host'): string | undefined
export function getCookie(c: Context, name?: string, prefix?: 'secure' | 'host'): string | undefined | Record<string, string> {
  return name === undefined ? c.req.cookie() : c.req.cookie(withPrefix(name, prefix))
}

/**
 * Adds a `Set-Cookie` header to the response; each call adds its own line, so several cookies can go out at
 * once. `Path` defaults to `/`. Throws on invalid options, as `serializeCookie` does.
 * @example
 * setCookie(c, 'theme', 'dark', { maxAge: 60 * 60 * 24 * 30, sameSite: 'Lax' })
 * setCookie(c, 'token', token, { prefix: 'host', httpOnly: true }) // __Host-token=…; Path=/; HttpOnly; Secure
 */
export function setCookie(c: Context, name: string, value: string, options?: CookieOptions): void {
  const serialized = serializeCookie(name, value, { ...options, path: options?.path ?? '/' })
  c.header('set-cookie', serialized, { append: true })
}

/**
 * Tells the browser to drop a cookie: sets it empty with `Max-Age=0` and an `Expires` in the past. Pass the
 * `path`, `domain`, `prefix` (and `partitioned`) it was set with: a browser only replaces the cookie they match.
 * Returns the value the request carried, if any.
 * @example
 * app.post('/logout', (c) => {
 *   deleteCookie(c, 'session', { prefix: 'host' })
 *   return c.redirect('/')
 * })
 */
export function deleteCookie(
  c: Context,
  name: string,
  options?: Omit<CookieOptions, 'maxAge' | 'expires'>,
): string | undefined {
  const had = getCookie(c, name, options?.prefix)
  setCookie(c, name, '', { ...options, maxAge: 0, expires: EPOCH })
  return had
}
