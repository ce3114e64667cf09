#!/usr/bin/env node
// Runs every fuzz target (fuzz/fuzz_targets) with cargo-fuzz for a set time each, starting from its committed
// corpus, and prints executions and crashes per target; exits non-zero when any target crashed (its input is
// saved in fuzz/artifacts/<target>/, to replay with `cargo +nightly fuzz run <target> <file> --fuzz-dir fuzz`, and
// to add to fuzz/corpus/<target>/ once fixed).
//
// Usage: node scripts/fuzz.mjs <path to the cargo-fuzz binary> [--seconds N] [--only a,b]
//
// New inputs the fuzzer finds go to target/fuzz-corpus/<target>/, not into the repository.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const cargoFuzz = args[0]
if (!cargoFuzz || cargoFuzz.startsWith('--')) throw new Error('usage: node scripts/fuzz.mjs <cargo-fuzz> [--seconds N] [--only a,b]')
const option = (name, fallback) => {
  const at = args.indexOf(name)
  return at < 0 ? fallback : args[at + 1]
}
const seconds = Number(option('--seconds', '60'))
if (!(seconds > 0)) throw new Error(`--seconds must be a positive number, got ${option('--seconds')}`)
const all = readdirSync(join(ROOT, 'fuzz/fuzz_targets'))
  .filter((f) => f.endsWith('.rs'))
  .map((f) => f.slice(0, -3))
  .sort()
const only = option('--only', null)?.split(',')
const unknown = only?.filter((t) => !all.includes(t)) ?? []
if (unknown.length) throw new Error(`no fuzz target named ${unknown.join(', ')} (targets: ${all.join(', ')})`)
const targets = only ?? all

// Release with debug assertions (integer overflow checks) and AddressSanitizer, cargo-fuzz's default. The
// workspace's fat LTO breaks the sanitizer coverage's symbols at link time, so the fuzz build turns it off.
// cargo-fuzz runs as `cargo fuzz` on the nightly toolchain (its sanitizer flags are nightly's), found beside
// the binary given.
const env = {
  ...process.env,
  PATH: `${dirname(resolve(cargoFuzz))}:${process.env.PATH}`,
  RUSTUP_TOOLCHAIN: 'nightly',
  CARGO_PROFILE_RELEASE_LTO: 'false',
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS: '16',
}
const fuzz = (sub, extra) =>
  spawnSync('cargo', ['fuzz', sub, '--fuzz-dir', 'fuzz', '-O', '-a', ...extra], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })

const built = spawnSync('cargo', ['fuzz', 'build', '--fuzz-dir', 'fuzz', '-O', '-a'], { cwd: ROOT, env, stdio: 'inherit' })
if (built.status !== 0) process.exit(built.status ?? 1)

/** The committed inputs a target starts from: its own, or those of the target it shares them with. */
const CORPUS_OF = { connection_one_thread: 'connection' }

const rows = []
let failed = false
for (const target of targets) {
  const work = join(ROOT, 'target/fuzz-corpus', target)
  mkdirSync(work, { recursive: true })
  const run = fuzz('run', [
    target,
    work,
    join('fuzz/corpus', CORPUS_OF[target] ?? target),
    '--',
    `-max_total_time=${seconds}`,
    '-print_final_stats=1',
    '-max_len=65536',
    '-rss_limit_mb=2048',
    '-timeout=10',
  ])
  const out = `${run.stdout}\n${run.stderr}`
  const executions = Number(/stat::number_of_executed_units:\s*(\d+)/.exec(out)?.[1] ?? NaN)
  const crashed = run.status !== 0
  if (crashed) {
    failed = true
    const tail = out.split('\n').slice(-40).join('\n')
    console.error(`\n✗ ${target} failed (exit ${run.status}):\n${tail}\n`)
  }
  const coverage = /cov: (\d+)/g
  let cov = null
  for (let m; (m = coverage.exec(out)); ) cov = m[1]
  rows.push({ target, executions, crashes: crashed ? 1 : 0, coverage: cov })
}

console.log(`\nfuzzing, ${seconds} s per target:`)
console.log('| target | executions | crashes | coverage (edges) |')
console.log('|---|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.target} | ${Number.isNaN(r.executions) ? '?' : r.executions.toLocaleString('en')} | ${r.crashes} | ${r.coverage ?? '?'} |`)
const total = rows.reduce((n, r) => n + (Number.isNaN(r.executions) ? 0 : r.executions), 0)
console.log(`total: ${total.toLocaleString('en')} executions, ${rows.reduce((n, r) => n + r.crashes, 0)} crashes`)
process.exit(failed ? 1 : 0)
