/**
 * Telling an IP address from a host name, as `net.isIP` does (4, 6, or 0), without loading `node:net`: on Bun
 * that import alone costs about 6 MB resident and 11 ms, the largest part of `listen()` on a cold start, for a
 * question a few comparisons answer. `test/ip.test.ts` checks it against `net.isIP`.
 * @module
 */

/** Whether `text` is a dotted-quad IPv4 address: four decimal numbers 0–255, without leading zeros. */
function isIPv4(text: string): boolean {
  const parts = text.split('.')
  if (parts.length !== 4) return false
  for (const part of parts) {
    if (part.length === 0 || part.length > 3 || (part.length > 1 && part[0] === '0')) return false
    for (let i = 0; i < part.length; i++) {
      const c = part.charCodeAt(i)
      if (c < 48 || c > 57) return false
    }
    if (Number(part) > 255) return false
  }
  return true
}

/** Whether `group` is one to four hexadecimal digits. */
function isHexGroup(group: string): boolean {
  if (group.length === 0 || group.length > 4) return false
  for (let i = 0; i < group.length; i++) {
    const c = group.charCodeAt(i) | 0x20 // lower-cases letters; digits stay digits
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

/** Whether a zone (`%eth0`) is one or more of the characters `net.isIP` allows there. */
function isZone(zone: string): boolean {
  return /^[0-9a-zA-Z\-.:]+$/.test(zone)
}

/**
 * Whether `text` is an IPv6 address (RFC 4291 §2.2): eight groups of hexadecimal, or fewer with one `::`
 * standing for the rest, the last two groups possibly written as an IPv4 address, and a zone after `%`.
 */
function isIPv6(text: string): boolean {
  const percent = text.indexOf('%')
  if (percent !== -1) {
    if (!isZone(text.slice(percent + 1))) return false
    text = text.slice(0, percent)
  }
  if (!text.includes(':')) return false
  const gap = text.indexOf('::')
  if (gap !== -1 && text.indexOf('::', gap + 1) !== -1) return false
  /** The groups of one side of the gap (or of the whole address); their count in groups, or -1. */
  const count = (side: string, last: boolean): number => {
    if (side === '') return 0
    const groups = side.split(':')
    let n = 0
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i]!
      if (last && i === groups.length - 1 && group.includes('.')) {
        if (!isIPv4(group)) return -1
        n += 2
      } else if (isHexGroup(group)) {
        n += 1
      } else {
        return -1
      }
    }
    return n
  }
  if (gap === -1) return count(text, true) === 8
  const head = count(text.slice(0, gap), false)
  const tail = count(text.slice(gap + 2), true)
  // `::` stands for at least one group of zeros.
  return head >= 0 && tail >= 0 && head + tail <= 7
}

/** 4 for an IPv4 address, 6 for an IPv6 one, 0 for anything else: `net.isIP`'s answer. */
export function isIP(text: string): number {
  if (isIPv4(text)) return 4
  if (isIPv6(text)) return 6
  return 0
}
