// What every example's test.mjs shares: start an example as a child process on a free port, check it over real
// sockets, stop it by its PID. Plain JavaScript with node: modules only, so it runs unchanged on Node and Bun.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** How long an example may take to print its URL (a cold start with workers on a busy machine included). */
const START_TIMEOUT = 20_000

/**
 * Starts `script` (a path, or a URL relative to the caller) with the runtime running the test, `PORT=0` and
 * `HOST=127.0.0.1`, and resolves once it printed the URL it listens on (the first `http://…` in its output).
 * `stop()` sends SIGTERM and resolves with the exit code; a child that has not exited 5 s later is killed.
 * @example
 * const server = await start(new URL('./server.js', import.meta.url))
 * const res = await fetch(`${server.url}/`)
 * assert.equal(await server.stop(), 0)
 */
export async function start(script, env = {}) {
  const path = script instanceof URL ? fileURLToPath(script) : script
  const child = spawn(process.execPath, [path], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${path} printed no URL within ${START_TIMEOUT} ms`)), START_TIMEOUT)
    const early = (code, signal) => fail(new Error(`${path} exited (${code ?? signal}) before printing its URL`))
    const fail = (err) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${err.message}\n--- its output ---\n${output}`))
    }
    const read = (chunk) => {
      output += chunk
      // Followed by a space, a slash or a line end: a URL cut between two reads is not taken for a shorter one.
      const found = /https?:\/\/[^\s/]+(?=[\s/])/.exec(output)
      if (found) {
        clearTimeout(timer)
        child.off('exit', early)
        resolve(found[0])
      }
    }
    child.stdout.setEncoding('utf8').on('data', read)
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk))
    child.once('exit', early)
  })
  return {
    url,
    child,
    /** Everything the child printed so far, stdout and stderr together. */
    output: () => output,
    /** SIGTERM, then the exit code (or the signal's name if it was killed). */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited
      process.kill(child.pid, 'SIGTERM')
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 5_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
  }
}

/**
 * Runs the named checks in order, printing `ok`/`not ok` per check with its time; the first failure prints the
 * error and ends the process with exit code 1 (after `cleanup`, which stops the servers).
 * @example
 * await checks({
 *   'the page is served': async () => assert.equal((await fetch(url)).status, 200),
 * }, () => server.stop())
 */
export async function checks(list, cleanup = async () => {}) {
  for (const [name, fn] of Object.entries(list)) {
    const began = performance.now()
    try {
      await fn()
    } catch (err) {
      console.log(`not ok - ${name}`)
      console.error(err)
      await cleanup().catch(() => {})
      process.exit(1)
    }
    console.log(`ok - ${name} (${Math.round(performance.now() - began)} ms)`)
  }
  await cleanup()
}

/**
 * The server-sent events of a `text/event-stream` response, parsed as EventSource does (`event`, `data` joined
 * by newlines, `id`; comments skipped), as an async iterator. Leaving the loop cancels the response.
 * @example
 * const res = await fetch(`${url}/events`)
 * for await (const e of sseEvents(res)) if (e.event === 'sample') break
 */
export async function* sseEvents(res) {
  const decoder = new TextDecoder()
  const reader = res.body.getReader()
  let buffer = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let end
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = { event: 'message', data: [], id: undefined }
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue
          const colon = line.indexOf(':')
          const field = colon === -1 ? line : line.slice(0, colon)
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'data') event.data.push(value)
          else if (field === 'event') event.event = value
          else if (field === 'id') event.id = value
        }
        if (event.data.length > 0) yield { ...event, data: event.data.join('\n') }
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `fn` every 25 ms until it returns a truthy value (returned), or throws naming `what` after `ms`. */
export async function waitFor(what, fn, ms = 5_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await fn()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
