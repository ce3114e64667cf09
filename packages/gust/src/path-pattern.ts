/**
 * Paths as apps write them: joining a prefix to a route (`route()`, `basePath()`), and matching a request path
 * against a middleware's pattern (`use('/admin/*', mw)`).
 * @module
 */

/** A prefix as `route()` and `basePath()` normalize it, at the type level: no trailing `/`, and `/` is `''`. */
export type NormalizePrefix<P extends string> = P extends '/' ? '' : P extends `${infer Head}/` ? Head : P

/** A route path under a prefix, at the type level: `Join<'/users/:id', '/posts'>` is `'/users/:id/posts'`. */
export type JoinPath<B extends string, P extends string> = B extends '' ? P : P extends '/' ? B : `${B}${P}`

/** Checks a prefix given to `route()` or `basePath()` and drops a trailing slash; `/` is the empty prefix. */
export function normalizePrefix(prefix: unknown, method: string): string {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) {
    throw new TypeError(`${method}() takes a path that starts with "/", got ${JSON.stringify(prefix) ?? String(prefix)}`)
  }
  if (/[*?#]/.test(prefix)) throw new TypeError(`${method}() takes a plain path prefix without "*", "?" or "#", got "${prefix}"`)
  return prefix.endsWith('/') ? prefix.slice(0, -1) : prefix
}

/** A path under a prefix (already normalized): `/` under `/api` is `/api`. */
export function joinPath(prefix: string, path: string): string {
  if (prefix === '') return path
  return path === '/' ? prefix : `${prefix}${path}`
}

/** Tells whether a request path falls under a pattern. */
export type PathMatcher = (path: string) => boolean

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Compiles a middleware pattern in the route syntax: literal segments, `:name` for one segment, and a last
 * segment `*` (or `*name`) for any rest. `/admin/*` covers `/admin` itself too, so guarding a section cannot
 * leave its root open. Matched against the decoded path routing saw (`c.req.path`). Throws naming the pattern
 * when it is not valid.
 */
export function compilePattern(pattern: string): PathMatcher {
  if (typeof pattern !== 'string' || !pattern.startsWith('/')) {
    throw new TypeError(`use() takes a path pattern that starts with "/", got ${JSON.stringify(pattern) ?? String(pattern)}`)
  }
  const segments = pattern.split('/').slice(1)
  let source = ''
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1
    if (segment.startsWith('*')) {
      if (!last) throw new TypeError(`use() pattern "${pattern}": "*" may only be the last segment`)
      source += '(?:/.*)?'
    } else if (segment.startsWith(':')) {
      if (segment.length === 1) throw new TypeError(`use() pattern "${pattern}": a ":" segment needs a name`)
      source += '/[^/]+'
    } else {
      if (segment.includes('*') || segment.includes(':')) {
        throw new TypeError(`use() pattern "${pattern}": "*" and ":" must start a segment`)
      }
      source += `/${escape(segment)}`
    }
  }
  if (source === '(?:/.*)?') return () => true
  const regex = new RegExp(`^${source}$`)
  return (path) => regex.test(path)
}

/**
 * Whether some request path could be routed to `route` (a path with params or a wildcard) and also fall under
 * the middleware `pattern`: false only when, at a segment both spell out before any param or wildcard, they name
 * different literals. Then the route's chain leaves the middleware out instead of testing the pattern on each of
 * its requests. A literal with `%` is never ruled out (a route's `%` matches `%25` in `c.req.path`).
 */
export function mayOverlap(route: string, pattern: string): boolean {
  const r = route.split('/')
  const m = pattern.split('/')
  for (let i = 1; i < Math.min(r.length, m.length); i++) {
    const a = r[i]!
    const b = m[i]!
    if (a.startsWith('*') || b.startsWith('*')) return true
    if (a.startsWith(':') || b.startsWith(':') || a.includes('%') || b.includes('%')) continue
    if (a !== b) return false
  }
  return true
}

/** Whether a route path has no parameters and no wildcard: then a pattern can be matched against it once. */
export function isLiteralPath(path: string): boolean {
  return !/\/[:*]/.test(path)
}
