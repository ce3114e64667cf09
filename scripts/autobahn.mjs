// Runs Autobahn's fuzzing-client cases against Gust echo servers, through kosoku (PyPI), which drives Autobahn's
// case files without Docker: sections 1–10 and 12 (permessage-deflate with the default offer) against a server
// whose compression keeps no context (`perMessageDeflate: true`), section 13 (every offer of window sizes and
// context takeover) against one with a compressor and a decompressor per socket. Both compress every message
// (threshold 0), so every echo goes through the compressor. Prints a summary per server and exits non-zero when
// any case fails. Usage: node scripts/autobahn.mjs [kosoku] [cases…] (cases given: run those on the first server)
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { Gust } from '../packages/gust/dist/bundle/index.js'

const kosoku = process.argv[2] ?? '.tools/autobahn/bin/kosoku'
const cases = process.argv.slice(3)
const runs =
  cases.length > 0
    ? [{ name: 'shared', deflate: { threshold: 0 }, cases }]
    : [
        { name: 'shared', deflate: { threshold: 0 }, cases: ['1.*', '2.*', '3.*', '4.*', '5.*', '6.*', '7.*', '9.*', '10.*', '12.*'] },
        { name: 'dedicated', deflate: { compress: 'dedicated', decompress: 'dedicated', threshold: 0 }, cases: ['13.*'] },
      ]

let failures = 0
for (const run of runs) {
  const echo = {
    maxPayloadLength: 64 * 1024 * 1024,
    perMessageDeflate: run.deflate,
    message(ws, msg) {
      ws.send(msg)
    },
  }
  const app = new Gust().ws('/', echo).ws('/*', echo)
  const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
  const outdir = join('.tools', `autobahn-report-${run.name}`)
  const started = Date.now()
  const code = await new Promise((resolve) => {
    const args = [`127.0.0.1:${server.port}`, ...run.cases.flatMap((c) => ['-i', c]), '-p', '4', '-o', outdir]
    const child = spawn(kosoku, args, { stdio: 'inherit' })
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
      // UNIMPLEMENTED in 12–13 would mean the extension was not agreed: a failure here, where it must be.
      if (['FAILED', 'ERROR', 'UNIMPLEMENTED'].includes(r.behavior) || ['FAILED', 'ERROR'].includes(r.behaviorClose)) failed.push(id)
    }
  }
  const total = Object.values(index).reduce((n, a) => n + Object.keys(a).length, 0)
  console.log(
    `autobahn (${run.name} compression, ${run.cases.join(' ')}): ${total} cases in ${((Date.now() - started) / 1000).toFixed(0)} s; behaviours ${JSON.stringify(counts)}; failed: ${failed.length === 0 ? 'none' : failed.join(' ')}`,
  )
  if (failed.length > 0 || total === 0 || code !== 0) failures++
}
process.exit(failures > 0 ? 1 : 0)
