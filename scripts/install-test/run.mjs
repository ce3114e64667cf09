// The install test (`make test-install`): installs the packed tarballs in artifacts/ into fresh projects outside
// the repository, once with `npm install gust` and once with `bun add gust`, through a loopback registry
// (registry.mjs) so the platform package is chosen the way npmjs.com users get it. In each project it then
// - runs the hello world of the package's README on every runtime given, and checks a turbo route, a param +
//   query route and a JSON body over a real socket;
// - loads the package with `require('gust')` and `require('gust/client')` on every runtime;
// - type-checks an ESM and a CommonJS TypeScript file against the installed declarations, `skipLibCheck: false`.
//
// Usage: node scripts/install-test/run.mjs --runtime <path or name>... [--keep]
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

import { startRegistry } from './registry.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const { values: args } = parseArgs({
  options: { runtime: { type: 'string', multiple: true, default: ['node', 'bun'] }, keep: { type: 'boolean' } },
})
// A runtime given as a path is resolved here: the checks run with the temporary project as working directory.
const runtimes = args.runtime.map((runtime) => (runtime.includes('/') ? resolve(runtime) : runtime))
const main = JSON.parse(readFileSync(join(root, 'packages', 'gust', 'package.json'), 'utf8'))
const hostPackage = `${main.napi.packageName}-${hostPlatform()}`

const REQUIRE_CHECK = `const { Gust } = require('gust')
const { client } = require('gust/client')
Promise.all([import('gust'), import('gust/client')]).then(async ([esm, esmClient]) => {
  if (esm.Gust !== Gust) throw new Error('require and import loaded two copies of gust')
  if (esmClient.client !== client) throw new Error('require and import loaded two copies of gust/client')
  const server = await new Gust().get('/', 'Hi').listen({ port: 0, hostname: '127.0.0.1' })
  console.log(await (await client(server.url).get('/')).text())
  await server.stop()
})
`

const TYPED_ESM = `import { Gust, HTTPException, type Server } from 'gust'
import { client } from 'gust/client'

const app = new Gust()
  .get('/users/:id/posts/:post', (c) => {
    const id: string = c.params.id
    const post: string = c.params.post
    // @ts-expect-error: the path declares no such param
    c.params.nope
    return c.json({ id, post, q: c.query.q ?? null })
  })
  .post('/json', async (c) => c.json(await c.req.json()))
app.onError((err, c) => (err instanceof HTTPException ? c.text(err.message, err.status) : c.text('oops', 500)))
const server: Server = await app.listen({ port: 0 })
// @ts-expect-error: an unknown listen() option is a type error too (and throws at run time)
void app.listen({ prot: 3000 })
// The typed client, from its own entry: paths, params and JSON bodies typed from the app.
const api = client<typeof app>(app)
const res = await api.get('/users/:id/posts/:post', { params: { id: 1, post: 2 } })
if (res.ok) {
  const body = await res.json()
  const post: string = body.post
}
// @ts-expect-error: no such route
void api.get('/users')
await server.stop()
`

const TYPED_CJS = `import gust = require('gust')
import gustClient = require('gust/client')

const app = new gust.Gust().get('/:name', (c) => c.text(c.params.name))
void app.listen({ port: 0 }).then((server: gust.Server) => server.stop())
const api = gustClient.client<typeof app>('http://127.0.0.1:3000')
void api.get('/:name', { params: { name: 'ada' } })
`

// A project without `@types/node` (`"types": []`), as a browser project using gust/client is: the package's
// declarations must stand on their own (they name `Uint8Array`, never `Buffer`).
const STANDALONE = `import { Gust, type Server } from 'gust'
import { client } from 'gust/client'

const app = new Gust()
  .get('/users/:id', (c) => c.json({ id: c.params.id }))
  .post('/echo', async (c) => c.body(await c.req.bytes()))
  .ws('/chat', { message: (ws, message) => ws.send(typeof message === 'string' ? message : message.byteLength.toString()) })
const api = client<typeof app>('http://127.0.0.1:3000')
const res = await api.get('/users/:id', { params: { id: 1 } })
if (res.ok) {
  const id: string = (await res.json()).id
  void id
}
const server: Server = await app.listen({ port: 0 })
await server.stop()
`

