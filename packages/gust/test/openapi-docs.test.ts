import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Gust, type OpenAPIDocument, openapiDocs } from 'gust'
import { z } from 'zod'

import { describe, runtime, test } from './framework.js'
import { assertValidDocument, INFO, operations, SECURITY, SHOP_OPERATIONS, shopApp } from './openapi-app.js'
import { serve } from './support.js'

/** The repository's node_modules, where the UI packages are installed as devDependencies. */
const ROOT = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../../..')
const fail = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: Error) => {
    assert.match(err.message, pattern)
    return true
  })

describe(`openapiDocs() over a real socket (${runtime})`, () => {
  test('serves the document and a Scalar page (CDN) below its mount point, with routes added later', async () => {
    const app = shopApp()
    app.route('/docs', openapiDocs(app, { info: INFO, ...SECURITY }))
    app.get('/late', (c) => c.text('added after the docs were mounted'))
    await serve(app, async (base) => {
      const res = await fetch(`${base}/docs/openapi.json`)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
      const doc = (await res.json()) as OpenAPIDocument
      await assertValidDocument(doc)
      // Its own routes are not part of the API it documents.
      assert.deepEqual(operations(doc).sort(), [...SHOP_OPERATIONS, 'GET /late'].sort())
      // Added while serving: the cached document is rebuilt.
      app.get('/later', (c) => c.text('added while serving'))
      const again = (await (await fetch(`${base}/docs/openapi.json`)).json()) as OpenAPIDocument
      assert.ok(operations(again).includes('GET /later'))

      const page = await fetch(`${base}/docs`)
      assert.equal(page.status, 200)
      assert.match(page.headers.get('content-type')!, /^text\/html/)
      const html = await page.text()
      assert.match(html, /<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@1\/dist\/browser\/standalone\.js"><\/script>/)
      assert.match(html, /Scalar\.createApiReference\('#app', \{"url":"\/docs\/openapi\.json","telemetry":false\}\)/)
      assert.match(html, /<title>Shop<\/title>/)
      assert.equal((await fetch(`${base}/docs/scalar.js`)).status, 404, 'nothing served locally in CDN mode')
    })
  })

  test('serves Swagger UI and Scalar from their npm packages (assets: local)', async () => {
    const app = new Gust().get('/hello', 'hi', { openapi: { summary: 'Say hi' } })
    app.route('/swagger', openapiDocs(app, { info: INFO, ui: 'swagger-ui', assets: 'local', uiConfig: { docExpansion: 'full' } }))
    app.route('/scalar', openapiDocs(app, { info: INFO, assets: 'local', resolveFrom: ROOT }))
    await serve(app, async (base) => {
      const swagger = await (await fetch(`${base}/swagger`)).text()
      assert.match(swagger, /<link rel="stylesheet" href="\/swagger\/swagger-ui\.css">/)
      assert.match(swagger, /<script src="\/swagger\/swagger-ui-bundle\.js"><\/script>/)
      assert.match(swagger, /SwaggerUIBundle\(\{"url":"\/swagger\/openapi\.json","dom_id":"#swagger-ui","deepLinking":true,"docExpansion":"full"\}\)/)
      for (const [path, file, type] of [
        ['/swagger/swagger-ui-bundle.js', 'swagger-ui-dist/swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
        ['/swagger/swagger-ui.css', 'swagger-ui-dist/swagger-ui.css', 'text/css; charset=utf-8'],
        ['/scalar/scalar.js', '@scalar/api-reference/dist/browser/standalone.js', 'text/javascript; charset=utf-8'],
      ] as const) {
        const res = await fetch(`${base}${path}`)
        assert.equal(res.status, 200, path)
        assert.equal(res.headers.get('content-type'), type)
        assert.ok(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(ROOT, 'node_modules', file))), `${path} is the package's file`)
      }
      const scalar = await (await fetch(`${base}/scalar`)).text()
      assert.match(scalar, /<script src="\/scalar\/scalar\.js"><\/script>/)
      // Offline: no fonts from Scalar's servers.
      assert.match(scalar, /"withDefaultFonts":false/)
      const doc = (await (await fetch(`${base}/scalar/openapi.json`)).json()) as OpenAPIDocument
      assert.deepEqual(operations(doc), ['GET /hello'])
    })
  })

  test('ui: false serves the document only; middleware on the mount path guards it', async () => {
    const app = new Gust().get('/a', 'a')
    app.use('/docs/*', async (c, next) => (c.req.header('authorization') === 'Bearer t' ? next() : c.text('no', 401)))
    app.route('/docs', openapiDocs(app, { info: INFO, ui: false }))
    await serve(app, async (base) => {
      assert.equal((await fetch(`${base}/docs/openapi.json`)).status, 401)
      const ok = await fetch(`${base}/docs/openapi.json`, { headers: { authorization: 'Bearer t' } })
      assert.deepEqual(operations((await ok.json()) as OpenAPIDocument), ['GET /a'])
      assert.equal((await fetch(`${base}/docs`, { headers: { authorization: 'Bearer t' } })).status, 404)
    })
  })

  test('a schema that cannot be converted fails the document request with the openapi() error', async () => {
    const app = new Gust().get('/events', (c) => c.text('x'), { validate: { query: z.object({ since: z.date() }) } })
    app.route('/docs', openapiDocs(app, { info: INFO }))
    app.onError((err, c) => c.text(err instanceof Error ? err.message : String(err), 500))
    await serve(app, async (base) => {
      const res = await fetch(`${base}/docs/openapi.json`)
      assert.equal(res.status, 500)
      assert.match(await res.text(), /GET \/events, validate\.query \(zod\): its converter failed: Date cannot be represented/)
    })
  })

  test('bad options and a missing UI package are errors when mounting', () => {
    const app = new Gust()
    fail(() => openapiDocs(app, { info: INFO, assets: 'local', resolveFrom: tmpdir() }), /assets "local" serves scalar from its npm package, and @scalar\/api-reference is not installed in .* or above: run `npm install @scalar\/api-reference`/)
    fail(() => openapiDocs(app, { info: INFO, ui: 'swagger-ui', assets: 'local', resolveFrom: tmpdir() }), /swagger-ui-dist is not installed/)
    fail(() => openapiDocs(app, { info: INFO, ui: 'redoc' as never }), /openapiDocs\(\): option "ui" must be "scalar", "swagger-ui" or false, got "redoc"/)
    fail(() => openapiDocs(app, { info: INFO, assets: 'bundled' as never }), /option "assets" must be "cdn" or "local"/)
    fail(() => openapiDocs(app, { info: INFO, uiConfig: [] as never }), /option "uiConfig" must be an object/)
    fail(() => openapiDocs(app, { info: INFO, theme: 'x' } as never), /openapiDocs\(\): unknown option "theme"; known options: .*ui, assets, resolveFrom, uiConfig/)
    fail(() => openapiDocs(app, { info: {} } as never), /openapiDocs\(\): option "info" must be an object with a title and a version/)
    fail(() => openapiDocs({} as never, { info: INFO }), /openapi\(\) documents a Gust app/)
  })
})
