import assert from 'node:assert/strict'

import { compilePattern, mayOverlap } from '../src/path-pattern.js'

import { describe, runtime, test } from './framework.js'

/** Request paths a route answers: each param and wildcard filled with values that include the patterns' words. */
function pathsOf(route: string): string[] {
  const values = ['admin', 'users', 'x', '1', 'caf%25', 'a%2Fb']
  let paths = ['']
  for (const segment of route.split('/').slice(1)) {
    const fills = segment.startsWith(':') ? values : segment.startsWith('*') ? ['', ...values, 'admin/users', 'x/y/z'] : [segment]
    paths = paths.flatMap((p) => fills.map((f) => `${p}/${f}`))
  }
  return paths
}

describe(`use() patterns left out of routes they cannot cover (${runtime})`, () => {
  const routes = ['/users/:id', '/users/:id/posts/*', '/admin/:id', '/:org/repos', '/files/*', '/*', '/a/:b/c', '/100%/:x']
  const patterns = ['/admin/*', '/users/*', '/users/:id', '/users/:id/posts', '/:any/repos', '/a/*', '/a/:b/d', '/files', '/100%25/*', '/*']

  test('a pattern is left out only where a literal segment differs before any param or wildcard', () => {
    assert.equal(mayOverlap('/users/:id', '/admin/*'), false)
    assert.equal(mayOverlap('/a/:b/c', '/a/:b/d'), false)
    assert.equal(mayOverlap('/users/:id', '/users/*'), true)
    assert.equal(mayOverlap('/:org/repos', '/admin/*'), true, 'a param may be any literal')
    assert.equal(mayOverlap('/files/*', '/admin/x'), false)
    assert.equal(mayOverlap('/*', '/admin/x'), true)
    assert.equal(mayOverlap('/100%/:x', '/100%25/*'), true, "a route's % matches %25: never ruled out")
  })

  test('whenever it is left out, no path the route answers falls under the pattern', () => {
    let ruledOut = 0
    for (const route of routes) {
      for (const pattern of patterns) {
        if (mayOverlap(route, pattern)) continue
        ruledOut++
        const match = compilePattern(pattern)
        for (const path of pathsOf(route)) assert.equal(match(path), false, `${pattern} matches ${path}, a path of ${route}`)
      }
    }
    assert.ok(ruledOut >= 20, `${ruledOut} pairs ruled out`)
  })
})
