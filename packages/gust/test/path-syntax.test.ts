/**
 * Every TypeScript parser of the route path syntax against one table of cases, the table the engine's route table
 * is tested against too (`crates/gust-core/src/values/golden/path-syntax.json`): use() patterns, OpenAPI
 * templates, the params type and the typed client's path filling. The route table is the authority; where a
 * parser does otherwise, the case says so, and why, under `differs`.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'

import type { ParamKeys } from 'gust'
import { client } from 'gust/client'

import { pathTemplate } from '../src/openapi/path-template.js'
import { compilePattern } from '../src/path-pattern.js'

import { describe, runtime, test } from './framework.js'

/** How one parser differs from the route table on a case. */
interface Differs {
  /** It accepts (or refuses) the pattern, unlike the route table. */
  valid?: boolean
  /** Paths it matches that the route table does not (routing form). */
  matches?: string[]
  /** Paths the route table matches that it does not (routing form). */
  misses?: string[]
  /** For the client: the path it writes, by the path the case's example sends. */
  writes?: Record<string, string>
  why: string
}

interface Case {
  pattern: string
  valid: boolean
  params?: string[]
  openapi?: string
  matches?: { path: string; routed?: string; params: Record<string, string> }[]
  misses?: string[]
  differs?: Partial<Record<'use' | 'openapi' | 'types' | 'client', Differs>>
}

const file = new URL('../../../../crates/gust-core/src/values/golden/path-syntax.json', import.meta.url)
const { cases } = JSON.parse(await readFile(file, 'utf8')) as { cases: Case[] }
const valid = cases.filter((c) => c.valid)

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** A case of the params type: `exact` must be `true`, which compiles only when `ParamKeys<P>` is the names given. */
const typed = <P extends string, N extends string = never>(pattern: P, params: N[], exact: Equal<ParamKeys<P>, N>) => {
  void exact
  return { pattern, params: params as string[] }
}

/** The params type on each valid pattern of the table, in its order (checked against it below). */
const types = [
  typed('/', [], true),
  typed('/users', [], true),
  typed('/users/', [], true),
  typed('/users/:id', ['id'], true),
  typed('/users/:id/', ['id'], true),
  typed('/:id', ['id'], true),
  typed('/users/:id/posts/:post', ['id', 'post'], true),
  typed('/o/:a_b$1', ['a_b$1'], true),
  typed('/files/*', ['*'], true),
  typed('/files/*rest', ['rest'], true),
  typed('/*', ['*'], true),
  typed('/:path/*', ['path', '*'], true),
  typed('/café/:x', ['x'], true),
  typed('/v1/users:batch', [], true),
  typed('/100%/:x', ['x'], true),
  typed('/a{b}', [], true),
]

describe(`every path parser agrees with the shared path-syntax table (${runtime})`, () => {
  test('the table is well formed: examples name only their params, differences name their paths', () => {
    assert.ok(cases.length >= 20, `${cases.length} cases`)
    for (const c of cases) {
      for (const parser of Object.keys(c.differs ?? {})) assert.ok(['use', 'openapi', 'types', 'client'].includes(parser), parser)
      if (!c.valid) {
        assert.deepEqual([c.params, c.matches, c.misses], [undefined, undefined, undefined], c.pattern)
        continue
      }
      for (const m of c.matches!) assert.deepEqual(Object.keys(m.params).sort(), [...c.params!].sort(), `${c.pattern} ${m.path}`)
      const routed = c.matches!.map((m) => m.routed ?? m.path)
      const use = c.differs?.use
      for (const path of use?.misses ?? []) assert.ok(routed.includes(path), `${c.pattern}: ${path} is not among its matches`)
      for (const path of use?.matches ?? []) assert.ok(c.misses!.includes(path), `${c.pattern}: ${path} is not among its misses`)
      for (const path of Object.keys(c.differs?.client?.writes ?? {})) {
        assert.ok(c.matches!.some((m) => m.path === path), `${c.pattern}: ${path} is not among its matches`)
      }
    }
  })

  test('use() patterns: valid and matching as routes are, except where the table says', () => {
    for (const c of cases) {
      const differs = c.differs?.use
      if (!(differs?.valid ?? c.valid)) {
        assert.throws(() => compilePattern(c.pattern), TypeError, `use() should refuse ${JSON.stringify(c.pattern)}`)
        continue
      }
      const match = compilePattern(c.pattern)
      if (!c.valid) continue
      for (const m of c.matches!) {
        const path = m.routed ?? m.path
        assert.equal(match(path), !differs?.misses?.includes(path), `${c.pattern} on ${path}`)
      }
      for (const path of c.misses!) assert.equal(match(path), differs?.matches?.includes(path) ?? false, `${c.pattern} on ${path}`)
    }
  })

  test('OpenAPI templates: each valid pattern becomes its template, with its params in order', () => {
    for (const c of valid) {
      const { template, params } = pathTemplate(c.pattern)
      assert.equal(template, c.openapi, c.pattern)
      assert.deepEqual(params.map((p) => p.key), c.params, c.pattern)
      const wildcard = c.pattern.split('/').at(-1)!.startsWith('*')
      assert.deepEqual(params.map((p) => p.wildcard), c.params!.map((_, i) => wildcard && i === c.params!.length - 1), c.pattern)
      for (const p of params) assert.ok(template.includes(`{${p.name}}`), `${c.pattern}: {${p.name}} in ${template}`)
    }
  })

  test('the params type: each valid pattern gives its params (checked when this file compiles)', () => {
    assert.deepEqual(types, valid.map((c) => ({ pattern: c.pattern, params: c.params })))
  })

  test("the typed client: each example's params fill the pattern into the path it sends", () => {
    const { url } = client('http://localhost') as unknown as {
      url(path: string, options: { params: Record<string, string> }): string
    }
    for (const c of valid) {
      for (const m of c.matches!) {
        const written = new URL(url(c.pattern, { params: m.params })).pathname
        assert.equal(written, c.differs?.client?.writes?.[m.path] ?? m.path, `${c.pattern} with ${JSON.stringify(m.params)}`)
      }
    }
  })
})
