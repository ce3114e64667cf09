/**
 * A route table as a list of lines, so that a worker can check that it registered the same routes, at the same
 * handler indexes, as the main thread whose engine dispatches to it.
 * @module
 */
import type { BindingRoute } from '../native/binding.js'

export interface Table {
  routes: BindingRoute[]
  notFound: number | undefined
  methodFallback: number | undefined
}

/** One line per route (method, path, what serves it), then the fallbacks. */
export function routeSignature(table: Table): string[] {
  const lines = table.routes.map((r) => {
    const what =
      r.websocket !== undefined && r.websocket !== null
        ? `websocket #${r.handler}`
        : r.mount !== undefined && r.mount !== null
          ? `static #${r.mount}`
          : r.fixed !== undefined && r.fixed !== null
            ? 'fixed'
            : `handler #${r.handler}`
    return `${r.method} ${r.path} (${what})`
  })
  lines.push(`not found: ${table.notFound === undefined ? 'engine' : 'handler'}`)
  lines.push(`405 and OPTIONS: ${table.methodFallback === undefined ? 'engine' : 'handler'}`)
  return lines
}

/** The first difference between two signatures, in words; `null` when they are the same. */
export function routeDifference(worker: readonly string[], main: readonly string[]): string | null {
  const n = Math.max(worker.length, main.length)
  for (let i = 0; i < n; i++) {
    if (worker[i] !== main[i]) {
      const here = worker[i] ?? '(nothing)'
      const there = main[i] ?? '(nothing)'
      return `line ${i + 1} of the route table is ${here} in this worker but ${there} on the main thread`
    }
  }
  return null
}
