#!/usr/bin/env node
// `make test`'s HTTP/1.1 conformance check: h1spec's and Http11Probe's cases (ported as data) against Gust. Fails on
// any h1spec case that does not pass, on a scored Http11Probe case that fails without a reason in GUST_HTTP1_NOTES,
// and on a note whose case now passes (the note would be stale). Once, on Node: the engine parses HTTP/1.1, the
// runtime does not take part in it.
import { runCases, suites } from './http1.mjs'
import { GUST_HTTP1_NOTES, startGustH1 } from './gust-h1.mjs'

const { h1spec, http11probe } = await suites()
const server = await startGustH1()
const problems = []
try {
  for (const [name, cases] of [['h1spec', h1spec], ['Http11Probe', http11probe]]) {
    const results = await runCases(cases, server.port)
    const tally = {}
    for (const [i, r] of results.entries()) {
      const c = cases[i]
      tally[r.verdict] = (tally[r.verdict] ?? 0) + 1
      const noted = r.id in GUST_HTTP1_NOTES
      if (name === 'h1spec' && r.verdict !== 'pass') problems.push(`${r.id} ${r.verdict} (${r.status ?? 'no response'}, ${r.state}): ${c.description}`)
      else if (r.verdict === 'fail' && c.scored && !noted) problems.push(`${r.id} failed (${r.status ?? 'no response'}, ${r.state}): ${c.description}`)
      else if (r.verdict === 'error') problems.push(`${r.id}: ${r.state}`)
      else if (noted && r.verdict !== 'fail') problems.push(`${r.id} now gives ${r.verdict}: drop its note in gust-h1.mjs`)
    }
    console.log(`${name}: ${Object.entries(tally).map(([v, n]) => `${n} ${v}`).join(', ')}`)
  }
} finally {
  await server.stop()
}
if (problems.length) {
  console.error(`✗ HTTP/1.1 conformance:\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log('✓ every h1spec case passes; no scored Http11Probe case fails without a reason')