let failures = 0
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`)
  if (!ok) failures++
}

const helloWorld = readmeExample(join(root, 'packages', 'gust', 'README.md'))
check(
  readFileSync(join(root, 'README.md'), 'utf8').includes(helloWorld),
  "the repository README and the package README show the same hello world",
)

const registry = await startRegistry(join(root, 'artifacts'))
check(registry.packages.includes('gust') && registry.packages.includes(hostPackage), `artifacts/ holds gust and ${hostPackage}`)
const projects = []
try {
  for (const manager of ['npm', 'bun']) {
    const dir = mkdtempSync(join(tmpdir(), `gust-install-${manager}-`))
    projects.push(dir)
    console.log(`\n# ${manager}: ${dir}`)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'hello-gust', private: true, type: 'module' }))
    await install(manager, dir)
    const installed = readdirSync(join(dir, 'node_modules', '@gustjs'))
    const version = JSON.parse(readFileSync(join(dir, 'node_modules', 'gust', 'package.json'), 'utf8')).version
    check(version === main.version, `${manager} installed gust ${version}`)
    check(installed.includes(hostPackage.split('/')[1]), `${manager} installed ${hostPackage} (platform packages: ${installed.join(', ')})`)
    if (manager === 'npm') check(installed.length === 1, 'npm installed no other platform package')

    const app = helloWorld.replace('{ port: 3000 }', "{ port: 0, hostname: '127.0.0.1' }")
    check(app !== helloWorld, 'the hello world listens with `{ port: 3000 }` (replaced by a free port here)')
    writeFileSync(join(dir, 'app.js'), app)
    writeFileSync(join(dir, 'require.cjs'), REQUIRE_CHECK)
    for (const runtime of runtimes) {
      await helloWorldAnswers(runtime, dir)
      const cjs = spawnSync(runtime, ['require.cjs'], { cwd: dir, encoding: 'utf8', timeout: 30_000 })
      const clean = cjs.status === 0 && cjs.stdout.trim() === 'Hi' && cjs.stderr === ''
      check(clean, `${runtime}: require('gust') and require('gust/client') are the same modules as import, serve and call a route, warn nothing${clean ? '' : `\n${cjs.stdout}${cjs.stderr}`}`)
    }
    typeCheck(dir)
  }
} finally {
  await registry.close()
  if (failures === 0 && !args.keep) for (const dir of projects) rmSync(dir, { recursive: true, force: true })
}
if (failures > 0) {
  console.error(`\ninstall test: ${failures} check(s) failed (projects kept: ${projects.join(' ')})`)
  process.exit(1)
}
console.log('\ninstall test: every check passed')

async function install(manager, dir) {
  // A cache of its own per project: nothing is reused from an earlier run or from the developer's machine.
  const env = { ...process.env, npm_config_registry: registry.url, BUN_INSTALL_CACHE_DIR: join(dir, '.bun-cache') }
  const command =
    manager === 'npm'
      ? ['npm', ['install', 'gust', '--registry', registry.url, '--cache', join(dir, '.npm-cache'), '--no-audit', '--no-fund']]
      : ['bun', ['add', 'gust', '--registry', registry.url]]
  // Asynchronous: the registry answers from this process's event loop.
  const result = await run(command[0], command[1], { cwd: dir, env }, 120_000)
  check(result.status === 0, `${manager} installs gust from the packed tarballs${result.status === 0 ? '' : `\n${result.stdout}${result.stderr}`}`)
  if (result.status !== 0) throw new Error(`${manager} install failed`)
}

