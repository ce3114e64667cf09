import assert from 'node:assert/strict'

import { Gust } from 'gust'

import { describe, runtime, test } from './framework.js'
import { serve } from './support.js'

const who = new Gust().get('/who', (c) =>
  c.json({ ip: c.req.ip, peer: c.req.remoteAddress, protocol: c.req.protocol, host: c.req.host, url: c.req.url }),
)

async function ask(base: string, headers: Record<string, string>) {
  return (await (await fetch(`${base}/who`, { headers })).json()) as Record<string, string>
}

describe(`trustProxy (${runtime})`, () => {
  test('by default forwarding headers are ignored: any client can send them', async () => {
    await serve(who, async (base) => {
      const port = new URL(base).port
      const got = await ask(base, { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' })
      assert.deepEqual(got, { ip: '127.0.0.1', peer: '127.0.0.1', protocol: 'http', host: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}/who` })
    })
  })

  test('a trusted peer sets ip, protocol, host and url; trusted hops in the chain are skipped', async () => {
    await serve(
      who,
      async (base) => {
        const got = await ask(base, {
          'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.0.0.2',
          'x-forwarded-proto': 'https, http',
          'x-forwarded-host': 'app.example',
        })
        assert.deepEqual(got, {
          ip: '203.0.113.9',
          peer: '127.0.0.1',
          protocol: 'https',
          host: 'app.example',
          url: 'https://app.example/who',
        })
      },
      { trustProxy: ['loopback', '10.0.0.0/8'] },
    )
  })

  test('Forwarded (RFC 7239) wins over X-Forwarded-*, with quoted IPv6 and ports', async () => {
    await serve(
      who,
      async (base) => {
        const got = await ask(base, {
          forwarded: 'for="[2001:db8::1]:4711";proto=https;host=a.example, for=127.0.0.1',
          'x-forwarded-for': '198.51.100.1',
        })
        assert.equal(got.ip, '2001:db8::1')
        assert.equal(got.protocol, 'https')
        assert.equal(got.host, 'a.example')
      },
      { trustProxy: true },
    )
  })

  test('an untrusted peer is not believed, whatever the list says; functions decide per address', async () => {
    await serve(
      who,
      async (base) => {
        const got = await ask(base, { 'x-forwarded-for': '203.0.113.9' })
        assert.equal(got.ip, '127.0.0.1')
      },
      { trustProxy: '10.0.0.0/8, fc00::/7' },
    )
    await serve(
      who,
      async (base) => {
        assert.equal((await ask(base, { 'x-forwarded-for': '203.0.113.9' })).ip, '203.0.113.9')
      },
      { trustProxy: (ip) => ip === '127.0.0.1' },
    )
  })

  test('bad trustProxy values are rejected naming the mistake', async () => {
    await assert.rejects(new Gust().listen({ port: 0, trustProxy: ['10.0.0.0/33'] }), /trustProxy: "10\.0\.0\.0\/33" is not an IP address/)
    await assert.rejects(new Gust().listen({ port: 0, trustProxy: ['nowhere'] }), /trustProxy: "nowhere"/)
    await assert.rejects(new Gust().listen({ port: 0, trustProxy: 5 as never }), /trustProxy must be a boolean/)
  })
})

describe(`trustProxy in process (${runtime})`, () => {
  test("app.request() while listening goes through the server's trustProxy, from 127.0.0.1", async () => {
    await serve(
      who,
      async () => {
        const got = (await (await who.request('/who', { headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' } })).json()) as Record<string, string>
        assert.equal(got.ip, '203.0.113.7')
        assert.equal(got.peer, '127.0.0.1')
        assert.equal(got.protocol, 'https')
      },
      { trustProxy: 'loopback' },
    )
    // Not listening: the defaults, which trust no proxy.
    const plain = (await (await who.request('/who', { headers: { 'x-forwarded-for': '203.0.113.7' } })).json()) as Record<string, string>
    assert.equal(plain.ip, '127.0.0.1')
  })
})
