// Runs every example's test (examples/*/test.mjs) on each runtime given, one after another: each test starts its
// example as a child process of the same runtime on a free port, checks it over real sockets, and stops it.
//
//   node scripts/examples.mjs --runtime bun --runtime .tools/node-26.10.0/bin/node [--only chat,uploads]
//
// An example with a tsconfig.json (json-api) is type-checked first, once.
// Fails (exit 1) when any test fails or runs past its time limit; prints a summary with each one's time.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** One example's test may take this long (they take about a second each; a hang must not stall `make test`). */
const LIMIT_MS = 60_000

function usage(message) {
  console.error(`${message}\nusage: node scripts/examples.mjs --runtime <bun|path to node> [--runtime …] [--only name,name]`)
  process.exit(2)
}

const runtimes = []
let only
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === '--runtime' && process.argv[i + 1]) runtimes.push(process.argv[++i])
  else if (arg === '--only' && process.argv[i + 1]) only = process.argv[++i].split(',')
  else usage(`unknown argument ${arg}`)
}
if (runtimes.length === 0) usage('name at least one runtime')

const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'examples', d.name, 'test.mjs')))
  .map((d) => d.name)
  .filter((name) => only === undefined || only.includes(name))
  .sort()
if (only !== undefined) for (const name of only) if (!examples.includes(name)) usage(`no examples/${name}/test.mjs`)
if (examples.length === 0) usage('no examples/*/test.mjs found')

/** `Bun 1.4.5` or `Node v26.10.0`, or exits naming the runtime that does not run. */
function describe(runtime) {
  const res = spawnSync(runtime, ['--version'], { encoding: 'utf8' })
  if (res.status !== 0) usage(`runtime ${runtime} does not run: ${res.error?.message ?? res.stderr}`)
  const version = res.stdout.trim()
  return version.startsWith('v') ? `Node ${version}` : `Bun ${version}`
}

/** The test running now, ended with its group if this runner is interrupted (Ctrl+C on `make`). */
let current

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    if (current !== undefined) killGroup(current)
    process.exit(130)
  })
}

/** Runs one test with its output streamed through; resolves with its status and time. */
function run(runtime, name) {
  const test = join(ROOT, 'examples', name, 'test.mjs')
  const began = performance.now()
  return new Promise((resolve) => {
    // In a process group of its own, so a test that hangs is ended together with the servers it started.
    const child = spawn(runtime, [test], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], detached: true })
    current = child
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child)
    }, LIMIT_MS)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      current = undefined
      const ms = Math.round(performance.now() - began)
      resolve({ ok: code === 0, ms, why: timedOut ? `timed out after ${LIMIT_MS} ms` : code === 0 ? '' : `exit ${code ?? signal}` })
    })
    child.on('error', (err) => {
      clearTimeout(timer)
      resolve({ ok: false, ms: 0, why: err.message })
    })
  })
}

const results = []

// An example in TypeScript carries a tsconfig.json: its types are checked once (they do not depend on the
// runtime), with the repository's TypeScript, as the example's README tells its readers to.
for (const name of examples) {
  if (!existsSync(join(ROOT, 'examples', name, 'tsconfig.json'))) continue
  console.log(`\n== tsc -p examples/${name}`)
  const began = performance.now()
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join('examples', name)], { cwd: ROOT, stdio: 'inherit' })
  results.push({ label: 'tsc', name, ok: tsc.status === 0, ms: Math.round(performance.now() - began), why: tsc.status === 0 ? '' : `exit ${tsc.status ?? tsc.signal}` })
}

for (const runtime of runtimes) {
  const label = describe(runtime)
  for (const name of examples) {
    console.log(`\n== ${label}: examples/${name}`)
    results.push({ label, name, ...(await run(runtime, name)) })
  }
}

console.log('\nexamples:')
for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.label.padEnd(14)} ${r.name.padEnd(16)} ${String(r.ms).padStart(6)} ms ${r.why}`)
const failed = results.filter((r) => !r.ok)
console.log(`${results.length - failed.length} of ${results.length} passed (${relative(process.cwd(), join(ROOT, 'examples')) || '.'})`)
process.exit(failed.length === 0 ? 0 : 1)
