import assert from 'node:assert/strict'

import {
  type CookieOptions,
  deleteCookie,
  getCookie,
  getSignedCookie,
  Gust,
  parseCookies,
  serializeCookie,
  setCookie,
  setSignedCookie,
} from 'gust'
import { parseSigned, serializeSigned } from 'hono/utils/cookie'

import { describe, runtime, test } from './framework.js'
import { bothWays, captureErrors, raw } from './support.js'

const DAY = 24 * 60 * 60
const SECRET = 'a secret long enough to mean it'

/** A parsed record as a plain object, so `deepEqual` compares entries and not prototypes. */
const plain = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r))

/** The `name=value` part of a `Set-Cookie` line: what a browser sends back. */
const pair = (setCookie: string) => setCookie.slice(0, setCookie.indexOf(';') === -1 ? undefined : setCookie.indexOf(';'))

describe(`cookies: parsing (${runtime})`, () => {
  test('pairs split on ; with or without spaces, and a value may contain =', () => {
    assert.deepEqual(plain(parseCookies('a=1;b=2 ;  c = 3 ; d=x=y')), { a: '1', b: '2', c: '3', d: 'x=y' })
    assert.deepEqual(plain(parseCookies('')), {})
  })

  test('double quotes around a value are removed, an unbalanced one is kept', () => {
    assert.deepEqual(plain(parseCookies('a="x y"; b=""; c="open; d=close"')), { a: 'x y', b: '', c: '"open', d: 'close"' })
  })

  test('the first of a repeated name wins, as browsers send the most specific cookie first', () => {
    assert.deepEqual(plain(parseCookies('id=deep; other=1; id=shallow')), { id: 'deep', other: '1' })
  })

  test('values are percent-decoded; one that is not valid percent-encoding stays as sent', () => {
    assert.deepEqual(plain(parseCookies('a=%E2%9C%93%20ok; b=%zz; c=100%; d=%E2%9C')), {
      a: '✓ ok',
      b: '%zz',
      c: '100%',
      d: '%E2%9C',
    })
  })

  test('pairs without = or with an empty or non-token name are skipped', () => {
    assert.deepEqual(plain(parseCookies('flag; =v; a b=1; "q"=2; x,y=3; ;; ok=1')), { ok: '1' })
  })

  test('__proto__ and constructor are ordinary names, and absent names inherit nothing', () => {
    const jar = parseCookies('__proto__=x; constructor=y')
    assert.equal(jar['__proto__'], 'x')
    assert.equal(jar['constructor'], 'y')
    assert.deepEqual(Object.keys(jar), ['__proto__', 'constructor'])
    assert.equal(({} as Record<string, unknown>).x, undefined)
    const empty = parseCookies('a=1')
    assert.equal(empty['toString'], undefined)
    assert.equal(empty['__proto__'], undefined)
    assert.equal(empty['hasOwnProperty'], undefined)
  })
})

