// The docs check (`make test-docs`): every ```ts and ```js block of README.md, packages/gust/README.md and
// docs/*.md is extracted with its hidden set-up and checks, type-checked with tsc against the built package's
// types, and run against the built package, so the docs cannot rot; every link between them must resolve.
// The convention for writers is in docs/README.md ("Code blocks are tests").
//
// Usage: node scripts/docs-check/run.mjs [--only <part of a page's path>] [--verbose]
// Runs blocks with the Node that runs it, which must strip types (Node ≥ 22.18; `make test-docs` uses Node 26).
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { assemble, bareImports, extractBlocks, packageOf, pageLine } from './blocks.mjs'
import { writeFixtures } from './fixtures.mjs'
import { checkLinks } from './links.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const sandbox = join(root, 'target', 'docs-check')
const args = process.argv.slice(2)
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
const verbose = args.includes('--verbose')
const BLOCK_TIMEOUT_MS = 15_000
/** Where a block's packages are looked for: the workspace's own, then the benchmarks' (Express, Fastify …). */
const MODULE_DIRS = [join(root, 'node_modules'), join(root, 'benchmarks', 'node_modules')]

if (!process.features?.typescript) {
  console.error(`docs check: ${process.execPath} (${process.version}) does not strip types; run it with Node ≥ 22.18 (make test-docs uses .tools/node-26.10.0/bin/node)`)
  process.exit(2)
}
if (!existsSync(join(root, 'packages', 'gust', 'dist', 'bundle', 'index.js'))) {
  console.error('docs check: packages/gust/dist is not built: run `make ts` (or `make build`) first')
  process.exit(2)
}

const started = performance.now()
const pages = [
  'README.md',
  'packages/gust/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
].filter((p) => only === undefined || p.includes(only))

const problems = []
const blocks = []
for (const page of pages) {
  problems.push(...checkLinks(root, page))
  try {
    blocks.push(...extractBlocks(readFileSync(join(root, page), 'utf8'), page))
  } catch (err) {
    problems.push(err.message)
  }
}

rmSync(sandbox, { recursive: true, force: true })
mkdirSync(join(sandbox, 'node_modules'), { recursive: true })
writeFileSync(join(sandbox, 'package.json'), '{ "type": "module", "private": true }\n')
writeFixtures(sandbox, root)
// Shared checks hidden blocks import as './helpers/<name>.ts' (the migration guides' common app).
cpSync(join(root, 'scripts', 'docs-check', 'helpers'), join(sandbox, 'helpers'), { recursive: true })

const findPackage = (name) => MODULE_DIRS.map((d) => join(d, name)).find((p) => existsSync(join(p, 'package.json')))
const linked = new Set()
const link = (name) => {
  if (linked.has(name)) return
  linked.add(name)
  const target = join(sandbox, 'node_modules', name)
  mkdirSync(dirname(target), { recursive: true })
  symlinkSync(findPackage(name), target, 'dir')
}

const results = [] // { block, status: 'ok' | 'fail' | 'pending' | 'skipped' | 'checked', detail }
const toCheck = []
const toRun = new Map() // page → files
for (const block of blocks) {
  const name = `${block.file.replace(/[/.]/g, '_')}-L${block.line}.${block.ext}`
  const { source, offsets } = assemble(block)
  const packages = [...new Set(bareImports(source).map(packageOf))]
  const gust = packages.includes('gust')
  const missing = packages.filter((p) => !findPackage(p))
  const pending = block.flags.includes('pending')
  const entry = { block, name, offsets, shift: 0, status: undefined, detail: '' }
  results.push(entry)
  if (missing.length) {
    entry.status = pending ? 'pending' : gust ? 'fail' : 'skipped'
    entry.detail = `needs ${missing.join(', ')}, not installed here`
    continue
  }
  for (const p of packages) link(p)
  // A module of its own (top-level await, no names shared with other blocks) even without an import.
  let text = /^\s*(import|export)\s/m.test(source) ? source : `${source}\nexport {}`
  // JavaScript is type-checked too when it uses nothing but Gust and Node, whose types are complete (another
  // framework's JavaScript is shown as its users write it, without the annotations its types would ask for).
  if (block.ext === 'mjs' && packages.every((p) => p === 'gust')) {
    text = `// @ts-check\n${text}`
    entry.shift = 1
  }
  writeFileSync(join(sandbox, name), text)
  if (block.ext === 'ts' || entry.shift) toCheck.push(entry)
  if (block.flags.includes('no-run')) {
    entry.status = 'checked'
    continue
  }
  const list = toRun.get(block.file) ?? []
  list.push(entry)
  toRun.set(block.file, list)
}
if (existsSync(join(root, 'node_modules', '@types'))) symlinkSync(join(root, 'node_modules', '@types'), join(sandbox, 'node_modules', '@types'), 'dir')

/** Runs a command, resolving with its exit code and output. */
function run(command, argv, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.on('close', (code, signal) => resolve({ code: code ?? signal, out }))
  })
}

