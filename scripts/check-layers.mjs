#!/usr/bin/env node
// Keeps the shape of the code: fails when a room imports one it must not.
//
// Rust core (crates/gust-core/src): every top-level folder is a layer, in the order of LAYERS, from plain values
// up to the transport. A file may import its own layer and the layers below it, never one above. Within a layer,
// its rooms (the layer folder's files and sub-folders) must not import each other in a loop; files inside one
// room (a folder such as `service/ws`) may. Imports are read from `crate::…` and `super::…` paths in code (not
// comments, not the `#[cfg(test)] mod tests` at a file's end, where a test may assemble rooms of any layer);
// paths through the crate root's re-exports are resolved from lib.rs.
//
// TypeScript package (packages/gust/src): relative imports, type-only ones included, must form no loop.
//
// Usage: node scripts/check-layers.mjs [--verbose]
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const CORE = join(ROOT, 'crates/gust-core/src')
const PACKAGE = join(ROOT, 'packages/gust/src')
const LAYERS = ['values', 'bodies', 'responses', 'wire', 'crossing', 'service', 'transport']
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

/** Code without comments and without the trailing test module, with each line's number kept. */
function codeLines(text) {
  const lines = text.split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*#\[cfg\(test\)\]\s*$/.test(lines[i]) && /^\s*(pub(\([^)]*\))?\s+)?mod\s+tests\b/.test(lines[i + 1] ?? '')) break
    out.push({ line: i + 1, text: lines[i].replace(/\/\/.*$/, '') })
  }
  return out
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
    if (rel === 'lib.rs') continue
    const parts = rel.replace(/\.rs$/, '').split('/')
    const module = parts[parts.length - 1] === 'mod' ? parts.slice(0, -1) : parts
    const layer = module[0]
    if (!LAYERS.includes(layer)) {
      problems.push(`${rel}: the folder '${layer}' is not a layer (add it to LAYERS in scripts/check-layers.mjs)`)
      continue
    }
    // The room this file is in: the layer's own mod.rs is the layer's root room.
    const room = module.length > 1 ? module[1] : '(root)'
    const text = readFileSync(file, 'utf8')
    for (const { line, text: code } of codeLines(text)) {
      for (const m of code.matchAll(/\b(crate|super|self)\s*::/g)) {
        // The inner `super::` of `super::super::x` was resolved with the outer one.
        if (/::\s*$/.test(code.slice(0, m.index))) continue
        const tail = useTree(code, m.index + m[0].length)
        for (let path of tail) {
          let base
          if (m[1] === 'crate') base = []
          else if (m[1] === 'self') base = module.slice()
          else {
            base = module.slice(0, -1)
            while (path[0] === 'super') {
              base = base.slice(0, -1)
              path = path.slice(1)
            }
          }
          let target = [...base, ...path]
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
    for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) {
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
