import assert from 'node:assert/strict'
import net from 'node:net'

import { isIP } from '../src/ip.js'
import { describe, runtime, test } from './framework.js'

/** Addresses and near-misses, each checked against the runtime's own `net.isIP`. */
const CASES = [
  '127.0.0.1', '0.0.0.0', '255.255.255.255', '256.0.0.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.04', '1..3.4',
  '1.2.3.4 ', ' 1.2.3.4', '1.2.3.-4', '1.2.3.4e0', '१.२.३.४', '', '.', 'localhost', 'example.com', '1.2.3.x',
  '::', '::1', '1::', '::ffff:127.0.0.1', '::ffff:1.2.3.256', '2001:db8::1', '2001:DB8:0:0:8:800:200C:417A',
  '2001:db8:0:0:8:800:200c:417a:1', '2001:db8:0:0:8:800:200c', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8::',
  '1::2::3', ':::', '1:::2', '12345::', 'g::1', '::1%eth0', 'fe80::1%25eth0', 'fe80::1%', '::1%a b', '[::1]',
  '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '::1.2.3.4', '1::1.2.3.4', '1.2.3.4::', '1:2:3:4:5::1.2.3.4',
  '1:2:3:4:5:6::1.2.3.4', ':1::2', '1::2:', '::1:', ':', '1', '1:2', '0:0:0:0:0:0:0:0', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '::ffff:0:0', '1:2:3:4:5:6:7:8%x', '1.2.3.4%eth0',
]

describe(`isIP agrees with net.isIP (${runtime})`, () => {
  test('on addresses, near-misses and random strings', () => {
    for (const text of CASES) assert.equal(isIP(text), net.isIP(text), JSON.stringify(text))
    // Random strings over the characters addresses are made of.
    const alphabet = '0123456789abcdefABCDEF:.%g'
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    for (let i = 0; i < 20_000; i++) {
      let text = ''
      const length = next() % 24
      for (let j = 0; j < length; j++) text += alphabet[next() % alphabet.length]
      assert.equal(isIP(text), net.isIP(text), JSON.stringify(text))
    }
  })
})
