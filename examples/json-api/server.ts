// `node examples/json-api/server.ts` (Node 22.18+, which runs TypeScript by stripping types) or
// `bun examples/json-api/server.ts`. The API of app.ts, with its OpenAPI document and a documentation page.
import { openapiDocs } from 'gust'

import { app } from './app.ts'

// GET /docs: a documentation page (Scalar); GET /docs/openapi.json: the OpenAPI 3.1 document, built from the
// routes' `validate` schemas and `openapi` options on the first request. Its own routes are not in it.
app.route('/docs', openapiDocs(app, { info: { title: 'Bookshelf', version: '1.0.0', description: 'The json-api example of Gust.' } }))

const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`Bookshelf API at ${server.url}
  docs:    ${server.url}/docs
  OpenAPI: ${server.url}/docs/openapi.json
  client:  node examples/json-api/client.ts ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
