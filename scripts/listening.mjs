// The port a child server announces on its stdout as `listening <port>` (the soak's server, the conformance
// peers), or a rejection naming `what` if it exits first or takes longer than `ms`.
export function listeningPort(child, what, ms = 20_000, log = () => '') {
  return new Promise((resolvePort, reject) => {
    let text = ''
    child.stdout.on('data', (d) => {
      text += d
      const m = /listening (\d+)/.exec(text)
      if (m) resolvePort(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before listening${log()}`)))
    setTimeout(() => reject(new Error(`${what} did not listen within ${ms / 1000} s${log()}`)), ms).unref()
  })
}
