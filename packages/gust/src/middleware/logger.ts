import type { Middleware } from '../compose.js'
import { HTTPException } from '../http-exception.js'

/** Where `logger()` writes each line. */
export type PrintFunction = (line: string) => void

/** ANSI colours by status class: 2xx green, 3xx cyan, 4xx yellow, 5xx red. */
const COLOURS: Record<number, string> = { 2: '32', 3: '36', 4: '33', 5: '31' }

/** Colour only a terminal, and never when NO_COLOR is set (https://no-color.org). */
function colourOn(): boolean {
  const env = globalThis.process?.env
  return globalThis.process?.stdout?.isTTY === true && !env?.NO_COLOR
}

function elapsed(start: number): string {
  const ms = performance.now() - start
  const rounded = Math.round(ms)
  return rounded < 1000 ? `${rounded}ms` : `${(ms / 1000).toFixed(1)}s`
}

/**
 * Logs each request as it arrives (`<-- GET /path?q=1`) and when its response is ready
 * (`--> GET /path?q=1 200 3ms`), as Hono's `logger` does. For a streamed response, "ready" means its head: the
 * body may still be flowing. When the chain throws, the line shows the status the default error handler will
 * send (an `HTTPException`'s, otherwise 500) and the error goes on to the error handler. Statuses are coloured
 * when writing to a terminal with `console.log`; never when `print` is given.
 * @example
 * app.use(logger())
 * app.use(logger((line) => pino.info(line)))
 */
export function logger(print?: PrintFunction): Middleware {
  if (print !== undefined && typeof print !== 'function') {
    throw new TypeError(`logger() takes a function that prints a line, got ${typeof print}`)
  }
  const out = print ?? ((line: string) => console.log(line))
  const colour = print === undefined && colourOn()
  const status = (code: number) => {
    const c = COLOURS[Math.floor(code / 100)]
    return colour && c !== undefined ? `\x1b[${c}m${code}\x1b[0m` : String(code)
  }

  return async (c, next) => {
    const { method, rawUrl } = c.req
    out(`<-- ${method} ${rawUrl}`)
    const start = performance.now()
    try {
      await next()
    } catch (err) {
      out(`--> ${method} ${rawUrl} ${status(err instanceof HTTPException ? err.status : 500)} ${elapsed(start)}`)
      throw err
    }
    // No response after `next()` means the chain was left unfinished, which compose turns into an error: a 500.
    out(`--> ${method} ${rawUrl} ${status(c.res?.status ?? 500)} ${elapsed(start)}`)
  }
}
