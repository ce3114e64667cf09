// The README's benchmark block tells today's story: it is generated from a full run (make bench) of a committed
// tree, in the current results format, made on the engine `listen()` picks by default in the code it ships with,
// and nobody edited it or its chart by hand. Run by `make test` (test-bench), after the package is built.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { latestRuns, readmeBlock, readmeChart, readmeSummary, RESULTS_FORMAT, showable } from './report.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const dir = join(root, 'benchmarks', 'results')
const { main, others } = latestRuns(dir)
const remake = 'run `make bench` (and `make bench-seed`) on a committed tree and commit what it writes'

/** `listen()`'s default engine on this machine, as the built package resolves it with nothing named. */
async function defaultEngine() {
  const saved = process.env.GUST_ENGINE
  delete process.env.GUST_ENGINE
  try {
    const { resolveOptions } = await import(join(root, 'packages/gust/dist/options.js'))
    return resolveOptions({}).engine
  } finally {
    if (saved !== undefined) process.env.GUST_ENGINE = saved
  }
}

test('the README is generated from a full run of a committed tree, in the current results format', () => {
  assert.ok(main, 'benchmarks/results/latest.json is missing')
  assert.equal(main.format, RESULTS_FORMAT, `latest.json is of results format ${main.format ?? 1}, not ${RESULTS_FORMAT}: ${remake}`)
  assert.equal(main.settings.all, true, `latest.json is not a run of every contestant (--all without --only): ${remake}`)
  assert.match(main.measured.commit ?? '', /^[0-9a-f]{40}$/, 'latest.json names no commit')
  assert.equal(main.measured.dirty, false, `latest.json was measured on a work tree with uncommitted changes: ${remake}`)
})

test("the README's runs were made on the engine listen() picks by default today", async () => {
  // Linux and macOS share the default; this is where make bench runs.
  const engine = await defaultEngine()
  assert.equal(main.measured.default_engine, engine, `latest.json was made when the default engine was ${main.measured.default_engine}; today it is ${engine}: ${remake}`)
  // The runs shown beside it come from the same make bench: the same commit, a clean tree.
  for (const run of others.filter((o) => showable(o, main))) {
    assert.equal(run.measured.commit, main.measured.commit, `${run.started_at}'s run measured another commit than latest.json: ${remake}`)
    assert.equal(run.measured.dirty, false, `${run.started_at}'s run was measured with uncommitted changes: ${remake}`)
  }
  const gust = main.contestants.find((c) => c.name === 'gust-native@bun')
  assert.equal(gust?.engine, engine, 'gust-native@bun, the README\'s "JavaScript handlers on Bun", ran on the default engine')
})

test("the README's block and chart are what the results files make, not edited by hand", () => {
  const block = readmeBlock(readFileSync(join(root, 'README.md'), 'utf8'))
  assert.ok(block !== null, 'README.md lost its bench:start / bench:end markers')
  assert.equal(block, readmeSummary(main, others), `README.md's benchmark block differs from what the results make: ${remake}`)
  const chart = readFileSync(join(dir, 'readme-chart.svg'), 'utf8')
  assert.equal(chart, readmeChart(main, others), `readme-chart.svg differs from what the results make: ${remake}`)
  assert.match(block, new RegExp(`commit \`${main.measured.commit.slice(0, 10)}\``), 'the caption names the commit measured')
})
