// Links between the docs: every relative link must name a file of the repository and, for a Markdown file, a
// heading of it; absolute links into this repository's GitHub tree (the npm page's) must name a file here too.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const REPO_URL = /^https:\/\/github\.com\/gustjs\/gust\/(?:blob|tree)\/main\/([^#?]*)(#.*)?$/

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

/** The anchors of a Markdown file's headings, numbered as GitHub numbers repeated ones. */
export function anchors(text) {
  const seen = new Map()
  const out = new Set()
  const inFence = fences()
  for (const line of text.split('\n')) {
    const h = !inFence(line) && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!h) continue
    const base = slug(h[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** Tells, line by line, whether a line is part of a fenced code block (its fences included). */
function fences() {
  let open = ''
  return (line) => {
    const fence = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (open) {
      if (fence && fence[0] === open[0] && fence.length >= open.length && line.trim() === fence) open = ''
      return true
    }
    if (fence) open = fence
    return Boolean(fence)
  }
}

/** The links of a Markdown text outside code, with their lines: `{ line, target }`. */
function links(text) {
  const out = []
  const inFence = fences()
  text.split('\n').forEach((line, i) => {
    if (inFence(line)) return
    const prose = line.replace(/`[^`]*`/g, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ line: i + 1, target: m[1] })
  })
  return out
}

/** Problems with the links of `file` (a path relative to `root`), as `file:line: …` strings. */
export function checkLinks(root, file) {
  const problems = []
  const text = readFileSync(join(root, file), 'utf8')
  const anchorCache = new Map()
  const anchorsOf = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')))
    return anchorCache.get(path)
  }
  for (const { line, target } of links(text)) {
    let path
    let hash
    const repo = REPO_URL.exec(target)
    if (repo) {
      path = join(root, decodeURIComponent(repo[1]))
      hash = repo[2]
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      continue
    } else {
      const [p, h] = target.split('#')
      path = p === '' ? join(root, file) : join(root, dirname(file), decodeURIComponent(p))
      hash = h === undefined ? undefined : `#${h}`
    }
    if (!existsSync(path)) {
      problems.push(`${file}:${line}: ${target}: no such file (${relative(root, path)})`)
      continue
    }
    if (hash && hash !== '#' && path.endsWith('.md') && !anchorsOf(path).has(decodeURIComponent(hash.slice(1)))) {
      problems.push(`${file}:${line}: ${target}: ${relative(root, path)} has no heading with that anchor`)
    }
  }
  return problems
}
