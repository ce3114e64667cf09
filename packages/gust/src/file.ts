import { builtin } from './builtins.js'

import { checkHeader, FileReply } from './reply.js'

/** Options of `c.file()` and `file()`. */
export interface FileOptions {
  /** The `Content-Type`, instead of the one the extension gives. */
  contentType?: string
  /** A `Cache-Control` header (`'public, max-age=31536000, immutable'` for hashed assets, `'no-store'`). */
  cacheControl?: string
}

/** Checks a file answer's path and options; `headers` are the ones already set (a context's). */
export function fileReply(caller: string, path: unknown, options: FileOptions, headers: string[]): FileReply {
  if (typeof path !== 'string' || path === '' || path.includes('\0')) {
    throw new TypeError(`${caller} takes a file path, got ${typeof path === 'string' ? JSON.stringify(path) : typeof path}`)
  }
  if (typeof options !== 'object' || options === null) throw new TypeError(`${caller} options must be an object`)
  for (const key of Object.keys(options)) {
    if (key !== 'contentType' && key !== 'cacheControl') {
      throw new Error(`${caller}: unknown option "${key}"; known options: contentType, cacheControl`)
    }
  }
  for (const [key, name] of [['contentType', 'content-type'], ['cacheControl', 'cache-control']] as const) {
    const value = options[key]
    if (value === undefined) continue
    checkHeader(name, value)
    headers.push(name, value)
  }
  return new FileReply(200, headers, `path:${builtin('node:path').resolve(path)}`)
}

/**
 * A file as a route's fixed value, served entirely by the engine (a turbo file route: no JavaScript runs per
 * request): `app.get('/video.mp4', file('./media/video.mp4'))`. The file is looked up on every request, so a
 * change on disk is served at once, with the type, validators, 304/412, ranges and HEAD of `c.file()`; a missing
 * file goes to the app's not-found answer. A relative `path` is resolved from the working directory now.
 */
export function file(path: string, options: FileOptions = {}): FileReply {
  return fileReply('file()', path, options, [])
}
