// What the machine is, how to pin processes to cores, and how to sample a process's CPU, memory and threads.
import { execFileSync } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const isLinux = process.platform === 'linux'

/** Where `make bombardier` (and h2spec) install Go tools: the repository's own `.tools/go/bin`. */
export const TOOLS_BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../.tools/go/bin')

/** A command's path: on PATH, else in `TOOLS_BIN`; null when neither has it. */
export function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || null
  } catch {
    try {
      accessSync(join(TOOLS_BIN, cmd), constants.X_OK)
      return join(TOOLS_BIN, cmd)
    } catch {
      return null
    }
  }
}

export function run(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch (err) {
    return (err.stdout ?? '').toString().trim() || null
  }
}

/** The cores this process may use (Linux affinity, else all). */
export function availableCores() {
  if (isLinux) {
    const list = run('taskset', ['-pc', String(process.pid)])
    const m = list?.match(/list:\s*(.+)$/)
    if (m) return expandCpuList(m[1])
  }
  return os.cpus().map((_, i) => i)
}

function expandCpuList(text) {
  const out = []
  for (const part of text.split(',')) {
    const [a, b] = part.trim().split('-').map(Number)
    for (let i = a; i <= (b ?? a); i++) out.push(i)
  }
  return out
}

/**
 * Decides the core split. On Linux with at least two cores and `taskset`, the server gets the first core of
 * each pair half and the load tool the rest; elsewhere nothing is pinned, and the note says why.
 */
export function planPinning(mode) {
  const cores = availableCores()
  const all = { mode: 'none', server_cores: cores, load_cores: cores }
  if (mode === 'none') return { ...all, note: 'unpinned by request (--pin none): server and load tool share every core' }
  if (!isLinux) return { ...all, note: `pinning is not possible on ${process.platform}: server and load tool share every core` }
  if (!which('taskset')) return { ...all, note: 'taskset is not installed: server and load tool share every core' }
  if (cores.length < 2) return { ...all, note: 'one core only: server and load tool share it' }
  const half = Math.max(1, Math.floor(cores.length / 2))
  const server = cores.slice(0, half)
  const load = cores.slice(half)
  return {
    mode: 'taskset',
    server_cores: server,
    load_cores: load,
    note: `server pinned to core(s) ${server.join(',')}, load tool to core(s) ${load.join(',')} (taskset)`,
  }
}

export function pinned(cores, command, pinning) {
  return pinning.mode === 'taskset' ? ['taskset', '-c', cores.join(','), ...command] : command
}

const CLK_TCK = isLinux ? Number(run('getconf', ['CLK_TCK']) ?? 100) || 100 : 100

/** CPU seconds (user + system, all threads), resident and peak memory in MB, and thread count of a process. */
export function sample(pid) {
  if (isLinux) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const cpu = (Number(fields[11]) + Number(fields[12])) / CLK_TCK
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = (key) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'))?.[1] ?? 0)
      return { cpu, rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024, threads: kb('Threads') }
    } catch {
      return null
    }
  }
  // macOS and other Unixes: ps. cputime is [[dd-]hh:]mm:ss.cc; rss is KiB; ps -M lists one line per thread.
  const line = run('ps', ['-o', 'time=,rss=', '-p', String(pid)])
  if (!line) return null
  const [time, rss] = line.trim().split(/\s+/)
  const [days, clock] = time.includes('-') ? [Number(time.split('-')[0]), time.split('-')[1]] : [0, time]
  const cpu = days * 86_400 + clock.split(':').map(Number).reduce((acc, v) => acc * 60 + v, 0)
  const threads = Math.max(1, (run('ps', ['-M', '-p', String(pid)])?.split('\n').length ?? 2) - 1)
  return { cpu, rssMb: Number(rss) / 1024, peakMb: Number(rss) / 1024, threads }
}

const readNumber = (path) => {
  try {
    return Number(readFileSync(path, 'utf8').trim())
  } catch {
    return null
  }
}

export function machine() {
  const cpus = os.cpus()
  return {
    os: `${os.type()} ${os.release()} (${process.arch})`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    // The kernel caps every listen backlog at somaxconn; SYNs past a full accept queue are dropped and retried
    // by the client after 1 s, which is what a p99 of about a second at high connection counts means.
    somaxconn: isLinux ? readNumber('/proc/sys/net/core/somaxconn') : null,
    tcp_max_syn_backlog: isLinux ? readNumber('/proc/sys/net/ipv4/tcp_max_syn_backlog') : null,
  }
}

/** All-CPU tick counters from /proc/stat: total and steal (time the hypervisor gave to other guests). */
export function cpuTicks() {
  if (!isLinux) return null
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]
  const ticks = line.trim().split(/\s+/).slice(1).map(Number)
  return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 }
}

/** Steal time between two `cpuTicks()` readings, as a fraction of all CPU time. */
export function stealBetween(before, after) {
  if (!before || !after || after.total <= before.total) return null
  return (after.steal - before.steal) / (after.total - before.total)
}

/** The backlog a server's listening socket on `port` was given (`ss` shows it as Send-Q), or null. */
export function listenBacklog(port) {
  if (!isLinux || !which('ss')) return null
  const line = run('ss', ['-ltnH', `sport = :${port}`])?.split('\n').find(Boolean)
  const fields = line?.trim().split(/\s+/)
  return fields && fields.length >= 3 ? Number(fields[2]) : null
}
