// A read-only npm registry on 127.0.0.1 that serves the tarballs in one folder and answers 404 for anything
// else. The install test points npm and bun at it so that `npm install gust` / `bun add gust` take the same path
// as from npmjs.com: the main package's optionalDependencies are resolved by name, and the package manager
// picks the platform package by its `os`, `cpu` and `libc`. No network beyond loopback.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'

/** Starts the registry; resolves to `{ url, requests, close() }` once it listens. */
export async function startRegistry(folder) {
  const tarballs = new Map()
  const manifests = new Map()
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.tgz'))) {
    const path = join(folder, file)
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', path, 'package/package.json'], { encoding: 'utf8' }))
    const bytes = readFileSync(path)
    tarballs.set(file, bytes)
    manifests.set(manifest.name, { manifest, file, bytes })
  }
  const requests = []
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname)
    requests.push(`${req.method} ${path}`)
    if (path.startsWith('/-/tarballs/') && tarballs.has(path.slice(12))) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarballs.get(path.slice(12)))
      return
    }
    const entry = manifests.get(path.slice(1))
    if (!entry || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
      return
    }
    const { manifest, file, bytes } = entry
    const { address, port } = server.address()
    const version = {
      ...manifest,
      _id: `${manifest.name}@${manifest.version}`,
      dist: {
        tarball: `http://${address}:${port}/-/tarballs/${file}`,
        integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        shasum: createHash('sha1').update(bytes).digest('hex'),
      },
    }
    const body = {
      name: manifest.name,
      'dist-tags': { latest: manifest.version },
      versions: { [manifest.version]: version },
      time: { [manifest.version]: new Date(0).toISOString() },
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    packages: [...manifests.keys()],
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
