/**
 * Node's built-in modules, loaded the first time they are needed instead of when Gust is imported. In Bun each
 * one costs resident memory the moment it is imported (measured with Bun 1.4.5: node:crypto and node:net about
 * 6 MB each, node:worker_threads 4.6, node:fs 3.4, node:url, node:dns and node:path about 2 each), which an app
 * that never signs a cookie, resolves a host name or starts a worker should not pay.
 * @module
 */

type Builtins = {
  'node:crypto': typeof import('node:crypto')
  'node:dns/promises': typeof import('node:dns/promises')
  'node:fs': typeof import('node:fs')
  'node:module': typeof import('node:module')
  'node:os': typeof import('node:os')
  'node:path': typeof import('node:path')
  'node:url': typeof import('node:url')
  'node:util': typeof import('node:util')
  'node:worker_threads': typeof import('node:worker_threads')
}

/** The built-in module `id`, loaded on first use (Node ≥ 20.16 and Bun have `process.getBuiltinModule`). */
export function builtin<K extends keyof Builtins>(id: K): Builtins[K] {
  return process.getBuiltinModule(id) as Builtins[K]
}
