// Runs Autobahn's fuzzing-client cases (sections 1–10; 12–13 need permessage-deflate, which Gust does not offer)
// against a Gust echo server, through kosoku (PyPI), which drives Autobahn's case files without Docker. Prints
// the summary and exits non-zero when any case fails. Usage: node scripts/autobahn.mjs [kosoku] [cases…]
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

import { Gust } from '../packages/gust/dist/index.js'

const kosoku = process.argv[2] ?? '.tools/autobahn/bin/kosoku'
const cases = process.argv.slice(3)
const echo = {
  maxPayloadLength: 64 * 1024 * 1024,
  message(ws, msg) {
    ws.send(msg)
  },
}
const app = new Gust().ws('/', echo).ws('/*', echo)
const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
const outdir = join('.tools', 'autobahn-report')
const include = (cases.length > 0 ? cases : ['1.*', '2.*', '3.*', '4.*', '5.*', '6.*', '7.*', '9.*', '10.*']).flatMap((c) => ['-i', c])
const started = Date.now()
const code = await new Promise((resolve) => {
  const child = spawn(kosoku, [`127.0.0.1:${server.port}`, ...include, '-p', '4', '-o', outdir], { stdio: 'inherit' })
  child.on('exit', (c) => resolve(c ?? 1))
})
await server.stop({ force: true })

// The per-case results kosoku wrote: Autobahn's behaviours OK, NON-STRICT, INFORMATIONAL, UNIMPLEMENTED, FAILED.
const counts = {}
const failed = []
const index = JSON.parse(readFileSync(join(outdir, 'index.json'), 'utf8'))
for (const agent of Object.values(index)) {
  for (const [id, r] of Object.entries(agent)) {
    for (const b of new Set([r.behavior, r.behaviorClose])) counts[b] = (counts[b] ?? 0) + 1
    if (r.behavior === 'FAILED' || r.behaviorClose === 'FAILED') failed.push(id)
  }
}
const total = Object.values(index).reduce((n, a) => n + Object.keys(a).length, 0)
console.log(`autobahn: ${total} cases in ${((Date.now() - started) / 1000).toFixed(0)} s; behaviours ${JSON.stringify(counts)}; failed: ${failed.length === 0 ? 'none' : failed.join(' ')}`)
process.exit(failed.length > 0 || total === 0 ? 1 : code === 0 ? 0 : 1)
