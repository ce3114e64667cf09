#!/usr/bin/env node
// Keeps the shape of the code: fails when a room imports one it must not.
//
// Rust core (crates/gust-core/src): every top-level folder is a layer, in the order of LAYERS, from plain values
// up to the transport. A file may import its own layer and the layers below it, never one above. Within a layer,
// its rooms (the layer folder's files and sub-folders) must not import each other in a loop; files inside one
// room (a folder such as `service/ws`) may. Imports are read from every `crate::…`, `super::…` and `self::…` path
// in code, `use` lists of any shape included, and from a `use` of a child module by its bare name; comments,
// literals and `#[cfg(test)] mod … { }` blocks are left out (a test may assemble rooms of any layer). Paths through
// the crate root's re-exports are resolved from lib.rs.
//
// TypeScript package (packages/gust/src): relative imports, type-only ones included, must form no loop.
//
// Usage: node scripts/check-layers.mjs [--verbose]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const CORE = join(ROOT, 'crates/gust-core/src')
const PACKAGE = join(ROOT, 'packages/gust/src')
const LAYERS = ['values', 'bodies', 'responses', 'wire', 'crossing', 'service', 'protocol', 'transport']
const verbose = process.argv.includes('--verbose')

function walk(dir, ext) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...walk(path, ext))
    else if (name.endsWith(ext)) out.push(path)
  }
  return out
}

/**
 * The code of a Rust file as the compiler reads it, for finding paths: comments, string and character literals
 * and `#[cfg(test)] mod … { … }` blocks blanked (same length, newlines kept, so offsets keep their line).
 */
function cleanRust(text) {
  const blank = (piece) => piece.replace(/[^\n]/g, ' ')
  let out = ''
  let i = 0
  while (i < text.length) {
    const rest = text.slice(i, i + 64)
    const before = i > 0 ? text[i - 1] : ''
    if (rest.startsWith('//')) {
      const end = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i)
      out += blank(text.slice(i, end))
      i = end
    } else if (rest.startsWith('/*')) {
      let depth = 1
      let j = i + 2
      while (j < text.length && depth > 0) {
        if (text.startsWith('/*', j)) (depth++, (j += 2))
        else if (text.startsWith('*/', j)) (depth--, (j += 2))
        else j++
      }
      out += blank(text.slice(i, j))
      i = j
    } else if (!/[A-Za-z0-9_]/.test(before) && /^b?r#*"/.test(rest)) {
      const hashes = /^b?r(#*)"/.exec(rest)[1]
      const open = rest.indexOf('"') + 1
      const close = text.indexOf(`"${hashes}`, i + open)
      const end = close < 0 ? text.length : close + 1 + hashes.length
      out += blank(text.slice(i, end))
      i = end
    } else if (text[i] === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += blank(text.slice(i, j + 1))
      i = j + 1
    } else if (text[i] === "'" && /^'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'/.test(rest)) {
      const literal = /^'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'/.exec(rest)[0]
      out += blank(literal)
      i += literal.length
    } else {
      out += text[i]
      i++
    }
  }
  // Test modules may assemble rooms of any layer: blank each, to its matching brace.
  for (const m of out.matchAll(/#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+[A-Za-z_]\w*\s*\{/g)) {
    let depth = 0
    let j = m.index + m[0].length - 1
    for (; j < out.length; j++) {
      if (out[j] === '{') depth++
      else if (out[j] === '}' && --depth === 0) break
    }
    out = out.slice(0, m.index) + blank(out.slice(m.index, j + 1)) + out.slice(j + 1)
  }
  return out
}

/** Whether module `module` (a path of segments under src/) has a child module `name`. */
function hasChild(module, name) {
  const dir = join(CORE, ...module)
  return existsSync(join(dir, `${name}.rs`)) || existsSync(join(dir, name, 'mod.rs'))
}

/** The paths a use tree starting at `text[at]` names, as arrays of segments (`a::{b, c::d}` → a::b, a::c::d). */
function useTree(text, at) {
  const paths = []
  function tree(prefix) {
    const segments = [...prefix]
    for (;;) {
      const m = /^\s*([A-Za-z_][A-Za-z0-9_]*|\{)/.exec(text.slice(at))
      if (!m) break
      if (m[1] === '{') {
        at += m[0].length
        for (;;) {
          tree(segments)
          const sep = /^\s*([,}])/.exec(text.slice(at))
          if (!sep) return
          at += sep[0].length
          if (sep[1] === '}') return
          if (/^\s*\}/.test(text.slice(at))) {
            at += /^\s*\}/.exec(text.slice(at))[0].length
            return
          }
        }
      }
      segments.push(m[1])
      at += m[0].length
      const renamed = /^\s+as\s+[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(at))
      if (renamed) {
        at += renamed[0].length
        break
      }
      const more = /^\s*::/.exec(text.slice(at))
      if (!more) break
      at += more[0].length
    }
    paths.push(segments)
  }
  tree([])
  return paths
}

