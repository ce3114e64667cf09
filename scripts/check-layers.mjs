#!/usr/bin/env node
// Keeps the shape of the code: fails when a room imports one it must not.
//
// Rust core (crates/gust-core/src): every top-level folder is a layer, in the order of LAYERS, from plain values
// up to the transport. A file may import its own layer and the layers below it, never one above. Within a layer,
// its rooms (the layer folder's files and sub-folders) must not import each other in a loop, and within a room
// that is a folder (such as `service/ws`), neither must its files: a child that imports from its parent's mod.rs
// while that mod.rs imports from the child is a loop too. Imports are read from every `crate::…`, `super::…` and
// `self::…` path in code, `use` lists of any shape included, and from a child module named by its bare name;
// comments, literals and `#[cfg(test)] mod … { }` blocks are left out (a test may assemble rooms of any layer).
// A path is followed through re-exports (`pub use child::X`) to the file that defines what it names; a re-export
// itself declares, it is no import. lib.rs sits above every layer: a path through one of its re-exports
// (`crate::Error`) is reported, with the path to write instead (`crate::values::error::Error`).
//
// TypeScript package (packages/gust/src): every file is on a floor (FLOORS, from plain values up to the package's
// face); relative imports, type-only ones included, point to the file's own floor or one below, and form no loop.
//
// tokio's runtime (spawning, sleeping, blocking work, runtimes themselves: TOKIO_RUNTIME) is named only where
// TOKIO_ROOMS says: every other room goes through `rt`, which hands each call to the engine polling on its
// thread (crates/gust-core/src/rt/mod.rs). tokio's `sync`, `io` and `net` types and `select!` need no runtime
// and are anyone's. Test modules are left out, as for imports.
//
// Binding crate (crates/gust-napi/src): its files, one flat room, form no loop.
//
// Sizes: no hand-written Rust file of crates/ nor TypeScript file of the package over MAX_LINES lines.
//
// Usage: node scripts/check-layers.mjs [--verbose]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const CORE = join(ROOT, 'crates/gust-core/src')
const PACKAGE = join(ROOT, 'packages/gust/src')
const LAYERS = ['values', 'rt', 'bodies', 'responses', 'wire', 'crossing', 'service', 'protocol', 'transport']
const verbose = process.argv.includes('--verbose')
/** The rooms (`layer` or `layer/room`) that may name tokio's runtime, and why. */
const TOKIO_ROOMS = {
  rt: 'the runtime seam: it is what hands a call to tokio or to the one-thread engine',
  'transport/threaded': 'the threaded engine: its I/O threads are tokio runtimes',
  'transport/assembly': "the engine a server runs, the threaded one's runtime handles",
  'service/relay': 'the link to Redis: a thread of its own runs a tokio runtime for the Redis client, whichever engine serves',
}
/** A path into tokio's runtime: `tokio::spawn`, `tokio::time::…`, `tokio::runtime::…`, `tokio::task::spawn…`. */
const TOKIO_RUNTIME = /^tokio::(spawn|time|runtime|task::(spawn\w*|yield_now|block_in_place|JoinHandle|LocalSet|JoinSet))\b/

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

/** Whether `module` (a path of segments under src/, [] for the crate root) is a module of the crate. */
function isModule(module) {
  if (module.length === 0) return true
  const path = join(CORE, ...module)
  return existsSync(`${path}.rs`) || existsSync(join(path, 'mod.rs'))
}

/** The file that holds `module`. */
function moduleFile(module) {
  if (module.length === 0) return join(CORE, 'lib.rs')
  const path = join(CORE, ...module)
  return existsSync(`${path}.rs`) ? `${path}.rs` : join(path, 'mod.rs')
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

/**
 * A path written in `module` as segments from the crate root: `crate::…`, `self::…` and `super::…`, or a child
 * module by its bare name (2018 paths); null for anything else (another crate, a local name).
 */
function absolute(module, path) {
  if (path[0] === 'crate') return path.slice(1)
  if (path[0] !== 'self' && path[0] !== 'super') return isModule([...module, path[0]]) ? [...module, ...path] : null
  let target = module.slice()
  while (path[0] === 'self' || path[0] === 'super') {
    if (path[0] === 'super') target = target.slice(0, -1)
    path = path.slice(1)
  }
  return [...target, ...path]
}

const parsed = new Map() // file → { code, uses, reexports }

/**
 * A module's code as cleanRust leaves it, its `use` statements (`{ start, tree, end, reexport }`: a `pub use`, of
 * any visibility, is a re-export) and its re-exports (name → the path they name, from the crate root).
 */
function parse(module) {
  const file = moduleFile(module)
  if (parsed.has(file)) return parsed.get(file)
  const code = cleanRust(readFileSync(file, 'utf8'))
  const uses = []
  const reexports = new Map()
  for (const m of code.matchAll(/\b(pub(\s*\([^)]*\))?\s+)?use\s+/g)) {
    const end = code.indexOf(';', m.index)
    uses.push({ start: m.index, tree: m.index + m[0].length, end: end < 0 ? code.length : end, reexport: !!m[1] })
    if (!m[1]) continue
    for (let path of useTree(code, m.index + m[0].length)) {
      if (path[path.length - 1] === 'self') path = path.slice(0, -1)
      const target = absolute(module, path)
      if (target) reexports.set(path[path.length - 1], target)
    }
  }
  const result = { code, uses, reexports }
  parsed.set(file, result)
  return result
}