async function typeCheck() {
  if (!toCheck.length) return
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node', 'bun'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowJs: true,
      checkJs: false,
      erasableSyntaxOnly: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: false,
    },
    files: toCheck.map((e) => e.name),
  }
  writeFileSync(join(sandbox, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const { code, out } = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], sandbox)
  if (code === 0) return
  const byName = new Map(toCheck.map((e) => [e.name, e]))
  let unmatched = ''
  for (const line of out.split('\n')) {
    const m = /^(\S+?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line)
    const entry = m && byName.get(m[1])
    if (!entry) {
      if (line.trim() && !/^\s/.test(line)) unmatched += `${line}\n`
      else if (line.trim() && entry === undefined && unmatched) unmatched += `${line}\n`
      continue
    }
    const at = pageLine(entry.offsets, Number(m[2]) - entry.shift)
    entry.typeErrors = `${entry.typeErrors ?? ''}  ${entry.block.file}:${at ?? '?'}: ${m[4]}\n`
  }
  if (unmatched) problems.push(`tsc failed outside any block:\n${unmatched}`)
}

async function runPage(page, entries) {
  const runner = join(root, 'scripts', 'docs-check', 'page-runner.mjs')
  const { out } = await run(process.execPath, [runner, String(BLOCK_TIMEOUT_MS), ...entries.map((e) => e.name)], sandbox)
  const byName = new Map(entries.map((e) => [e.name, e]))
  let current
  let output = ''
  for (const line of out.split('\n')) {
    const start = /^@@docs-check start (\S+)$/.exec(line)
    const end = /^@@docs-check end (\S+) (ok|fail)(?: (.*))?$/.exec(line)
    if (start) {
      current = byName.get(start[1])
      output = ''
    } else if (end && byName.has(end[1])) {
      const entry = byName.get(end[1])
      entry.ran = end[2]
      if (end[2] === 'fail') entry.detail = `${JSON.parse(end[3])}${output.trim() ? `\n  output:\n${output.trimEnd().replace(/^/gm, '    ')}` : ''}`
      current = undefined
    } else if (current) {
      output += `${line}\n`
    }
  }
  for (const entry of entries) {
    if (entry.ran === undefined) {
      entry.ran = 'fail'
      entry.detail = `never finished: the page's runner stopped first\n${out.trim().split('\n').slice(-20).join('\n')}`
    }
  }
}

/** The page runners, a few at a time, beside tsc. */
async function runAll() {
  const queue = [...toRun]
  const lanes = Array.from({ length: Math.max(2, Math.min(4, availableParallelism())) }, async () => {
    while (queue.length) {
      const [page, entries] = queue.shift()
      await runPage(page, entries)
    }
  })
  await Promise.all(lanes)
}

await Promise.all([typeCheck(), runAll()])

for (const entry of results) {
  if (entry.status) continue
  const failed = entry.ran === 'fail' || entry.typeErrors
  const detail = [entry.typeErrors ? `type errors:\n${entry.typeErrors.trimEnd()}` : '', entry.ran === 'fail' ? `run: ${entry.detail}` : '']
    .filter(Boolean)
    .join('\n')
  entry.detail = detail
  entry.status = failed ? (entry.block.flags.includes('pending') ? 'pending' : 'fail') : 'ok'
}
for (const entry of results) {
  if (entry.status === 'checked' && entry.typeErrors) {
    entry.status = entry.block.flags.includes('pending') ? 'pending' : 'fail'
    entry.detail = `type errors:\n${entry.typeErrors.trimEnd()}`
  }
}

const first = (b) => b.code.split('\n').find((l) => l.trim() && !l.trim().startsWith('//'))?.trim().slice(0, 60) ?? ''
const count = (s) => results.filter((r) => r.status === s).length
for (const entry of results) {
  const { block, status } = entry
  const where = `${block.file}:${block.line}`
  if (status === 'ok' && block.flags.includes('pending')) {
    console.log(`done     ${where} is marked pending and now passes: remove its "pending" flag`)
  } else if (status === 'fail') {
    console.log(`FAIL     ${where}  ${first(block)}\n${entry.detail.replace(/^/gm, '  ')}`)
  } else if (status === 'pending') {
    console.log(`pending  ${where}  ${first(block)}\n${entry.detail.split('\n').slice(0, 6).join('\n').replace(/^/gm, '  ')}`)
  } else if (status === 'skipped') {
    console.log(`skipped  ${where}  ${entry.detail}`)
  } else if (verbose) {
    console.log(`${status === 'ok' ? 'ok      ' : 'no-run  '} ${where}  ${first(block)}`)
  }
}
for (const p of problems) console.log(`FAIL     ${p}`)
const seconds = ((performance.now() - started) / 1000).toFixed(1)
console.log(
  `docs check: ${pages.length} pages, ${results.length} code blocks: ${count('ok')} ran and passed, ${count('checked')} type-checked only (no-run), ` +
    `${count('pending')} pending, ${count('skipped')} skipped, ${count('fail')} failed; ${problems.length} other problems (links, markup); ${seconds} s`,
)
if (verbose) console.log(`sandbox: ${relative(process.cwd(), sandbox)}`)
process.exit(count('fail') || problems.length ? 1 : 0)