describe(`cookies: serializing (${runtime})`, () => {
  test('every attribute is written, in order, with canonical casing', () => {
    const expires = new Date(Date.now() + 3600_000)
    const line = serializeCookie('sid', 'v w;é', {
      maxAge: 60,
      domain: 'example.com',
      path: '/app',
      expires,
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      priority: 'High',
      partitioned: true,
    })
    assert.equal(
      line,
      `sid=v%20w%3B%C3%A9; Max-Age=60; Domain=example.com; Path=/app; Expires=${expires.toUTCString()}; HttpOnly; Secure; SameSite=Lax; Priority=High; Partitioned`,
    )
  })

  test('no options gives name=value only; letter case of sameSite and priority is normalized', () => {
    assert.equal(serializeCookie('a', 'b'), 'a=b')
    assert.equal(serializeCookie('a', ''), 'a=')
    assert.equal(serializeCookie('a', 'b', { sameSite: 'strict', priority: 'low' }), 'a=b; SameSite=Strict; Priority=Low')
    assert.equal(serializeCookie('a', 'b', { sameSite: 'None', secure: true }), 'a=b; Secure; SameSite=None')
    assert.equal(serializeCookie('a', 'b', { httpOnly: false, secure: false, partitioned: false }), 'a=b')
  })

  test('the lifetime limits are inclusive: Max-Age 0 and exactly 400 days are accepted', () => {
    assert.equal(serializeCookie('a', 'b', { maxAge: 0 }), 'a=b; Max-Age=0')
    assert.equal(serializeCookie('a', 'b', { maxAge: 400 * DAY }), `a=b; Max-Age=${400 * DAY}`)
    const soon = new Date(Date.now() + 399 * DAY * 1000)
    assert.equal(serializeCookie('a', 'b', { expires: soon }), `a=b; Expires=${soon.toUTCString()}`)
    assert.equal(serializeCookie('a', 'b', { expires: new Date(0) }), 'a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT')
  })

  test('every mistake throws, naming the cookie and what is wrong', () => {
    const cases: [name: string, value: string, options: CookieOptions, error: typeof TypeError, message: RegExp][] = [
      ['a b', 'v', {}, TypeError, /Invalid cookie name "a b": a name is a token/],
      ['', 'v', {}, TypeError, /Invalid cookie name ""/],
      ['a=b', 'v', {}, TypeError, /Invalid cookie name "a=b"/],
      ['a;b', 'v', {}, TypeError, /Invalid cookie name "a;b"/],
      ['café', 'v', {}, TypeError, /Invalid cookie name "café"/],
      ['a', '\ud800', {}, TypeError, /Cookie "a": the value is not valid Unicode/],
      ['a', 'v', { maxAge: 1.5 }, TypeError, /Cookie "a": maxAge must be a whole number of seconds, not 1\.5/],
      ['a', 'v', { maxAge: Number.NaN }, TypeError, /Cookie "a": maxAge must be a whole number of seconds, not NaN/],
      ['a', 'v', { maxAge: Infinity }, TypeError, /Cookie "a": maxAge must be a whole number/],
      ['a', 'v', { maxAge: '60' as never }, TypeError, /Cookie "a": maxAge must be a whole number/],
      ['a', 'v', { maxAge: -1 }, RangeError, /Cookie "a": maxAge must not be negative \(-1\); deleteCookie\(\) removes a cookie/],
      ['a', 'v', { maxAge: 400 * DAY + 1 }, RangeError, /Cookie "a": maxAge 34560001 is more than 400 days/],
      ['a', 'v', { expires: new Date(Date.now() + 401 * DAY * 1000) }, RangeError, /Cookie "a": expires .* is more than 400 days ahead/],
      ['a', 'v', { expires: new Date(Number.NaN) }, TypeError, /Cookie "a": expires must be a valid Date/],
      ['a', 'v', { expires: '2030-01-01' as never }, TypeError, /Cookie "a": expires must be a valid Date/],
      ['a', 'v', { path: '/a;b' }, TypeError, /Cookie "a": path "\/a;b" has a character a cookie attribute cannot carry/],
      ['a', 'v', { path: '/a\r\nSet-Cookie: x=1' }, TypeError, /Cookie "a": path .* cannot carry/],
      ['a', 'v', { path: '/\u00e9' }, TypeError, /Cookie "a": path .* cannot carry/],
      ['a', 'v', { path: 'app' }, TypeError, /Cookie "a": path must start with '\/' \(browsers ignore any other\), not "app"/],
      ['a', 'v', { path: '' }, TypeError, /Cookie "a": path must be a non-empty string/],
      ['a', 'v', { domain: 'x.com; HttpOnly' }, TypeError, /Cookie "a": domain "x.com; HttpOnly" has a character/],
      ['a', 'v', { domain: 'x.com\n' }, TypeError, /Cookie "a": domain .* cannot carry/],
      ['a', 'v', { domain: '' }, TypeError, /Cookie "a": domain must be a non-empty string/],
      ['a', 'v', { sameSite: 'Sometimes' as never }, TypeError, /Cookie "a": sameSite must be 'Strict', 'Lax' or 'None', not "Sometimes"/],
      ['a', 'v', { sameSite: 'none' }, TypeError, /Cookie "a": SameSite=None needs secure: true/],
      ['a', 'v', { partitioned: true }, TypeError, /Cookie "a": partitioned needs secure: true/],
      ['a', 'v', { priority: 'Urgent' as never }, TypeError, /Cookie "a": priority must be 'Low', 'Medium' or 'High', not "Urgent"/],
      ['a', 'v', { prefix: 'strict' as never }, TypeError, /Cookie "a": prefix must be 'secure' or 'host', not "strict"/],
    ]
    for (const [name, value, options, error, message] of cases) {
      assert.throws(
        () => serializeCookie(name, value, options),
        (err: unknown) => {
          assert.ok(err instanceof error, `${String(err)} should be a ${error.name}`)
          assert.match((err as Error).message, message)
          return true
        },
        `${JSON.stringify(name)} ${JSON.stringify(options)} should throw`,
      )
    }
  })
})

