/**
 * Query-string parsing with the semantics of `URLSearchParams` (WHATWG form-urlencoded: `&` separates pairs,
 * the first `=` splits name from value, `+` is a space, percent-escapes are UTF-8), without building one.
 *
 * Why not `URLSearchParams`: creating and iterating one costs about as much as the rest of a small handler on
 * Node. Here a plain pair needs two `slice`s, and only a piece containing `%` or `+` is decoded.
 * @module
 */

/** Names and values, alternating, in order; repeated names kept. */
export type QueryPairs = string[]

function decode(piece: string): string {
  if (piece.indexOf('%') === -1 && piece.indexOf('+') === -1) return piece
  const spaced = piece.replaceAll('+', ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    // A malformed escape or invalid UTF-8: URLSearchParams keeps the escape or substitutes U+FFFD. (`piece` holds no
    // `&`, and a second `=` stays in the value, so it parses back as this one value.)
    return new URLSearchParams(`a=${piece}`).get('a')!
  }
}

/** Splits a query string (without the `?`) into decoded pairs. */
export function parseQuery(query: string): QueryPairs {
  const out: QueryPairs = []
  let at = 0
  while (at <= query.length) {
    let end = query.indexOf('&', at)
    if (end === -1) end = query.length
    if (end > at) {
      const eq = query.indexOf('=', at)
      if (eq === -1 || eq > end) out.push(decode(query.slice(at, end)), '')
      else out.push(decode(query.slice(at, eq)), decode(query.slice(eq + 1, end)))
    }
    at = end + 1
  }
  return out
}
