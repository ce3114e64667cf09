// Compiled by `tsc -p examples/json-api`, never run: what the typed client lets through and what it refuses.
// Each `@ts-expect-error` fails the compile if the line below it type-checks, so a client that lost its types
// fails `make test-examples`.
import { client } from 'gust/client'

import type { App } from './app.ts'

const api = client<App>('http://127.0.0.1:3000')

export async function accepted(): Promise<string> {
  const res = await api.get('/books/:id', { params: { id: 1 } })
  if (res.status === 200) {
    const book = await res.json()
    const year: number | undefined = book.year
    return `${book.title} (${year ?? '?'})`
  }
  if (res.status === 404) return (await res.json()).error
  // A failed validation: its body is typed.
  if (res.status === 400) {
    const failure = await res.json()
    return failure.issues.map((i) => i.message).join('; ')
  }
  // Any other error status (thrown, from middleware or routing) has a body the types cannot know.
  const other: unknown = await res.json()
  return `HTTP ${res.status}: ${JSON.stringify(other)}`
}

export async function refused(): Promise<void> {
  // @ts-expect-error: no such route
  await api.get('/bookz')
  // @ts-expect-error: GET /books/:id needs its id
  await api.get('/books/:id')
  // @ts-expect-error: `author` is required by BookInput
  await api.post('/books', { json: { title: 'Untitled' } })
  // @ts-expect-error: `year` is a number
  await api.post('/books', { json: { title: 'Dune', author: 'Frank Herbert', year: '1965' } })
  // @ts-expect-error: `limit` is a number or its digits, not a boolean
  await api.get('/books', { query: { limit: true } })
  // @ts-expect-error: there is no PUT route
  await api.put('/books/:id', { params: { id: 1 } })
  const res = await api.get('/books/:id', { params: { id: 1 } })
  if (res.status === 200) {
    // @ts-expect-error: a book's title is a string
    const title: number = (await res.json()).title
    void title
  }
}