/** The crate root's re-exports: name → module path. */
function rootAliases() {
  const text = readFileSync(join(CORE, 'lib.rs'), 'utf8')
  const aliases = new Map()
  for (const m of text.matchAll(/pub use\s+([^;]+);/g)) {
    for (const path of useTree(m[1], 0)) aliases.set(path[path.length - 1], path.slice(0, -1))
  }
  for (const m of text.matchAll(/^\s*(?:pub\s+)?mod\s+([a-z_]+)\s*;/gm)) aliases.set(m[1], [m[1]])
  return aliases
}

function checkRust() {
  const aliases = rootAliases()
  const problems = []
  const edges = new Map() // layer → Map(room → Set(room))
  let count = 0
  for (const file of walk(CORE, '.rs')) {
    const rel = relative(CORE, file).replace(/\\/g, '/')
    // lib.rs and the fuzz harnesses' doors (fuzzing.rs, built only for them) sit above every layer.
    if (rel === 'lib.rs' || rel === 'fuzzing.rs') continue
    const parts = rel.replace(/\.rs$/, '').split('/')
    const module = parts[parts.length - 1] === 'mod' ? parts.slice(0, -1) : parts
    const layer = module[0]
    if (!LAYERS.includes(layer)) {
      problems.push(`${rel}: the folder '${layer}' is not a layer (add it to LAYERS in scripts/check-layers.mjs)`)
      continue
    }
    // The room this file is in: the layer's own mod.rs is the layer's root room.
    const room = module.length > 1 ? module[1] : '(root)'
    const code = cleanRust(readFileSync(file, 'utf8'))
    const lineOf = (at) => code.slice(0, at).split('\n').length
    // Where paths start: `crate::`, `super::` and `self::` anywhere (not the inner `super::` of `super::super::`,
    // nor a macro's `$crate::`), and a `use` of a child module by its bare name (2018 paths).
    const starts = []
    for (const m of code.matchAll(/\b(crate|super|self)\s*::/g)) {
      if (/(::|\$)\s*$/.test(code.slice(Math.max(0, m.index - 8), m.index))) continue
      starts.push({ at: m.index, base: [], tree: m.index })
    }
    for (const m of code.matchAll(/\buse\s+([A-Za-z_][A-Za-z0-9_]*)\s*::/g)) {
      if (['crate', 'super', 'self'].includes(m[1]) || !hasChild(module, m[1])) continue
      starts.push({ at: m.index, base: module, tree: m.index + m[0].indexOf(m[1]) })
    }
    for (const start of starts) {
      for (let path of useTree(code, start.tree)) {
        let target = [...start.base]
        if (path[0] === 'crate') path = path.slice(1)
        else if (path[0] === 'self' || path[0] === 'super') target = module.slice()
        while (path[0] === 'self' || path[0] === 'super') {
          if (path[0] === 'super') target = target.slice(0, -1)
          path = path.slice(1)
        }
        target = [...target, ...path]
        const line = lineOf(start.at)
        if (target.length === 0) continue
        if (!LAYERS.includes(target[0])) {
          const alias = aliases.get(target[0])
          if (!alias) {
            problems.push(`${rel}:${line}: cannot tell which layer 'crate::${target.join('::')}' is in`)
            continue
          }
          target = [...alias, ...target.slice(1)]
        }
        const to = target[0]
        if (!LAYERS.includes(to)) continue
        count++
        if (LAYERS.indexOf(to) > LAYERS.indexOf(layer)) {
          problems.push(
            `${rel}:${line}: ${layer} (layer ${LAYERS.indexOf(layer) + 1}) imports ${target.slice(0, 2).join('::')} from ${to} (layer ${LAYERS.indexOf(to) + 1}), above it`,
          )
          continue
        }
        if (to !== layer) continue
        const toRoom = target.length > 1 && existsRoom(to, target[1]) ? target[1] : '(root)'
        if (toRoom === room) continue
        if (!edges.has(layer)) edges.set(layer, new Map())
        const rooms = edges.get(layer)
        if (!rooms.has(room)) rooms.set(room, new Map())
        if (!rooms.get(room).has(toRoom)) rooms.get(room).set(toRoom, `${rel}:${line}`)
      }
    }
  }
  for (const [layer, rooms] of edges) {
    for (const cycle of cycles(rooms)) {
      const where = cycle.map((r, i) => `${r} → ${cycle[(i + 1) % cycle.length]} (${rooms.get(r).get(cycle[(i + 1) % cycle.length])})`)
      problems.push(`${layer}: rooms import each other in a loop: ${where.join(', ')}`)
    }
  }
  return { problems, count }
}

