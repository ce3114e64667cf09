/**
 * `openapiDocs(app, options)`: a small app to mount where the document and its page should be served.
 * @module
 */
import { coreOf, Gust } from '../gust.js'
import { openapi } from './document.js'
import { checkOptions } from './options.js'
import type { OpenAPIOptions } from './types.js'
import { type DocsUI, localFiles, page } from './ui.js'

/**
 * Options of `openapiDocs()`: those of `openapi()`, and how to serve the page.
 * @example
 * openapiDocs(app, { info: { title: 'Shop', version: '1.0.0' }, ui: 'swagger-ui', assets: 'local', uiConfig: { docExpansion: 'none' } })
 */
export interface OpenAPIDocsOptions extends OpenAPIOptions {
  /** The documentation page at the mount point: `'scalar'` (default), `'swagger-ui'`, or `false` for none. */
  ui?: DocsUI | false
  /**
   * Where the page loads the UI from: `'cdn'` (default; jsDelivr, pinned to a major version) or `'local'`: the
   * UI's npm package (`@scalar/api-reference` or `swagger-ui-dist`), which the app installs, served from its
   * `node_modules` so the page works offline. A missing package is an `Error` when `openapiDocs()` is called.
   */
  assets?: 'cdn' | 'local'
  /** The directory from which `node_modules` is looked up for `'local'` assets (default: the working directory). */
  resolveFrom?: string
  /** The UI's own options, passed through: Scalar's `createApiReference` configuration, or Swagger UI's. */
  uiConfig?: Record<string, unknown>
}

/** The routes of the docs app are not part of the API they document. */
const HIDDEN = { openapi: { hidden: true } }

/**
 * A Gust app serving `app`'s OpenAPI document at `/openapi.json` and, unless `ui` is `false`, a documentation
 * page (Scalar or Swagger UI) at `/`, both below wherever it is mounted with `app.route()`. The document is built
 * on the first request and kept until routes are added, so routes added after mounting, before or while serving,
 * are in it; its own routes are not. Middleware on the mount path (`app.use('/docs/*', auth)`) guards it as any
 * other route. A schema that cannot be converted fails that first request with the `openapi()` error (500):
 * call `openapi()` in a test to catch it before deploying.
 * @example
 * app.route('/docs', openapiDocs(app, { info: { title: 'Shop', version: '1.0.0' } }))
 * // GET /docs: the Scalar page; GET /docs/openapi.json: the document
 * app.route('/docs', openapiDocs(app, { info, ui: 'swagger-ui', assets: 'local' })) // swagger-ui-dist from node_modules
 */
export function openapiDocs(app: Gust<any, any>, options: OpenAPIDocsOptions): Gust {
  const core = coreOf(app)
  if (typeof options !== 'object' || options === null) throw new TypeError('openapiDocs() takes (app, options) with options { info }')
  const { ui = 'scalar', assets = 'cdn', resolveFrom = process.cwd(), uiConfig = {}, ...docOptions } = options
  checkOptions(docOptions, 'openapiDocs()', ['ui', 'assets', 'resolveFrom', 'uiConfig'])
  if (ui !== false && ui !== 'scalar' && ui !== 'swagger-ui') {
    throw new TypeError(`openapiDocs(): option "ui" must be "scalar", "swagger-ui" or false, got ${JSON.stringify(ui)}`)
  }
  if (assets !== 'cdn' && assets !== 'local') throw new TypeError(`openapiDocs(): option "assets" must be "cdn" or "local", got ${JSON.stringify(assets)}`)
  if (typeof resolveFrom !== 'string') throw new TypeError('openapiDocs(): option "resolveFrom" must be a directory path')
  if (typeof uiConfig !== 'object' || uiConfig === null || Array.isArray(uiConfig)) throw new TypeError('openapiDocs(): option "uiConfig" must be an object')

  // Keyed by the number of routes: routes are only ever added, so a new count means a new document.
  let cached: { routes: number; text: string } | undefined
  const text = () => {
    if (cached?.routes !== core.routes.length) cached = { routes: core.routes.length, text: JSON.stringify(openapi(app, docOptions)) }
    return cached.text
  }
  const docs = new Gust()
  docs.get('/openapi.json', (c) => c.body(text(), 200, { 'content-type': 'application/json; charset=utf-8' }), HIDDEN)
  if (ui === false) return docs
  const local = assets === 'local' ? localFiles(ui, resolveFrom) : {}
  // The page names its files and the document from the path it was asked at, wherever it is mounted.
  docs.get('/', (c) => c.html(page(ui, assets === 'local', c.req.path.replace(/\/+$/, ''), docOptions.info.title, uiConfig)), HIDDEN)
  for (const [name, { file, type }] of Object.entries(local)) {
    docs.get(`/${name}`, (c) => c.file(file, { contentType: type, cacheControl: 'public, max-age=3600' }), HIDDEN)
  }
  return docs
}
