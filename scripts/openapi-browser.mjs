#!/usr/bin/env node
// The documentation pages of `openapiDocs()` in a real browser: an app with a few operations serves Scalar and
// Swagger UI from their npm packages (assets: 'local'; the tests have no internet), and headless Chromium loads
// each page and must list every operation (its summary and its path) in the rendered DOM. Chromium is Debian's
// (`make test-openapi-ui` installs it when missing), run with `--dump-dom` under a virtual time budget, so the
// page's scripts run to completion without the wall-clock waits a real user would see.
//
// Usage: node scripts/openapi-browser.mjs [--chromium PATH]
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Gust, openapiDocs } from 'gust'
import { z } from 'zod'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const at = process.argv.indexOf('--chromium')
const candidates = at > 0 ? [process.argv[at + 1]] : [process.env.CHROMIUM, 'chromium', 'chromium-browser'].filter(Boolean)

const OPERATIONS = [
  { method: 'get', path: '/pets', summary: 'List the pets' },
  { method: 'post', path: '/pets', summary: 'Adopt a pet' },
  { method: 'get', path: '/pets/{petId}', summary: 'Look at one pet' },
  { method: 'delete', path: '/pets/{petId}', summary: 'Rehome a pet' },
]

const Pet = z.object({ id: z.string(), name: z.string(), kind: z.enum(['cat', 'dog']) }).meta({ id: 'Pet' })
const app = new Gust()
  .get('/pets', (c) => c.json([]), { validate: { query: z.object({ kind: z.string().optional() }) }, openapi: { summary: OPERATIONS[0].summary, tags: ['pets'], responses: { 200: { schema: z.array(Pet) } } } })
  .post('/pets', (c) => c.json(c.req.valid('json'), 201), { validate: { json: Pet.omit({ id: true }) }, openapi: { summary: OPERATIONS[1].summary, tags: ['pets'], responses: { 201: { schema: Pet } } } })
  .get('/pets/:petId', (c) => c.json({ id: c.params.petId }), { openapi: { summary: OPERATIONS[2].summary, tags: ['pets'], responses: { 200: { schema: Pet }, 404: {} } } })
  .delete('/pets/:petId', (c) => c.body(null, 204), { openapi: { summary: OPERATIONS[3].summary, tags: ['pets'], responses: { 204: {} } } })
const info = { title: 'Pet shelter', version: '1.0.0' }
app.route('/scalar', openapiDocs(app, { info, ui: 'scalar', assets: 'local', resolveFrom: ROOT }))
app.route('/swagger', openapiDocs(app, { info, ui: 'swagger-ui', assets: 'local', resolveFrom: ROOT }))

/** Runs Chromium on `url` and resolves with the DOM it dumps once the page settled. */
function dumpDom(binary, url) {
  const profile = mkdtempSync(join(tmpdir(), 'gust-chromium-'))
  const args = [
    '--headless',
    '--no-sandbox', // as root (CI, containers) Chromium refuses to start sandboxed
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    `--user-data-dir=${profile}`,
    '--virtual-time-budget=20000',
    '--dump-dom',
    url,
  ]
  return new Promise((resolve, reject) => {
    execFile(binary, args, { timeout: 45_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true })
      if (err) reject(Object.assign(err, { stderr }))
      else resolve(stdout)
    })
  })
}

/** The DOM's text, roughly: tags dropped, entities of the kinds the UIs write decoded. */
const textOf = (html) =>
  html
    .replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<wbr>/g, '') // Swagger UI breaks long paths with it: "/pets<wbr>/{petId}"
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#8203;|\u200b/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')

async function findChromium() {
  for (const name of candidates) {
    try {
      await new Promise((resolve, reject) => execFile(name, ['--version'], (err, out) => (err ? reject(err) : resolve(out))))
      return name
    } catch {}
  }
  throw new Error(`Chromium not found (tried ${candidates.join(', ')}); run \`make test-openapi-ui\`, which installs Debian's`)
}

const binary = await findChromium()
const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
let failed = 0
try {
  for (const ui of ['scalar', 'swagger']) {
    const started = Date.now()
    const dom = await dumpDom(binary, `${server.url}/${ui}`)
    const text = textOf(dom)
    const missing = []
    for (const op of OPERATIONS) {
      if (!text.includes(op.summary)) missing.push(`summary "${op.summary}"`)
    }
    for (const path of new Set(OPERATIONS.map((op) => op.path))) if (!text.includes(path)) missing.push(`path ${path}`)
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    if (missing.length > 0) {
      failed++
      console.error(`${ui}: FAIL in ${seconds} s: the page does not show ${missing.join(', ')} (DOM ${dom.length} bytes)`)
    } else {
      console.log(`${ui}: ok in ${seconds} s: the page lists all ${OPERATIONS.length} operations (DOM ${dom.length} bytes)`)
    }
  }
} finally {
  await server.stop({ force: true })
}
console.log(`${2 - failed} passed, ${failed} failed`)
process.exit(failed > 0 ? 1 : 0)
