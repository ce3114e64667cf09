// What the typed client costs the type checker as an app grows: generates apps of N routes (a third with a path
// parameter, a third with a validated JSON body, a third returning plain data), and a program calling every
// route through the client, for Gust (`client<typeof app>` from gust/client) and for Hono (`hc<typeof app>`, the
// same routes with Hono's own `validator`), then runs `tsc --extendedDiagnostics` on each, three times, and
// prints the median check time and memory: the app alone, and the app with its client.
//
//   node benchmarks/client-type-cost.mjs [--routes 50,100,200] [--runs 3]
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = join(root, 'node_modules', '.bin', 'tsc')
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? fallback : args[i + 1]
}
const counts = opt('routes', '50,100,200').split(',').map(Number)
const runs = Number(opt('runs', '3'))

function gustApp(n) {
  const lines = ["import { Gust } from 'gust'", "import { z } from 'zod'", 'export const app = new Gust()']
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) lines.push(`  .get('/r${i}/:id', (c) => c.json({ id: c.params.id, n: ${i} }))`)
    else if (i % 3 === 1) {
      lines.push(
        `  .post('/r${i}', (c) => c.json({ ...c.req.valid('json'), at: ${i} }, 201), { validate: { json: z.object({ name: z.string(), n: z.number() }) } })`,
      )
    } else lines.push(`  .get('/r${i}', () => ({ items: [${i}], total: 1 }))`)
  }
  return lines.join('\n')
}

function gustCalls(n) {
  const lines = ["import { client } from 'gust/client'", "import type { app } from './app.js'", "const api = client<typeof app>('http://localhost:3000')", 'export async function all() {']
  for (let i = 0; i < n; i++) {
    // The body is typed once `ok` (or a status) says which answer it is: an undeclared error may be there.
    if (i % 3 === 0) lines.push(`  const r${i} = await api.get('/r${i}/:id', { params: { id: 1 } }); if (r${i}.ok) { const b: string = (await r${i}.json()).id; void b }`)
    else if (i % 3 === 1) lines.push(`  const r${i} = await api.post('/r${i}', { json: { name: 'a', n: 1 } }); if (r${i}.status === 201) { const b: number = (await r${i}.json()).at; void b }`)
    else lines.push(`  const r${i} = await api.get('/r${i}'); if (r${i}.ok) { const b: number = (await r${i}.json()).total; void b }`)
  }
  lines.push('}')
  return lines.join('\n')
}

function honoApp(n) {
  const lines = ["import { Hono } from 'hono'", "import { validator } from 'hono/validator'", 'export const app = new Hono()']
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) lines.push(`  .get('/r${i}/:id', (c) => c.json({ id: c.req.param('id'), n: ${i} }))`)
    else if (i % 3 === 1) {
      lines.push(
        `  .post('/r${i}', validator('json', (v) => v as { name: string; n: number }), (c) => c.json({ ...c.req.valid('json'), at: ${i} }, 201))`,
      )
    } else lines.push(`  .get('/r${i}', (c) => c.json({ items: [${i}], total: 1 }))`)
  }
  return lines.join('\n')
}

function honoCalls(n) {
  const lines = ["import { hc } from 'hono/client'", "import type { app } from './app.js'", "const api = hc<typeof app>('http://localhost:3000')", 'export async function all() {']
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) lines.push(`  const b${i}: string = (await (await api.r${i}[':id'].$get({ param: { id: '1' } })).json()).id`)
    else if (i % 3 === 1) lines.push(`  const r${i} = await api.r${i}.$post({ json: { name: 'a', n: 1 } }); if (r${i}.status === 201) { const b: number = (await r${i}.json()).at; void b }`)
    else lines.push(`  const b${i}: number = (await (await api.r${i}.$get()).json()).total`)
    if (i % 3 !== 1) lines.push(`  void b${i}`)
  }
  lines.push('}')
  return lines.join('\n')
}

const tsconfig = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, noEmit: true, types: ['node'] },
}

function measure(dir, files) {
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files }))
  const samples = []
  for (let r = 0; r < runs; r++) {
    let out
    try {
      out = execFileSync(tsc, ['-p', dir, '--extendedDiagnostics'], { encoding: 'utf8' })
    } catch (err) {
      throw new Error(`tsc failed in ${dir}:\n${err.stdout}`)
    }
    const num = (label) => Number(out.match(new RegExp(`${label}:\\s+([\\d.]+)`))[1])
    samples.push({ check: num('Check time'), total: num('Total time'), memory: num('Memory used') / 1024, types: num('Types') })
  }
  const median = (key) => samples.map((s) => s[key]).sort((a, b) => a - b)[Math.floor(samples.length / 2)]
  return { check: median('check'), total: median('total'), memory: median('memory'), types: median('types') }
}

const base = join(root, 'target', 'client-type-cost')
rmSync(base, { recursive: true, force: true })
const rows = []
for (const n of counts) {
  for (const [name, app, calls] of [
    ['gust', gustApp, gustCalls],
    ['hono', honoApp, honoCalls],
  ]) {
    const dir = join(base, `${name}-${n}`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'app.ts'), app(n))
    writeFileSync(join(dir, 'calls.ts'), calls(n))
    const alone = measure(dir, ['app.ts'])
    const withClient = measure(dir, ['app.ts', 'calls.ts'])
    rows.push({ framework: name, routes: n, alone, withClient })
    console.error(`${name} ${n}: app ${alone.check}s / ${alone.memory.toFixed(0)} MB; with client ${withClient.check}s / ${withClient.memory.toFixed(0)} MB`)
  }
}
console.log('| framework | routes | check: app alone | check: app + a call to every route | memory: app alone | memory: app + calls | types: app + calls |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const r of rows) {
  console.log(
    `| ${r.framework} | ${r.routes} | ${r.alone.check.toFixed(2)} s | ${r.withClient.check.toFixed(2)} s | ${r.alone.memory.toFixed(0)} MB | ${r.withClient.memory.toFixed(0)} MB | ${r.withClient.types} |`,
  )
}
