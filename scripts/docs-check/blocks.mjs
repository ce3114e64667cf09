// Finding the code blocks of a Markdown page that the docs check runs, with the hidden set-up and checks
// written beside them (the convention is in docs/README.md, "Code blocks are tests").

/** The languages whose blocks are run; the value is the extension the extracted file gets. */
const RUNNABLE = { ts: 'ts', typescript: 'ts', js: 'mjs', javascript: 'mjs', mjs: 'mjs' }
/** Flags an info string may carry after its language, and what they mean (reported by the check). */
export const FLAGS = {
  'no-run': 'type-checked, not run',
  pending: 'waits for code another change adds: a failure is reported as pending, not as an error',
}

/**
 * The runnable blocks of one page, in order: `{ line, lang, ext, flags, code, before, after }`. `line` is the
 * 1-based line of the opening fence; `before` and `after` are the bodies of `<!-- check:before … -->` and
 * `<!-- check:after … -->` comments next to the block (only blank lines between), or ''. A block indented in a
 * list is dedented. An unknown flag or a check comment with no block beside it throws, naming the line.
 */
export function extractBlocks(text, file) {
  const lines = text.split('\n')
  const blocks = []
  const comments = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    const comment = /^\s*<!--\s*check:(before|after)\s*$/.exec(line)
    if (comment) {
      const start = i
      const body = []
      i++
      while (i < lines.length && !lines[i].includes('-->')) body.push(lines[i++])
      if (i === lines.length) throw new Error(`${file}:${start + 1}: a check:${comment[1]} comment is never closed`)
      if (lines[i].trim() !== '-->') throw new Error(`${file}:${i + 1}: put a check comment's closing --> on a line of its own`)
      comments.push({ kind: comment[1], start, end: i, body: body.join('\n') })
      i++
      continue
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(line)
    if (!fence) {
      i++
      continue
    }
    const [, indent, marks, lang, rest] = fence
    const start = i
    const body = []
    i++
    while (i < lines.length && !(lines[i].trim().startsWith(marks) && lines[i].trim().replace(/[`~]/g, '') === '')) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart())
      i++
    }
    if (i === lines.length) throw new Error(`${file}:${start + 1}: a code block is never closed`)
    const ext = RUNNABLE[lang.toLowerCase()]
    const flags = rest.split(/\s+/).filter(Boolean)
    if (ext) {
      for (const flag of flags) {
        if (!(flag in FLAGS)) {
          throw new Error(`${file}:${start + 1}: unknown flag "${flag}" on a \`\`\`${lang} block; known: ${Object.keys(FLAGS).join(', ')}`)
        }
      }
      blocks.push({ file, line: start + 1, end: i, lang, ext, flags, code: body.join('\n'), before: '', after: '' })
    }
    i++
  }
  // A comment belongs to the block it touches, with nothing but blank lines between.
  const blank = (from, to) => lines.slice(from, to).every((l) => l.trim() === '')
  for (const c of comments) {
    const owner =
      c.kind === 'before'
        ? blocks.find((b) => b.line - 1 > c.end && blank(c.end + 1, b.line - 1))
        : blocks.findLast((b) => b.end < c.start && blank(b.end + 1, c.start))
    if (!owner) throw new Error(`${file}:${c.start + 1}: a check:${c.kind} comment must sit next to a \`\`\`ts or \`\`\`js block`)
    if (owner[c.kind]) throw new Error(`${file}:${c.start + 1}: a block takes one check:${c.kind} comment`)
    owner[c.kind] = c.body
    owner[`${c.kind}Line`] = c.start + 2
  }
  return blocks
}

/** Bare module specifiers a piece of code imports (static, dynamic and `require`), without `node:` ones. */
export function bareImports(code) {
  const found = new Set()
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\bimport\s+['"]([^'"]+)['"]/g, /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g]
  for (const re of patterns) for (const m of code.matchAll(re)) found.add(m[1])
  return [...found].filter((s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:'))
}

/** The package a specifier names: `@scope/name` or `name`. */
export function packageOf(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * The code a block runs as: its hidden set-up, the block and its hidden checks, one after the other so line
 * numbers map back to the page, with the ports it listens on made free ones on the loopback (`port: 3000` →
 * `port: 0, hostname: '127.0.0.1'`, Express's `listen(3000)` → `listen(0, '127.0.0.1')`).
 */
export function assemble(block) {
  const parts = [block.before, block.code, block.after].filter((p) => p !== '')
  const offsets = []
  let at = 1
  for (const [part, line] of [
    [block.before, block.beforeLine],
    [block.code, block.line + 1],
    [block.after, block.afterLine],
  ]) {
    if (part === '') continue
    offsets.push({ from: at, to: at + part.split('\n').length - 1, line })
    at += part.split('\n').length
  }
  const source = parts
    .join('\n')
    .split('\n')
    .map((l) => (/hostname/.test(l) ? l.replace(/\bport: \d+/g, 'port: 0') : l.replace(/\bport: \d+/g, "port: 0, hostname: '127.0.0.1'")))
    .map((l) => l.replace(/\.listen\(\d+(\s*[,)])/g, ".listen(0, '127.0.0.1'$1"))
    .join('\n')
  return { source, offsets }
}

/** The page line of a line of assembled code. */
export function pageLine(offsets, line) {
  const o = offsets.find((x) => line >= x.from && line <= x.to)
  return o ? o.line + (line - o.from) : undefined
}