describe(`cookies: __Secure- and __Host- prefixes (${runtime})`, () => {
  test("prefix: 'secure' names the cookie __Secure- and makes it Secure", () => {
    assert.equal(serializeCookie('id', '1', { prefix: 'secure' }), '__Secure-id=1; Secure')
    assert.equal(serializeCookie('id', '1', { prefix: 'secure', path: '/a', domain: 'x.com' }), '__Secure-id=1; Domain=x.com; Path=/a; Secure')
    assert.throws(() => serializeCookie('id', '1', { prefix: 'secure', secure: false }), /Cookie "__Secure-id": a __Secure- cookie must be Secure/)
  })

  test("prefix: 'host' names the cookie __Host- with Secure and Path=/, and refuses a Domain or another path", () => {
    assert.equal(serializeCookie('id', '1', { prefix: 'host' }), '__Host-id=1; Path=/; Secure')
    assert.equal(serializeCookie('id', '1', { prefix: 'host', path: '/', httpOnly: true }), '__Host-id=1; Path=/; HttpOnly; Secure')
    assert.throws(() => serializeCookie('id', '1', { prefix: 'host', path: '/app' }), /Cookie "__Host-id": a __Host- cookie must have Path=\/, not "\/app"/)
    assert.throws(() => serializeCookie('id', '1', { prefix: 'host', domain: 'x.com' }), /Cookie "__Host-id": a __Host- cookie must not have a Domain/)
    assert.throws(() => serializeCookie('id', '1', { prefix: 'host', secure: false }), /a __Host- cookie must be Secure/)
  })

  test('a name that already carries a prefix must meet its rules, in any letter case', () => {
    assert.throws(() => serializeCookie('__Secure-id', '1'), /Cookie "__Secure-id": a __Secure- cookie must be Secure/)
    assert.equal(serializeCookie('__Secure-id', '1', { secure: true }), '__Secure-id=1; Secure')
    assert.throws(() => serializeCookie('__Host-id', '1', { secure: true }), /a __Host- cookie must have Path=\/, not null/)
    assert.throws(() => serializeCookie('__Host-id', '1', { secure: true, path: '/', domain: 'x.com' }), /must not have a Domain/)
    assert.equal(serializeCookie('__Host-id', '1', { secure: true, path: '/' }), '__Host-id=1; Path=/; Secure')
    assert.throws(() => serializeCookie('__host-id', '1', { secure: true }), /Cookie "__host-id": a __Host- cookie must have Path=\//)
    assert.throws(() => serializeCookie('__SECURE-id', '1'), /a __Secure- cookie must be Secure/)
  })
})

bothWays((s) => {
  describe(`cookies: on a context (${runtime}, ${s.mode})`, () => {
    test('several cookies go out as several Set-Cookie lines, from the handler and from middleware after next()', async () => {
      const app = new Gust()
        .use(async (c, next) => {
          await next()
          setCookie(c, 'after', '1')
        })
        .get('/text', (c) => {
          setCookie(c, 'a', '1')
          setCookie(c, 'b', 'two words', { httpOnly: true, maxAge: 60 })
          setCookie(c, 't', 'x', { prefix: 'host' })
          return 'ok'
        })
        .get('/json', (c) => {
          setCookie(c, 'theme', 'dark', { path: '/json', sameSite: 'Strict' })
          return c.json({ ok: true })
        })
      await s.serve(app, async (base) => {
        const text = await s.fetch(`${base}/text`)
        assert.equal(await text.text(), 'ok')
        assert.deepEqual(text.headers.getSetCookie(), [
          'a=1; Path=/',
          'b=two%20words; Max-Age=60; Path=/; HttpOnly',
          '__Host-t=x; Path=/; Secure',
          'after=1; Path=/',
        ])
        const json = await s.fetch(`${base}/json`)
        assert.deepEqual(await json.json(), { ok: true })
        assert.deepEqual(json.headers.getSetCookie(), ['theme=dark; Path=/json; SameSite=Strict', 'after=1; Path=/'])
      })
    })

    test('getCookie reads one cookie, a prefixed one, or all; repeated cookie header lines are read together', async () => {
      const app = new Gust().get('/', (c) =>
        c.json({
          all: getCookie(c),
          a: getCookie(c, 'a') ?? null,
          b: getCookie(c, 'b') ?? null,
          host: getCookie(c, 't', 'host') ?? null,
          secure: getCookie(c, 's', 'secure') ?? null,
          missing: getCookie(c, 'missing') ?? null,
          req: c.req.cookie('a') ?? null,
        }),
      )
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/`, { headers: { cookie: 'a=1; b=two%20words; __Host-t=x; __Secure-s=y' } })
        assert.deepEqual(await res.json(), {
          all: { a: '1', b: 'two words', '__Host-t': 'x', '__Secure-s': 'y' },
          a: '1',
          b: 'two words',
          host: 'x',
          secure: 'y',
          missing: null,
          req: '1',
        })
        if (s.mode === 'socket') {
          // Two cookie lines, which fetch would join: only a raw socket sends them apart.
          const lines = await raw(base, 'GET / HTTP/1.1\r\nhost: x\r\ncookie: a=1\r\ncookie: b=2; a=shadowed\r\n\r\n')
          const body = JSON.parse(lines.responses[0]!.body.toString())
          assert.deepEqual(body.all, { a: '1', b: '2' })
        }
        const none = await s.fetch(`${base}/`)
        assert.deepEqual(((await none.json()) as { all: object }).all, {})
      })
    })

    test('deleteCookie expires the cookie with the same path, domain and prefix, and returns the value it had', async () => {
      const app = new Gust().get('/', (c) =>
        c.json({
          a: deleteCookie(c, 'a') ?? null,
          scoped: deleteCookie(c, 'scoped', { path: '/app', domain: 'example.com', secure: true }) ?? null,
          host: deleteCookie(c, 't', { prefix: 'host' }) ?? null,
        }),
      )
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/`, { headers: { cookie: 'a=1; __Host-t=x' } })
        assert.deepEqual(await res.json(), { a: '1', scoped: null, host: 'x' })
        const epoch = 'Expires=Thu, 01 Jan 1970 00:00:00 GMT'
        assert.deepEqual(res.headers.getSetCookie(), [
          `a=; Max-Age=0; Path=/; ${epoch}`,
          `scoped=; Max-Age=0; Domain=example.com; Path=/app; ${epoch}; Secure`,
          `__Host-t=; Max-Age=0; Path=/; ${epoch}; Secure`,
        ])
      })
    })

    test('an invalid cookie set in a handler answers 500 and the error names the cookie', async () => {
      const app = new Gust().get('/', (c) => {
        setCookie(c, 'session', 'x', { sameSite: 'None' })
        return 'unreachable'
      })
      let status = 0
      const logged = await captureErrors(() => s.serve(app, async (base) => void (status = (await s.fetch(`${base}/`)).status)))
      assert.equal(status, 500)
      assert.ok(logged.some((l) => l.includes('Cookie "session": SameSite=None needs secure: true')), logged.join('\n'))
    })
  })

  describe(`cookies: signed (${runtime}, ${s.mode})`, () => {
    const app = new Gust()
      .get('/sign', (c) => {
        setSignedCookie(c, 'user', 'café 42.x', SECRET, { httpOnly: true })
        setSignedCookie(c, 'empty', '', SECRET)
        setSignedCookie(c, 'bytes', 'b', new TextEncoder().encode(SECRET), { prefix: 'secure' })
        return 'ok'
      })
      .get('/read', (c) =>
        c.json({
          user: getSignedCookie(c, SECRET, 'user') ?? null,
          empty: getSignedCookie(c, SECRET, 'empty') ?? null,
          bytes: getSignedCookie(c, new TextEncoder().encode(SECRET), 'bytes', 'secure') ?? null,
          wrongSecret: getSignedCookie(c, 'another secret', 'user') ?? null,
          absent: getSignedCookie(c, SECRET, 'absent') === undefined,
          all: getSignedCookie(c, SECRET),
        }),
      )
    type Read = { user: string | false | null; all: Record<string, string | false> } & Record<string, unknown>
    const read = async (base: string, cookie: string) =>
      (await (await s.fetch(`${base}/read`, { headers: { cookie } })).json()) as Read
    const signed = async (base: string) => (await s.fetch(`${base}/sign`)).headers.getSetCookie()

    test('a signed cookie reads back as its value; a wrong secret gives false; an absent one undefined', async () => {
      await s.serve(app, async (base) => {
        const lines = await signed(base)
        assert.equal(lines.length, 3)
        assert.match(lines[0]!, /^user=caf%C3%A9%2042\.x\.[A-Za-z0-9%]{44,}; Path=\/; HttpOnly$/)
        assert.match(lines[2]!, /^__Secure-bytes=b\.[A-Za-z0-9%]+; Path=\/; Secure$/)
        const body = await read(base, lines.map(pair).join('; '))
        assert.deepEqual(body, {
          user: 'café 42.x',
          empty: '',
          bytes: 'b',
          wrongSecret: false,
          absent: true,
          // The bytes secret is the string's UTF-8, the same key, so the third cookie verifies with it too.
          all: { user: 'café 42.x', empty: '', '__Secure-bytes': 'b' },
        })
      })
    })

    test('a changed value, a changed or missing signature, or an unsigned cookie gives false', async () => {
      await s.serve(app, async (base) => {
        const user = pair((await signed(base))[0]!)
        const tampered = user.replace('42', '43')
        assert.notEqual(tampered, user)
        assert.equal((await read(base, tampered)).user, false)
        const sig = decodeURIComponent(user).slice(-44)
        const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`
        assert.equal((await read(base, `user=admin.${encodeURIComponent(flipped)}`)).user, false)
        assert.equal((await read(base, `user=${encodeURIComponent(`café 42.x.${sig.slice(0, 43)}`)}`)).user, false)
        assert.equal((await read(base, `user=${encodeURIComponent('café 42.x')}`)).user, false)
        assert.equal((await read(base, 'user=')).user, false)
        assert.equal((await read(base, `user=${encodeURIComponent(`x.${'é'.repeat(43)}=`)}`)).user, false)
      })
    })

    test('reading all signed cookies verifies each and leaves unsigned ones out', async () => {
      await s.serve(app, async (base) => {
        const user = pair((await signed(base))[0]!)
        const forged = `forged=${encodeURIComponent(`root.${'A'.repeat(43)}=`)}`
        const body = await read(base, `${user}; plain=1; ${forged}; __proto__=x`)
        assert.deepEqual(body.all, { user: 'café 42.x', forged: false })
      })
    })

    test("the format is Hono's: cookies signed by either read back in the other", async () => {
      await s.serve(app, async (base) => {
        const fromHono = await serializeSigned('user', 'café 42.x', SECRET, { path: '/' })
        assert.equal((await read(base, pair(fromHono))).user, 'café 42.x')
        const fromGust = pair((await signed(base))[0]!)
        assert.deepEqual(plain(await parseSigned(fromGust, SECRET)), { user: 'café 42.x' })
        assert.deepEqual(plain(await parseSigned(fromGust, 'another secret')), { user: false })
      })
    })

    test('an empty secret or one of another type is refused', async () => {
      const bad = new Gust()
        .get('/set', (c) => void setSignedCookie(c, 'a', 'b', ''))
        .get('/get', (c) => String(getSignedCookie(c, new Uint8Array(0), 'a')))
        .get('/type', (c) => String(getSignedCookie(c, 42 as never, 'a')))
      const statuses: number[] = []
      const logged = await captureErrors(() =>
        s.serve(bad, async (base) => {
          for (const path of ['/set', '/get', '/type']) statuses.push((await s.fetch(`${base}${path}`)).status)
        }),
      )
      assert.deepEqual(statuses, [500, 500, 500])
      assert.ok(logged.some((l) => l.includes('A cookie secret must not be empty')), logged.join('\n'))
      assert.ok(logged.some((l) => l.includes('A cookie secret must be a string or a Uint8Array, not number')), logged.join('\n'))
    })
  })
})
