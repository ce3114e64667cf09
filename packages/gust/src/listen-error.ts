/**
 * A failure to listen, shaped as Node's `net.Server` reports the same failure: `code` (`EADDRINUSE`, `EACCES`,
 * `EADDRNOTAVAIL`), `errno` (the runtime's number for it, negative as libuv's), `syscall: 'listen'`, `address`
 * and `port`, and the message Node writes (`listen EADDRINUSE: address already in use 127.0.0.1:3000`). Code
 * that retries on another port, and process managers, test these fields; the engine's own error stays as `cause`.
 *
 * The engine tells the code and the address through its error's `cause`, whose message is
 * `EADDRINUSE 127.0.0.1:3000` (`crates/gust-napi/src/lib.rs`, `js_error`): napi errors carry no other fields.
 * @module
 */
import { builtin } from './builtins.js'

/** What a failure to listen carries, as on Node's `net.Server`. */
export interface ListenError extends Error {
  code: 'EADDRINUSE' | 'EACCES' | 'EADDRNOTAVAIL'
  errno: number
  syscall: 'listen'
  address: string
  port: number
}

const CODES = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'])

/**
 * The number and description of `code` on this platform, as this runtime's `net.Server` gives them: Node's errno
 * is libuv's, negative (-98 for EADDRINUSE on Linux); Bun's `net.Server` gives the system's, positive (98).
 */
function systemError(code: string): [number, string] | undefined {
  // Loaded here, on a failure, not at import: on Node 26 node:util brings node:stream and node:worker_threads.
  for (const [errno, [name, description]] of builtin('node:util').getSystemErrorMap()) {
    if (name === code) return [process.versions.bun === undefined ? errno : Math.abs(errno), description]
  }
  return undefined
}

/** `err` as Node's listen error when the engine named a failure to listen, else `err` unchanged. */
export function listenError(err: unknown): unknown {
  if (!(err instanceof Error) || !(err.cause instanceof Error)) return err
  const told = /^(E[A-Z]+) (.+):(\d+)$/.exec(err.cause.message)
  if (told === null || !CODES.has(told[1]!)) return err
  const code = told[1] as ListenError['code']
  // An IPv6 address comes bracketed ([::1]:3000); Node's `address` field has it bare.
  const address = told[2]!.replace(/^\[(.*)\]$/, '$1')
  const port = Number(told[3])
  const [errno, description] = systemError(code) ?? [0, code]
  const out = new Error(`listen ${code}: ${description} ${address}:${port}`, { cause: err }) as ListenError
  Object.assign(out, { code, errno, syscall: 'listen' as const, address, port })
  return out
}
