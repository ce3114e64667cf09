/**
 * The documentation pages `openapiDocs()` can serve: Scalar's API reference or Swagger UI, each loaded from its
 * CDN or from its npm package when the app has installed it. Nothing of either is bundled in Gust.
 * @module
 */
import { builtin } from '../builtins.js'

export type DocsUI = 'scalar' | 'swagger-ui'

interface UI {
  /** The npm package whose files the page loads. */
  package: string
  /** What the package must provide: served name → path inside the package, and its content type. */
  files: Record<string, { path: string; type: string }>
  /** The package on jsDelivr (the same paths below it), pinned to the major version the page code below fits. */
  cdn: string
}

const UIS: Record<DocsUI, UI> = {
  scalar: {
    package: '@scalar/api-reference',
    files: { 'scalar.js': { path: 'dist/browser/standalone.js', type: 'text/javascript; charset=utf-8' } },
    cdn: 'https://cdn.jsdelivr.net/npm/@scalar/api-reference@1/',
  },
  'swagger-ui': {
    package: 'swagger-ui-dist',
    files: {
      'swagger-ui-bundle.js': { path: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
      'swagger-ui.css': { path: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
    },
    cdn: 'https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/',
  },
}

/**
 * The UI's files in the app's own `node_modules` (looked up from `from` towards the root, as Node resolves
 * packages), by the names the page asks for. Read from there by the engine on each request, never copied.
 */
export function localFiles(ui: DocsUI, from: string): Record<string, { file: string; type: string }> {
  const { existsSync } = builtin('node:fs')
  const path = builtin('node:path')
  const { package: name, files } = UIS[ui]
  let dir = path.resolve(from)
  let root: string | undefined
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name)
    if (existsSync(path.join(candidate, 'package.json'))) {
      root = candidate
      break
    }
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  if (root === undefined) {
    throw new Error(
      `openapiDocs(): assets "local" serves ${ui} from its npm package, and ${name} is not installed in ${path.resolve(from)} or above: run \`npm install ${name}\` (or bun add), or use assets "cdn"`,
    )
  }
  const out: Record<string, { file: string; type: string }> = {}
  for (const [served, { path: inner, type }] of Object.entries(files)) {
    const file = path.join(root, inner)
    if (!existsSync(file)) throw new Error(`openapiDocs(): ${root} has no ${inner}; install a version of ${name} that does (${UIS[ui].cdn})`)
    out[served] = { file, type }
  }
  return out
}

/** `JSON.stringify` safe inside a `<script>`: no `</script>` or `<!--` can close or open anything. */
const scriptJSON = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')
const escapeHTML = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)

/**
 * The page: `base` is where it is served (its files and the document sit below it), `config` the UI's own
 * options, passed through (Scalar's `createApiReference` configuration, or Swagger UI's).
 */
export function page(ui: DocsUI, local: boolean, base: string, title: string, config: Record<string, unknown>): string {
  const { cdn, files } = UIS[ui]
  const src = (name: string) => escapeHTML(local ? `${base}/${name}` : `${cdn}${files[name]!.path}`)
  const head = `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHTML(title)}</title>\n`
  const url = `${base}/openapi.json`
  if (ui === 'scalar') {
    // Offline (local files), Scalar's default fonts would be fetched from its servers: the system's are used.
    // Telemetry is Scalar's default; an app's own docs page does not report on its readers unless it says so.
    const options = { url, telemetry: false, ...(local ? { withDefaultFonts: false } : {}), ...config }
    return `${head}</head>\n<body>\n<div id="app"></div>\n<script src="${src('scalar.js')}"></script>\n<script>Scalar.createApiReference('#app', ${scriptJSON(options)})</script>\n</body>\n</html>\n`
  }
  const options = { url, dom_id: '#swagger-ui', deepLinking: true, ...config }
  return `${head}<link rel="stylesheet" href="${src('swagger-ui.css')}">\n</head>\n<body>\n<div id="swagger-ui"></div>\n<script src="${src('swagger-ui-bundle.js')}"></script>\n<script>window.ui = SwaggerUIBundle(${scriptJSON(options)})</script>\n</body>\n</html>\n`
}
