/**
 * A `Response` that keeps what it was given and builds the runtime's real `Response` only when something asks
 * for more than the adapter needs. `serve()` installs it as the global `Response` (as Hono's own Node adapter
 * does), so `new Response('text', { headers })` in an app costs an object with two fields, and the adapter
 * sends the string as it is: no `Headers`, no body stream, no reader.
 *
 * Anything else (`res.headers`, `res.text()`, `clone()` …) builds the real one, once, and answers from it; the
 * adapter then reads that one as it would any `Response`. `instanceof Response` holds for both kinds, and for
 * responses `fetch()` returns.
 * @module
 */

/**
 * The runtime's own `Response`, read when first needed (`serve()` installing this one), never at import: on Node
 * the global is a lazy getter whose first read loads undici, and with it node:http, http2, tls, crypto, zlib and
 * net, about 20 ms of a cold start that an app without `serve()` should not pay.
 */
let Native: typeof Response

type BodyInit = ConstructorParameters<typeof Response>[0]
type HeadersInit = NonNullable<ResponseInit['headers']>

/** Body inits sent as they are; any other kind (a stream, a Blob, FormData …) builds the real response at once. */
type Plain = string | Uint8Array | ArrayBuffer | null | undefined

function isPlain(body: unknown): body is Plain {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer
}

/** What the adapter sends for an untouched light response. */
export interface LightParts {
  status: number
  /** Name, value, … as given (the engine checks them). */
  headers: string[]
  body: string | Uint8Array
}

/** The parts of a light response nothing has touched, or undefined (then read it as any `Response`). */
export let lightParts: (res: Response) => LightParts | undefined

function headerPairs(headers: HeadersInit | undefined, out: string[]): boolean {
  if (headers === undefined) return true
  if (headers instanceof Headers) {
    // Cookies are taken apart by getSetCookie(), asked for only when there are some (an array per response).
    let cookies = false
    headers.forEach((value, name) => {
      if (name !== 'set-cookie') out.push(name, value)
      else cookies = true
    })
    if (cookies) for (const cookie of headers.getSetCookie()) out.push('set-cookie', cookie)
    return true
  }
  if (Array.isArray(headers)) {
    for (const pair of headers) {
      if (pair.length !== 2) return false
      out.push(String(pair[0]).toLowerCase(), String(pair[1]))
    }
    return true
  }
  if (typeof headers !== 'object' || headers === null) return false
  for (const name in headers) out.push(name.toLowerCase(), String((headers as Record<string, string>)[name]))
  return true
}

function hasType(headers: string[]): boolean {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'content-type') return true
  return false
}

/** Bun's `Response` leaves a string body untyped (Node's adds the standard type itself). */
const NEEDS_TEXT_TYPE = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined'

export class LightResponse {
  #body: Plain
  #init: ResponseInit | undefined
  #made: Response | undefined

  static {
    lightParts = (res) => {
      // A brand check: `instanceof` is true for every Response here (see `Symbol.hasInstance`).
      if (typeof res !== 'object' || res === null || !(#made in res) || res.#made !== undefined) return undefined
      const init = res.#init
      const headers: string[] = []
      if (!headerPairs(init?.headers, headers)) return undefined
      const body = res.#body
      if (typeof body === 'string') {
        // What the Fetch standard's constructor adds for a string body (Bun leaves it to Bun.serve).
        if (!hasType(headers)) headers.push('content-type', 'text/plain;charset=UTF-8')
        return { status: init?.status ?? 200, headers, body }
      }
      return { status: init?.status ?? 200, headers, body: body instanceof ArrayBuffer ? new Uint8Array(body) : (body ?? '') }
    }
  }

  constructor(body?: BodyInit | null, init?: ResponseInit) {
    const status = init?.status
    if (isPlain(body) && (status === undefined || (Number.isInteger(status) && status >= 200 && status <= 599 && !(body != null && (status === 204 || status === 205 || status === 304))))) {
      this.#body = body
      this.#init = init
      this.#made = undefined
    } else {
      // A stream, Blob or FormData body, or a status the real constructor must judge (and throw for).
      this.#body = undefined
      this.#init = undefined
      this.#made = new Native(body, init)
    }
  }

  /** The real response, built once. */
  #real(): Response {
    if (this.#made !== undefined) return this.#made
    let init = this.#init
    if (NEEDS_TEXT_TYPE && typeof this.#body === 'string') {
      // The Fetch standard's constructor adds `text/plain;charset=UTF-8` for a string body; Bun's leaves it to
      // Bun.serve, so a response read here (Hono's `cors()` touching `c.res.headers`) would go out untyped.
      const headers = new Headers(init?.headers)
      if (!headers.has('content-type')) {
        headers.set('content-type', 'text/plain;charset=UTF-8')
        init = { ...init, headers }
      }
    }
    return (this.#made = new Native(this.#body, init))
  }

  get status(): number {
    return this.#made?.status ?? this.#init?.status ?? 200
  }
  get ok(): boolean {
    const s = this.status
    return s >= 200 && s <= 299
  }
  get statusText(): string {
    return this.#made?.statusText ?? this.#init?.statusText ?? ''
  }
  get headers(): Headers {
    return this.#real().headers
  }
  get body(): ReadableStream<Uint8Array> | null {
    return this.#real().body as ReadableStream<Uint8Array> | null
  }
  get bodyUsed(): boolean {
    return this.#made?.bodyUsed ?? false
  }
  get type(): Response['type'] {
    return this.#real().type
  }
  get url(): string {
    return this.#real().url
  }
  get redirected(): boolean {
    return this.#real().redirected
  }
  clone(): Response {
    return this.#real().clone()
  }
  text(): Promise<string> {
    return this.#real().text()
  }
  json(): Promise<unknown> {
    return this.#real().json()
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#real().arrayBuffer()
  }
  blob(): Promise<Blob> {
    return this.#real().blob()
  }
  formData(): Promise<FormData> {
    return this.#real().formData()
  }
  bytes(): Promise<Uint8Array> {
    const real = this.#real() as Response & { bytes?: () => Promise<Uint8Array> }
    return real.bytes !== undefined ? real.bytes() : real.arrayBuffer().then((b) => new Uint8Array(b))
  }

  static json(data: unknown, init?: ResponseInit): Response {
    const body = JSON.stringify(data)
    if (body === undefined) return Native.json(data, init)
    const headers = new Headers(init?.headers)
    if (!headers.has('content-type')) headers.set('content-type', 'application/json')
    return new LightResponse(body, { ...init, headers }) as unknown as Response
  }
  static redirect(url: string | URL, status?: number): Response {
    return Native.redirect(url, status as Parameters<typeof Response.redirect>[1])
  }
  static error(): Response {
    return Native.error()
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(LightResponse, value) || value instanceof Native
  }
}
let installed = false

/** Makes `LightResponse` the global `Response`, once per process. */
export function installLightResponse(): void {
  if (installed) return
  installed = true
  Native = globalThis.Response
  // Code that inspects the prototype chain (`Object.getPrototypeOf(res) === Response.prototype` aside) sees a
  // Response.
  Object.setPrototypeOf(LightResponse.prototype, Native.prototype)
  Object.defineProperty(globalThis, 'Response', { value: LightResponse, writable: true, configurable: true })
}
