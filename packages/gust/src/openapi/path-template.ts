/**
 * Gust route paths as OpenAPI path templates: `/users/:id` is `/users/{id}`, and a trailing wildcard (`*name`)
 * is `{name}`. A bare `*` is named `path` (`rest` when the route already has a `:path`); its value is in
 * `c.params['*']`. OpenAPI has no wildcard: such a parameter is documented as one that may hold `/`. A literal
 * `{`, `}` or `%` is percent-encoded, as a request must send it: a brace would read as a parameter, and a route's
 * `%` matches a request's `%25`. The cases every parser of the syntax is tested against are in
 * `crates/gust-core/src/values/golden/path-syntax.json`.
 * @module
 */

/** One path parameter: its name in the document and its key in `c.params` (and in a `params` schema). */
export interface PathParam {
  name: string
  key: string
  wildcard: boolean
}

/** The OpenAPI template of a route path and its parameters, in order. */
export function pathTemplate(path: string): { template: string; params: PathParam[] } {
  const params: PathParam[] = []
  const segments = path.split('/').map((segment, i, all) => {
    if (segment.startsWith(':')) {
      params.push({ name: segment.slice(1), key: segment.slice(1), wildcard: false })
      return `{${segment.slice(1)}}`
    }
    if (segment.startsWith('*') && i === all.length - 1) {
      const own = segment.slice(1)
      const taken = (n: string) => all.includes(`:${n}`)
      const name = own !== '' ? own : taken('path') ? 'rest' : 'path'
      params.push({ name, key: own !== '' ? own : '*', wildcard: true })
      return `{${name}}`
    }
    return segment.replace(/[{}%]/g, encodeURIComponent)
  })
  return { template: segments.join('/'), params }
}

/**
 * An operation id from the method and path: `GET /users/:id/posts` is `getUsersByIdPosts`. Unique among the
 * document's routes as long as their paths differ in more than punctuation (a number is added when not).
 */
export function operationName(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (s.startsWith(':') ? `by_${s.slice(1)}` : s.startsWith('*') ? (s.length > 1 ? `by_${s.slice(1)}` : 'rest') : s))
    .flatMap((s) => s.split(/[^A-Za-z0-9]+/))
    .filter((w) => w !== '')
  const camel = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
  return method.toLowerCase() + (camel === '' ? 'Root' : camel)
}