async function helloWorldAnswers(runtime, dir) {
  const child = spawn(runtime, ['app.js'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening on" line in 30 s:\n${output}`)), 30_000)
    const read = (chunk) => {
      output += chunk
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (url) {
        clearTimeout(timer)
        resolve(url)
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)))
    child.on('error', reject)
  })
  const exited = new Promise((done) => child.on('close', done))
  try {
    const url = await listening
    const turbo = await fetch(`${url}/`)
    check(turbo.status === 200 && (await turbo.text()) === 'Hi' && turbo.headers.get('content-type') === 'text/plain; charset=utf-8', `${runtime}: GET / (turbo) is 200 "Hi"`)
    const param = await fetch(`${url}/id/42?name=ada`)
    check(param.status === 200 && (await param.text()) === '42 ada' && param.headers.get('x-powered-by') === 'gust', `${runtime}: GET /id/42?name=ada (param + query) is "42 ada" with its header`)
    const body = { name: 'Zoë', list: [1, 2.5, null, { deep: true }] }
    const json = await fetch(`${url}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    check(json.status === 200 && JSON.stringify(await json.json()) === JSON.stringify(body) && json.headers.get('content-type')?.startsWith('application/json') === true, `${runtime}: POST /json echoes its JSON body`)
  } catch (error) {
    check(false, `${runtime}: the hello world serves (${error.message})`)
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}

function typeCheck(dir) {
  writeFileSync(join(dir, 'typed.ts'), TYPED_ESM)
  writeFileSync(join(dir, 'typed-require.cts'), TYPED_CJS)
  // Each resolution a project may use: NodeNext and Node16 (where a CommonJS file may not import an ES module, so
  // `require` must find CommonJS declarations), and a bundler's (ESM only: a `.cts` file is not a bundler's).
  for (const [module, moduleResolution, files] of [
    ['NodeNext', 'NodeNext', ['typed.ts', 'typed-require.cts']],
    ['Node16', 'Node16', ['typed.ts', 'typed-require.cts']],
    ['ESNext', 'Bundler', ['typed.ts']],
  ]) {
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module,
          moduleResolution,
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          // @types/node is not in the loopback registry; the repository's copy stands in for the user's own.
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files,
      }),
    )
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8', timeout: 120_000 })
    check(tsc.status === 0, `tsc (module ${module}, skipLibCheck: false) accepts ${files.join(' and ')} using the installed types${tsc.status === 0 ? '' : `\n${tsc.stdout}${tsc.stderr}`}`)
  }
  // The same project without @types/node: strict, skipLibCheck off, no types at all beyond the default libs.
  writeFileSync(join(dir, 'standalone.ts'), STANDALONE)
  writeFileSync(
    join(dir, 'tsconfig.standalone.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['standalone.ts'],
    }),
  )
  const alone = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.standalone.json')], { encoding: 'utf8', timeout: 120_000 })
  check(alone.status === 0, `tsc ("types": [], no @types/node, skipLibCheck: false) accepts gust and gust/client${alone.status === 0 ? '' : `\n${alone.stdout}${alone.stderr}`}`)
}

/** Runs a command to its end (killed after `ms`), collecting its output; spawnSync would starve the registry. */
function run(command, argv, options, ms) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), ms)
    child.on('error', (error) => (stderr += String(error)))
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

function readmeExample(path) {
  const block = /```js\n([\s\S]*?)```/.exec(readFileSync(path, 'utf8'))?.[1]
  if (!block) throw new Error(`install test: no \`\`\`js block in ${path}`)
  return block
}

function hostPlatform() {
  const cpu = { x64: 'x64', arm64: 'arm64' }[process.arch]
  if (process.platform !== 'linux' || !cpu) throw new Error(`install test: runs on Linux x64 or arm64, not ${process.platform}-${process.arch}`)
  const glibc = process.report.getReport().header.glibcVersionRuntime
  return `linux-${cpu}-${glibc ? 'gnu' : 'musl'}`
}
