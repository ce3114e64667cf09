// The typed client at work: `node examples/json-api/client.ts http://127.0.0.1:3000` (or `bun …`) against a
// running server.ts. Every path, parameter, query, body and answer below is typed from `App` alone: no code
// generation, and nothing of the server is bundled (the import of app.ts is a type import, erased at run time).
import { client } from 'gust/client'

import type { App } from './app.ts'

const api = client<App>(process.argv[2] ?? 'http://127.0.0.1:3000')
/** One line of the transcript the test reads. */
const say = (step: string, value: unknown) => console.log(JSON.stringify({ step, value }))

// A body the schema refuses: the 400 is typed as Gust's validation failure.
const refused = await api.post('/books', { json: { title: '', author: 'Nobody', tags: ['Not A Tag'] } })
if (refused.status === 400) {
  const failure = await refused.json()
  say('refused', { target: failure.target, paths: failure.issues.map((i) => i.path.join('.')) })
}

const created = await api.post('/books', { json: { title: 'Dune', author: 'Frank Herbert', year: 1965, tags: ['sf'] } })
if (created.status !== 201) throw new Error(`POST /books answered ${created.status}`)
const dune = await created.json() // typed: { id: number, title: string, … }
say('created', { id: dune.id, title: dune.title, tags: dune.tags, location: created.headers.get('location') })

await api.post('/books', { json: { title: 'Emma', author: 'Jane Austen', year: 1815 } })

const list = await api.get('/books', { query: { author: 'Frank Herbert', limit: 10 } })
if (list.status === 200) {
  const { total, books } = await list.json()
  say('listed', { total, titles: books.map((b) => b.title) })
}

const changed = await api.patch('/books/:id', { params: { id: dune.id }, json: { year: 1966 } })
if (changed.status === 200) say('changed', { year: (await changed.json()).year })

const gone = await api.delete('/books/:id', { params: { id: dune.id } })
say('deleted', { status: gone.status })

// Checking the status narrows the body: 404 is `{ error }`, 200 a book.
const again = await api.get('/books/:id', { params: { id: dune.id } })
if (again.status === 404) say('missing', (await again.json()).error)
else if (again.status === 200) say('found', (await again.json()).title)