function existsRoom(layer, name) {
  const dir = join(CORE, layer)
  try {
    return statSync(join(dir, `${name}.rs`)).isFile()
  } catch {}
  try {
    return statSync(join(dir, name)).isDirectory()
  } catch {}
  return false
}

/** Every elementary loop found by a depth-first search (one per back edge), as a list of nodes. */
function cycles(graph) {
  const found = []
  const state = new Map()
  const stack = []
  function visit(node) {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node)?.keys() ?? []) {
      if (state.get(next) === 'open') found.push(stack.slice(stack.indexOf(next)))
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node)
  return found
}

function checkTypeScript() {
  const graph = new Map()
  let count = 0
  for (const file of walk(PACKAGE, '.ts')) {
    const rel = relative(PACKAGE, file).replace(/\\/g, '/')
    const text = readFileSync(file, 'utf8')
    const imports = new Map()
    // `import … from './x.js'`, `export … from './x.js'` and `import './x.js'` (dynamic `import()` is lazy: no loop).
    for (const m of text.matchAll(/^\s*(?:(?:import|export)\b[^'"]*?from\s+|import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      const target = relative(PACKAGE, resolve(dirname(file), m[1].replace(/\.js$/, '.ts'))).replace(/\\/g, '/')
      const line = text.slice(0, m.index).split('\n').length + (m[0].startsWith('\n') ? 1 : 0)
      if (!imports.has(target)) imports.set(target, `${rel}:${line}`)
      count++
    }
    graph.set(rel, imports)
  }
  const problems = cycles(graph).map(
    (cycle) => `packages/gust/src: modules import each other in a loop: ${cycle.map((m, i) => `${m} → ${cycle[(i + 1) % cycle.length]} (${graph.get(m).get(cycle[(i + 1) % cycle.length])})`).join(', ')}`,
  )
  return { problems, count }
}

const rust = checkRust()
const ts = checkTypeScript()
const problems = [...rust.problems, ...ts.problems]
if (verbose || problems.length) {
  for (const p of problems) console.error(p)
}
if (problems.length) {
  console.error(`\n${problems.length} layering problem(s): a lower layer must not import a higher one, and rooms must not import each other in a loop (see crates/gust-core/README.md).`)
  process.exit(1)
}
console.log(`layers: ok (${rust.count} imports between rooms of the Rust core in ${LAYERS.length} layers, ${ts.count} relative imports in the TypeScript package, no loop)`)
