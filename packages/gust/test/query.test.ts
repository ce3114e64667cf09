import assert from 'node:assert/strict'

import { parseQuery } from '../src/query.js'

import { describe, runtime, test } from './framework.js'

function viaURLSearchParams(query: string): string[] {
  const out: string[] = []
  for (const [k, v] of new URLSearchParams(query)) out.push(k, v)
  return out
}

describe(`query parsing (${runtime})`, () => {
  test('agrees with URLSearchParams, malformed escapes included', () => {
    const cases = [
      '',
      'a=1',
      'a=1&b=2&a=3',
      'name=a%20b&x=y+z',
      'flag&=v&&k=&=&a==b',
      'plus=%2B&amp=%26&eq=%3D',
      'utf8=%C3%A9t%C3%A9&emoji=%F0%9F%98%80',
      'bad=%zz&half=%4&end=%',
      'invalid-utf8=%FF%FE&ok=1',
      'k%20ey=v%20al&%E2%82%AC=euro',
      'a=1&&&b=2&',
      'x=%C3',
      'ünï=çødé&raw=é',
    ]
    for (const q of cases) assert.deepEqual(parseQuery(q), viaURLSearchParams(q), `query ${JSON.stringify(q)}`)
  })
})
