// Small statistics helpers.

export function median(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b)
  if (xs.length === 0) return null
  const mid = xs.length >> 1
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2
}

export function round(value, digits = 2) {
  if (value === null || value === undefined || !Number.isFinite(value)) return null
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export function sum(values) {
  return values.reduce((a, b) => a + (b ?? 0), 0)
}

export function min(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v))
  return xs.length ? Math.min(...xs) : null
}

export function max(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v))
  return xs.length ? Math.max(...xs) : null
}

/** `{ median, min, max }` of the finite values, each null when there are none. */
export function spread(values) {
  return { median: median(values), min: min(values), max: max(values) }
}

/**
 * The ratio of two medians, and whether it is a tie: the min–max ranges of the rounds overlap, so this run
 * cannot tell the two apart whatever the medians say.
 */
export function compare(own, peer) {
  if (!own?.median || !peer?.median) return null
  const tie = own.min <= peer.max && peer.min <= own.max
  // The range of ratios the rounds allow (the chart's whisker), where both have a range.
  const range = own.min != null && own.max != null && peer.min && peer.max ? { ratio_min: own.min / peer.max, ratio_max: own.max / peer.min } : {}
  return { ratio: own.median / peer.median, tie, ...range }
}

/** A deterministic PRNG (mulberry32), so a run's shuffled order can be reproduced from its recorded seed. */
export function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A shuffled copy (Fisher–Yates) drawn from `random`. */
export function shuffled(items, random) {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}
