/**
 * An error that carries the HTTP response it should produce. Throw it from a handler or middleware; the error
 * handler turns it into that response instead of a 500.
 * @example
 * app.get('/admin', (c) => { throw new HTTPException(403, 'Forbidden') })
 */
export class HTTPException extends Error {
  /** The status sent to the client. */
  readonly status: number

  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'HTTPException'
    this.status = status
  }
}
