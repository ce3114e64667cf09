// Files and payloads of the file and compression routes, the same for every contestant.
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where the served files are (generated, not in git). */
export const FILES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'public')

/** SaltyAom's video route: a ~14 MB file (14 MiB of `x`, so the load tool can check it cheaply). */
export const VIDEO_SIZE = 14 * 1024 * 1024
/** A small static asset: 1 KiB of CSS. */
export const ASSET = `${'.a{color:red}\n'.repeat(72)}/*${'x'.repeat(11)}*/\n`

/** Writes the files once (atomically, so a server starting meanwhile never reads half a file). */
export function ensureFixtures() {
  mkdirSync(FILES, { recursive: true })
  const put = (name, make, size) => {
    const path = join(FILES, name)
    if (existsSync(path) && statSync(path).size === size) return
    const tmp = `${path}.${process.pid}.tmp`
    writeFileSync(tmp, make())
    renameSync(tmp, path)
  }
  put('video.mp4', () => Buffer.alloc(VIDEO_SIZE, 0x78), VIDEO_SIZE)
  put('asset.css', () => ASSET, Buffer.byteLength(ASSET))
}

/** The compressed routes' body for `n`: a ~20 KiB JSON document (its text is the same from every contestant). */
export function payload(n) {
  const items = []
  for (let i = 0; i < 186; i++) {
    items.push({ id: i, n: Number(n), name: `item ${i} of request ${n}`, active: i % 3 === 0, score: (i * 37) % 101, tags: ['alpha', 'beta', 'gamma'] })
  }
  return { n: Number(n), count: items.length, items }
}

ensureFixtures()
