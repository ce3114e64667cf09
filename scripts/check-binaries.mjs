// Checks the per-platform packages before they are packed (run by `make pack`):
// - every napi target has its package dir, at the main package's version, listed in its optionalDependencies;
// - every Linux binary is there and is an addon for the right machine: ELF64 shared object, `napi_register_module_v1`
//   exported; a glibc build needs no symbol version above GLIBC_2.17; a musl build needs musl's `libc.so` and
//   nothing from glibc (a glibc binary under a musl name is a known way to ship a package that never loads).
// Uses binutils' `readelf`, present wherever a Rust toolchain links.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const pkgDir = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'packages', 'gust')
const main = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
const GLIBC_FLOOR = [2, 17]
const MACHINES = { x64: 'Advanced Micro Devices X86-64', arm64: 'AArch64' }
// Libraries only glibc provides; a musl binary naming any of them fails to load on Alpine.
const GLIBC_ONLY = /^(libc\.so\.6|libpthread\.so\.0|libdl\.so\.2|libm\.so\.6|librt\.so\.1|ld-linux.*)$/

const problems = []
const rows = []
const platformOf = (triple) => {
  const [arch, , os, abi] = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch]
  if (os === 'linux') return `linux-${cpu}-${abi}`
  if (os === 'darwin') return `darwin-${cpu}`
  if (os === 'windows') return `win32-${cpu}-${abi}`
  throw new Error(`check-binaries: no platform name for ${triple}`)
}

for (const triple of main.napi.targets) {
  const platform = platformOf(triple)
  const dir = join(pkgDir, 'npm', platform)
  const name = `${main.napi.packageName}-${platform}`
  if (!existsSync(join(dir, 'package.json'))) {
    problems.push(`${platform}: packages/gust/npm/${platform}/package.json is missing (napi create-npm-dirs)`)
    continue
  }
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (pkg.name !== name) problems.push(`${platform}: package name ${pkg.name}, expected ${name}`)
  if (pkg.version !== main.version) problems.push(`${platform}: version ${pkg.version}, main package is ${main.version}`)
  if (main.optionalDependencies?.[name] !== main.version) {
    problems.push(`${platform}: the main package's optionalDependencies must list ${name}@${main.version}`)
  }
  if (!platform.startsWith('linux-')) continue

  const file = join(dir, pkg.main)
  if (!existsSync(file)) {
    problems.push(`${platform}: ${pkg.main} was not built`)
    continue
  }
  const elf = (flag) => execFileSync('readelf', ['--wide', flag, file], { encoding: 'utf8' })
  const header = elf('-h')
  const machine = /Machine:\s+(.+)/.exec(header)?.[1]?.trim()
  const cpu = platform.split('-')[1]
  if (!/Class:\s+ELF64/.test(header)) problems.push(`${platform}: not an ELF64 file`)
  if (!/Type:\s+DYN/.test(header)) problems.push(`${platform}: not a shared object`)
  if (machine !== MACHINES[cpu]) problems.push(`${platform}: built for ${machine}, expected ${MACHINES[cpu]}`)
  const needed = [...elf('-d').matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1])
  const glibc = [...new Set([...elf('-V').matchAll(/GLIBC_(\d+)\.(\d+)(?:\.(\d+))?/g)].map((m) => `${m[1]}.${m[2]}`))]
    .map((v) => v.split('.').map(Number))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const highest = glibc.at(-1)
  if (!/\snapi_register_module_v1$/m.test(elf('--dyn-syms'))) problems.push(`${platform}: exports no napi_register_module_v1`)
  let libc
  if (platform.endsWith('-gnu')) {
    if (!needed.includes('libc.so.6')) problems.push(`${platform}: does not link glibc (needs ${needed.join(', ')})`)
    if (!highest) problems.push(`${platform}: no GLIBC symbol versions found`)
    else if (highest[0] > GLIBC_FLOOR[0] || (highest[0] === GLIBC_FLOOR[0] && highest[1] > GLIBC_FLOOR[1])) {
      problems.push(`${platform}: needs GLIBC_${highest.join('.')}, above the ${GLIBC_FLOOR.join('.')} floor`)
    }
    libc = `glibc ≥ ${highest?.join('.')}`
  } else {
    const fromGlibc = needed.filter((lib) => GLIBC_ONLY.test(lib))
    if (fromGlibc.length > 0) problems.push(`${platform}: a musl build needing glibc's ${fromGlibc.join(', ')}`)
    if (glibc.length > 0) problems.push(`${platform}: a musl build with GLIBC symbol versions`)
    if (!needed.includes('libc.so')) problems.push(`${platform}: does not link musl's libc.so (needs ${needed.join(', ')})`)
    libc = 'musl'
  }
  rows.push(`${platform.padEnd(18)} ${String(statSync(file).size).padStart(9)} B  ${machine}, ${libc}, needs ${needed.join(' ')}`)
}

console.log(rows.join('\n'))
if (problems.length > 0) {
  console.error(`check-binaries: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`check-binaries: ${rows.length} Linux binaries and ${main.napi.targets.length} platform packages are consistent`)
