/** Shared by every copy of the package in a process (the ESM and the CommonJS build are two copies). */
const BRAND = Symbol.for('gust.HTTPException')
/** Marks the base class itself (own property only), so subclasses keep the ordinary prototype check. */
const BASE = Symbol.for('gust.HTTPException.base')

/**
 * An error that carries the HTTP response it should produce. Throw it from a handler or middleware; the error
 * handler turns it into that response instead of a 500.
 * @example
 * app.get('/admin', (c) => { throw new HTTPException(403, 'Forbidden') })
 */
export class HTTPException extends Error {
  /** The status sent to the client. */
  readonly status: number
  static readonly [BASE] = true

  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'HTTPException'
    this.status = status
    Object.defineProperty(this, BRAND, { value: true })
  }

  /**
   * `instanceof` holds across copies of the package: one thrown from code that did `require('gust')` is still
   * an `HTTPException` to an app built with `import`. Only errors are checked this way, never the hot path.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!Object.hasOwn(this, BASE)) return Function.prototype[Symbol.hasInstance].call(this, value)
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}