/**
 * Where a path from the crate root leads: the module that defines what it names, through the re-exports on the
 * way (`crate::ws::WebSockets` is defined in service/ws/hub), and, when it went through a re-export of lib.rs,
 * the path that re-export names (`crate::Error` → values::error::Error).
 */
function definedIn(target) {
  let rootAlias = null
  for (let hops = 0; hops < 16; hops++) {
    if (target[target.length - 1] === 'self') target = target.slice(0, -1)
    let i = 0
    while (i < target.length && isModule(target.slice(0, i + 1))) i++
    const module = target.slice(0, i)
    const alias = i < target.length ? parse(module).reexports.get(target[i]) : undefined
    if (!alias) return { module, rootAlias }
    target = [...alias, ...target.slice(i + 1)]
    if (module.length === 0) rootAlias ??= target
  }
  return { module: [], rootAlias }
}

function checkRust() {
  const problems = []
  const edges = new Map() // layer → Map(room → Map(room → where))
  const modules = new Map() // `layer/room` → Map(module → Map(module → where)), the files of one room
  let count = 0
  const add = (graph, key, from, to, where) => {
    if (!graph.has(key)) graph.set(key, new Map())
    const nodes = graph.get(key)
    if (!nodes.has(from)) nodes.set(from, new Map())
    if (!nodes.get(from).has(to)) nodes.get(from).set(to, where)
  }
  for (const file of walk(CORE, '.rs')) {
    const rel = relative(CORE, file).replace(/\\/g, '/')
    // lib.rs and the fuzz harnesses' doors (fuzzing/, built only for them) sit above every layer.
    if (rel === 'lib.rs' || rel.startsWith('fuzzing/')) continue
    const parts = rel.replace(/\.rs$/, '').split('/')
    const module = parts[parts.length - 1] === 'mod' ? parts.slice(0, -1) : parts
    const layer = module[0]
    if (!LAYERS.includes(layer)) {
      problems.push(`${rel}: the folder '${layer}' is not a layer (add it to LAYERS in scripts/check-layers.mjs)`)
      continue
    }
    // The room this file is in: the layer's own mod.rs is the layer's root room.
    const room = module.length > 1 ? module[1] : '(root)'
    const { code, uses } = parse(module)
    const lineOf = (at) => code.slice(0, at).split('\n').length
    if (!(layer in TOKIO_ROOMS) && !(`${layer}/${room}` in TOKIO_ROOMS)) {
      for (const m of code.matchAll(/\btokio\s*::/g)) {
        if (/(::|\$|\.)\s*$/.test(code.slice(Math.max(0, m.index - 8), m.index))) continue
        for (const path of useTree(code, m.index)) {
          const written = path.join('::')
          if (TOKIO_RUNTIME.test(written)) {
            problems.push(`${rel}:${lineOf(m.index)}: names tokio's runtime (${written}): go through rt (crate::rt), or add the room to TOKIO_ROOMS in scripts/check-layers.mjs with the reason`)
          }
        }
      }
    }
    const useAt = (at) => uses.find((u) => u.start <= at && at < u.end)
    // Where paths start: `crate::`, `super::` and `self::` anywhere (not the inner `super::` of `super::super::`,
    // nor a macro's `$crate::`), and a child module named by its bare name, in a `use` or in code (2018 paths).
    const starts = []
    for (const m of code.matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*::/g)) {
      if (/(::|\$|\.)\s*$/.test(code.slice(Math.max(0, m.index - 8), m.index))) continue
      const inUse = useAt(m.index)
      if (!['crate', 'super', 'self'].includes(m[1])) {
        if (!isModule([...module, m[1]])) continue
        // Inside a use tree, only its first segment starts a path (`use a::{b::c}`: not `b`).
        if (inUse && !/^\s*$/.test(code.slice(inUse.tree, m.index))) continue
      }
      starts.push({ at: m.index, reexport: !!inUse?.reexport })
    }
    for (const start of starts) {
      for (const path of useTree(code, start.at)) {
        const line = lineOf(start.at)
        const where = `${rel}:${line}`
        const written = absolute(module, path)
        if (!written || written.length === 0) continue
        const { module: target, rootAlias } = definedIn(written)
        // lib.rs sits above every layer: its re-exports are the crate's public face, not a way in for a room.
        if (rootAlias) {
          problems.push(
            `${where}: 'crate::${written.join('::')}' names a root re-export of lib.rs; import it from crate::${rootAlias.join('::')}`,
          )
        }
        const to = target[0]
        if (!LAYERS.includes(to)) {
          if (target.length === 0) problems.push(`${where}: cannot tell which layer 'crate::${written.join('::')}' is in`)
          continue
        }
        count++
        if (LAYERS.indexOf(to) > LAYERS.indexOf(layer)) {
          problems.push(
            `${where}: ${layer} (layer ${LAYERS.indexOf(layer) + 1}) imports ${target.slice(0, 2).join('::')} from ${to} (layer ${LAYERS.indexOf(to) + 1}), above it`,
          )
          continue
        }
        if (to !== layer) continue
        const toRoom = target.length > 1 ? target[1] : '(root)'
        if (toRoom !== room) {
          add(edges, layer, room, toRoom, where)
          continue
        }
        // Within one room, between its files: a re-export (`pub use child::X`) declares, it does not depend.
        const from = module.join('/')
        const into = target.join('/')
        if (into !== from && !start.reexport) add(modules, `${layer}/${room}`, from, into, where)
      }
    }
  }
  for (const [layer, rooms] of edges) {
    for (const cycle of cycles(rooms)) {
      const where = cycle.map((r, i) => `${r} → ${cycle[(i + 1) % cycle.length]} (${rooms.get(r).get(cycle[(i + 1) % cycle.length])})`)
      problems.push(`${layer}: rooms import each other in a loop: ${where.join(', ')}`)
    }
  }
  for (const [room, files] of modules) {
    for (const cycle of cycles(files)) {
      const where = cycle.map((m, i) => `${m} → ${cycle[(i + 1) % cycle.length]} (${files.get(m).get(cycle[(i + 1) % cycle.length])})`)
      problems.push(`${room}: files import each other in a loop: ${where.join(', ')}`)
    }
  }
  return { problems, count }
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

