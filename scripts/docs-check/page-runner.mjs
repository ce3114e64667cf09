// Runs the extracted blocks of one page, one after the other, in this process (started by run.mjs with the
// sandbox as its working directory). Each block is a module of its own; a block fails when importing it throws
// or rejects, when it does not settle within the time allowed, or when an error nothing caught surfaces while
// it runs. Servers a block leaves listening (on a free loopback port) end with this process.
//
// Protocol on stdout: `@@docs-check start <file>` before a block's own output, then
// `@@docs-check end <file> ok` or `@@docs-check end <file> fail <JSON error text>`.
import { pathToFileURL } from 'node:url'

const [timeoutArg, ...files] = process.argv.slice(2)
const timeoutMs = Number(timeoutArg)
let current
let stray

const describe = (err) => (err instanceof Error ? (err.stack ?? err.message) : `thrown: ${String(err)}`)
process.on('uncaughtException', (err) => {
  stray = describe(err)
})
process.on('unhandledRejection', (err) => {
  stray = describe(err)
})

for (const file of files) {
  current = file
  stray = undefined
  process.stdout.write(`\n@@docs-check start ${file}\n`)
  let failure
  let timer
  try {
    await Promise.race([
      import(pathToFileURL(file).href),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not settle within ${timeoutMs} ms`)), timeoutMs)
      }),
    ])
    // Let rejections the block left behind surface while it is still the one running.
    await new Promise((resolve) => setTimeout(resolve, 20))
  } catch (err) {
    failure = describe(err)
  } finally {
    clearTimeout(timer)
  }
  failure ??= stray
  process.stdout.write(`\n@@docs-check end ${current} ${failure === undefined ? 'ok' : `fail ${JSON.stringify(failure)}`}\n`)
}
process.exit(0)
