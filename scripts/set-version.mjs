// Sets the release version everywhere it is written: the main package, its optionalDependencies, and every
// per-platform package. Then run `make native`, which regenerates the loader (it checks the platform package's
// version), commit, and push a `v<version>` tag: .github/workflows/release.yml builds, tests and publishes.
// Usage: node scripts/set-version.mjs 0.2.0
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const version = process.argv[2]
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version ?? '')) {
  throw new Error(`set-version: give a semver version such as 0.2.0, not ${JSON.stringify(version)}`)
}
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'gust')
const edit = (path, change) => {
  const json = JSON.parse(readFileSync(path, 'utf8'))
  change(json)
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`)
}
edit(join(pkg, 'package.json'), (main) => {
  main.version = version
  for (const name of Object.keys(main.optionalDependencies)) main.optionalDependencies[name] = version
})
for (const platform of readdirSync(join(pkg, 'npm'))) {
  edit(join(pkg, 'npm', platform, 'package.json'), (json) => (json.version = version))
}
console.log(`set-version: ${version}; now run \`make native\` to regenerate the loader`)