/**
 * The package's floors, from plain values up to its public face (packages/gust/src/README.md draws them). A file
 * is on the floor of the first entry naming it: a folder (`native/`) or a file (`request.ts`).
 */
const FLOORS = [
  ['values', ['builtins.ts', 'ip.ts', 'bytes.ts', 'record.ts', 'query.ts', 'path-pattern.ts', 'http-exception.ts', 'watch.ts', 'tls-info.ts', 'proxy.ts', 'form-data.ts', 'header-section.ts']],
  ['native', ['native/', 'stream/', 'options.ts', 'tls.ts', 'pubsub.ts', 'listen-error.ts']],
  ['request', ['request.ts', 'request-scope.ts', 'reply.ts', 'light-response.ts', 'context.ts', 'file.ts', 'route-schema.ts', 'route-openapi.ts', 'types.ts', 'compose.ts', 'observe.ts', 'validation.ts', 'cookie.ts', 'cookie-helpers.ts', 'cookie-signed.ts', 'rate-limit-spec.ts', 'route-options.ts', 'ws/']],
  ['engine', ['engine/', 'in-process.ts']],
  ['app', ['gust.ts', 'app-core.ts', 'server.ts', 'workers/']],
  ['extensions', ['adapter/', 'middleware/', 'openapi/', 'client/']],
  ['face', ['index.ts']],
]

/** The floor index of a file of the package (a path relative to src/), or -1. */
function floorOf(rel) {
  return FLOORS.findIndex(([, paths]) => paths.some((p) => (p.endsWith('/') ? rel.startsWith(p) : rel === p)))
}

