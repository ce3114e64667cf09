/**
 * `trustProxy`: which peers may tell the client's address, protocol and host through `Forwarded` (RFC 7239) or
 * `X-Forwarded-For` / `-Proto` / `-Host`. Untrusted, those headers are ignored: any client can send them.
 * @module
 */
import { isIP } from './ip.js'

/**
 * Which peers are trusted proxies: `true` (every peer, as behind a load balancer that is the only way in),
 * `false` (none; the default), a list of addresses and CIDR ranges (`'10.0.0.0/8'`, `'::1'`, or the names
 * `'loopback'`, `'linklocal'`, `'uniquelocal'`), or a function of the peer's address.
 */
export type TrustProxy = boolean | string | readonly string[] | ((ip: string) => boolean)

/** Tells whether an address is a trusted proxy. */
export type TrustFn = (ip: string) => boolean

const NAMED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

/** An address as 16 bytes (IPv4 mapped into IPv6), or undefined when it is not an address. */
function bytesOf(ip: string): Uint8Array | undefined {
  const out = new Uint8Array(16)
  const kind = isIP(ip)
  if (kind === 4) {
    out[10] = out[11] = 0xff
    ip.split('.').forEach((part, i) => (out[12 + i] = Number(part)))
    return out
  }
  if (kind !== 6) return undefined
  let text = ip.replace(/^\[|\]$/g, '').split('%')[0]!
  const v4 = text.match(/(\d+\.\d+\.\d+\.\d+)$/)
  if (v4) {
    const tail = bytesOf(v4[1]!)!
    text = `${text.slice(0, -v4[1]!.length)}${((tail[12]! << 8) | tail[13]!).toString(16)}:${((tail[14]! << 8) | tail[15]!).toString(16)}`
  }
  const [head, rest] = text.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = rest === undefined || rest === '' ? [] : rest.split(':')
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  groups.forEach((g, i) => {
    const n = parseInt(g, 16)
    out[i * 2] = n >> 8
    out[i * 2 + 1] = n & 0xff
  })
  return out
}

/** A range check from `'a.b.c.d/n'`, `'x::/n'` or a single address. */
function rangeOf(spec: string): TrustFn {
  const [addr, bits] = spec.split('/') as [string, string | undefined]
  const base = bytesOf(addr)
  const kind = isIP(addr)
  const max = kind === 4 ? 32 : 128
  const prefix = bits === undefined ? max : Number(bits)
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > max || (bits !== undefined && !/^\d+$/.test(bits))) {
    throw new TypeError(`trustProxy: "${spec}" is not an IP address, a CIDR range or one of ${Object.keys(NAMED).join(', ')}`)
  }
  const total = kind === 4 ? prefix + 96 : prefix
  return (ip) => {
    const b = bytesOf(ip)
    if (b === undefined) return false
    for (let bit = 0; bit < total; bit += 8) {
      const take = Math.min(8, total - bit)
      const mask = (0xff << (8 - take)) & 0xff
      if ((b[bit >> 3]! & mask) !== (base[bit >> 3]! & mask)) return false
    }
    return true
  }
}

/** Compiles the `trustProxy` option; throws naming what is wrong. Undefined when nothing is trusted. */
export function compileTrust(option: TrustProxy | undefined): TrustFn | undefined {
  if (option === undefined || option === false) return undefined
  if (option === true) return () => true
  if (typeof option === 'function') return option
  const specs = typeof option === 'string' ? option.split(',').map((s) => s.trim()) : option
  if (!Array.isArray(specs) || specs.some((s) => typeof s !== 'string')) {
    throw new TypeError('trustProxy must be a boolean, an address or CIDR list, or a function (ip) => boolean')
  }
  const checks = specs.flatMap((s) => (NAMED[s] ?? [s]).map(rangeOf))
  return (ip) => checks.some((check) => check(ip))
}

/** What trusted proxies said about the client, read from the request's headers. */
export interface Forwarded {
  /** Addresses, client first, each proxy's peer after (as `X-Forwarded-For` lists them). */
  for: string[]
  proto: string | undefined
  host: string | undefined
}

/** Strips RFC 7239 quoting and ports from a `for=` node (`"[2001:db8::1]:4711"`, `192.0.2.60:80`). */
function node(value: string): string {
  let v = value.trim().replace(/^"|"$/g, '')
  if (v.startsWith('[')) return v.slice(1, v.indexOf(']'))
  if (isIP(v) === 0 && v.includes(':') && v.indexOf(':') === v.lastIndexOf(':')) v = v.slice(0, v.indexOf(':'))
  return v
}

/** Reads `Forwarded` when present, else the `X-Forwarded-*` trio. */
export function readForwarded(header: (name: string) => string | undefined): Forwarded {
  const forwarded = header('forwarded')
  if (forwarded !== undefined) {
    const out: Forwarded = { for: [], proto: undefined, host: undefined }
    for (const element of forwarded.split(',')) {
      for (const pair of element.split(';')) {
        const eq = pair.indexOf('=')
        if (eq === -1) continue
        const key = pair.slice(0, eq).trim().toLowerCase()
        const value = pair.slice(eq + 1).trim().replace(/^"|"$/g, '')
        if (key === 'for') out.for.push(node(value))
        else if (key === 'proto') out.proto ??= value.toLowerCase()
        else if (key === 'host') out.host ??= value
      }
    }
    return out
  }
  const list = (name: string) =>
    (header(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  return {
    for: list('x-forwarded-for').map(node),
    proto: list('x-forwarded-proto')[0]?.toLowerCase(),
    host: list('x-forwarded-host')[0],
  }
}

/**
 * The client's address: walking the forwarded chain from the nearest hop, every trusted proxy is skipped and
 * the first address that is not one is the client (as Express does). All trusted: the farthest.
 */
export function clientIp(peer: string, chain: readonly string[], trusted: TrustFn): string {
  let ip = peer
  for (let i = chain.length - 1; i >= 0 && trusted(ip); i--) ip = chain[i]!
  return ip
}

/**
 * The `trustProxy` option as address ranges, for the engine (rate limits keyed by the client's address): `[]`
 * trusts nobody; undefined when it is a function, which only JavaScript can ask.
 */
export function trustRanges(option: TrustProxy | undefined): string[] | undefined {
  if (option === undefined || option === false) return []
  if (option === true) return ['::/0', '0.0.0.0/0']
  if (typeof option === 'function') return undefined
  const specs = typeof option === 'string' ? option.split(',').map((s) => s.trim()) : option
  return specs.flatMap((s) => [...(NAMED[s] ?? [s])])
}