function checkTypeScript() {
  const graph = new Map()
  const problems = []
  let count = 0
  for (const file of walk(PACKAGE, '.ts')) {
    const rel = relative(PACKAGE, file).replace(/\\/g, '/')
    const text = readFileSync(file, 'utf8')
    const floor = floorOf(rel)
    if (floor < 0) problems.push(`packages/gust/src/${rel}: not on a floor (add it to FLOORS in scripts/check-layers.mjs and to src/README.md)`)
    const imports = new Map()
    // `import … from './x.js'`, `export … from './x.js'` and `import './x.js'` (dynamic `import()` is lazy: no loop).
    for (const m of text.matchAll(/^\s*(?:(?:import|export)\b[^'"]*?from\s+|import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      const target = relative(PACKAGE, resolve(dirname(file), m[1].replace(/\.js$/, '.ts'))).replace(/\\/g, '/')
      const line = text.slice(0, m.index).split('\n').length + (m[0].startsWith('\n') ? 1 : 0)
      if (!imports.has(target)) imports.set(target, `${rel}:${line}`)
      count++
      const to = floorOf(target)
      if (floor >= 0 && to > floor) {
        problems.push(`packages/gust/src/${rel}:${line}: ${FLOORS[floor][0]} (floor ${floor + 1}) imports ${target} from ${FLOORS[to][0]} (floor ${to + 1}), above it`)
      }
    }
    graph.set(rel, imports)
  }
  for (const cycle of cycles(graph)) {
    problems.push(`packages/gust/src: modules import each other in a loop: ${cycle.map((m, i) => `${m} → ${cycle[(i + 1) % cycle.length]} (${graph.get(m).get(cycle[(i + 1) % cycle.length])})`).join(', ')}`)
  }
  return { problems, count }
}

/**
 * The binding crate (crates/gust-napi/src) is one flat room of thin wrappers: its files must not import each
 * other in a loop. Imports are its `crate::<file>` paths in code (comments and literals blanked); lib.rs, which
 * declares them all, sits above them.
 */
function checkBinding() {
  const dir = join(ROOT, 'crates/gust-napi/src')
  const graph = new Map()
  let count = 0
  for (const file of walk(dir, '.rs')) {
    const name = relative(dir, file).replace(/\.rs$/, '')
    if (name === 'lib') continue
    const code = cleanRust(readFileSync(file, 'utf8'))
    const imports = new Map()
    for (const m of code.matchAll(/\bcrate\s*::\s*([a-z_][a-z0-9_]*)/g)) {
      if (m[1] === name || !existsSync(join(dir, `${m[1]}.rs`))) continue
      count++
      if (!imports.has(m[1])) imports.set(m[1], `crates/gust-napi/src/${name}.rs:${code.slice(0, m.index).split('\n').length}`)
    }
    graph.set(name, imports)
  }
  const problems = cycles(graph).map(
    (cycle) => `crates/gust-napi/src: files import each other in a loop: ${cycle.map((m, i) => `${m} → ${cycle[(i + 1) % cycle.length]} (${graph.get(m).get(cycle[(i + 1) % cycle.length])})`).join(', ')}`,
  )
  return { problems, count }
}

/** The most lines a hand-written source file may have; a longer one holds more than one idea. */
const MAX_LINES = 500

/** Hand-written Rust files of crates/ and TypeScript files of the package over `MAX_LINES` (generated ones say so on their first lines). */
function checkSizes() {
  const problems = []
  const files = [...walk(join(ROOT, 'crates'), '.rs'), ...walk(PACKAGE, '.ts')].filter((f) => !f.includes('/target/'))
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    if (/generated/i.test(text.split('\n', 3).join('\n'))) continue
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
    if (lines > MAX_LINES) problems.push(`${relative(ROOT, file)}: ${lines} lines, over ${MAX_LINES}: split it along its ideas`)
  }
  return { problems, count: files.length }
}

const rust = checkRust()
const ts = checkTypeScript()
const binding = checkBinding()
const sizes = checkSizes()
const problems = [...rust.problems, ...binding.problems, ...ts.problems, ...sizes.problems]
if (verbose || problems.length) {
  for (const p of problems) console.error(p)
}
if (problems.length) {
  console.error(`\n${problems.length} problem(s): a lower layer or floor must not import a higher one, nothing may import in a loop, and no hand-written file may pass ${MAX_LINES} lines (see crates/gust-core/README.md and packages/gust/src/README.md).`)
  process.exit(1)
}
console.log(`layers: ok (${rust.count} imports between rooms of the Rust core in ${LAYERS.length} layers, ${binding.count} between the binding's files, ${ts.count} relative imports in the TypeScript package on ${FLOORS.length} floors, no loop, ${sizes.count} files within ${MAX_LINES} lines)`)
