// The bookshelf API: every input validated with zod through routes' `validate` option, every route documented
// for OpenAPI through its `openapi` option, and its type (`App`) is all the typed client needs. No listen() here:
// server.ts serves it, client.ts and typecheck.ts import its type only.
import { Gust, HTTPException, ValidationError } from 'gust'
import { z } from 'zod'

const Tag = z.string().regex(/^[a-z0-9-]{1,20}$/, 'a tag is 1 to 20 lowercase letters, digits or -')
const fields = {
  title: z.string().trim().min(1).max(200),
  author: z.string().trim().min(1).max(100),
  year: z.number().int().min(1450).max(2100),
  tags: z.array(Tag).max(10),
}

/** What POST /books takes: `year` may be left out, `tags` default to none. */
export const BookInput = z.object({ ...fields, year: fields.year.optional(), tags: fields.tags.default([]) })
/** What PATCH /books/:id takes: any of the fields, at least one. */
export const BookPatch = z
  .object({ title: fields.title.optional(), author: fields.author.optional(), year: fields.year.optional(), tags: fields.tags.optional() })
  .refine((patch) => Object.keys(patch).length > 0, 'send at least one field to change')
/** A stored book, as every answer shows it. */
export const Book = z.object({ id: z.number().int(), ...fields, year: fields.year.optional(), created: z.iso.datetime() })
export type Book = z.infer<typeof Book>
const ErrorBody = z.object({ error: z.string() })

// Path and query strings are coerced; the generic says what a client may send (a number or its digits).
const IdParams = z.object({ id: z.coerce.number<string | number>().int().positive() })
const ListQuery = z.object({
  author: z.string().optional(),
  tag: Tag.optional(),
  limit: z.coerce.number<string | number>().int().min(1).max(100).default(20),
  offset: z.coerce.number<string | number>().int().min(0).default(0),
})

const books = new Map<number, Book>()
let nextId = 1

const notFound = { description: 'No book has that id', schema: ErrorBody }

export const app = new Gust()
  .get('/health', { ok: true }, { openapi: { summary: 'Liveness', tags: ['ops'] } })
  .get(
    '/books',
    (c) => {
      const { author, tag, limit, offset } = c.req.valid('query')
      const found = [...books.values()].filter((b) => (author === undefined || b.author === author) && (tag === undefined || b.tags.includes(tag)))
      return c.json({ total: found.length, books: found.slice(offset, offset + limit) })
    },
    {
      validate: { query: ListQuery },
      openapi: { summary: 'List books', tags: ['books'], responses: { 200: { schema: z.object({ total: z.number().int(), books: z.array(Book) }) } } },
    },
  )
  .post(
    '/books',
    (c) => {
      const book: Book = { id: nextId++, ...c.req.valid('json'), created: new Date().toISOString() }
      books.set(book.id, book)
      c.header('location', `/books/${book.id}`)
      return c.json(book, 201)
    },
    { validate: { json: BookInput }, openapi: { summary: 'Add a book', tags: ['books'], responses: { 201: { schema: Book } } } },
  )
  .get(
    '/books/:id',
    (c) => {
      const book = books.get(c.req.valid('params').id)
      if (book === undefined) return c.json({ error: `no book ${c.params.id}` }, 404)
      return c.json(book)
    },
    { validate: { params: IdParams }, openapi: { summary: 'One book', tags: ['books'], responses: { 200: { schema: Book }, 404: notFound } } },
  )
  .patch(
    '/books/:id',
    (c) => {
      const book = books.get(c.req.valid('params').id)
      if (book === undefined) return c.json({ error: `no book ${c.params.id}` }, 404)
      Object.assign(book, c.req.valid('json'))
      return c.json(book)
    },
    {
      validate: { params: IdParams, json: BookPatch },
      openapi: { summary: 'Change a book', tags: ['books'], responses: { 200: { schema: Book }, 404: notFound } },
    },
  )
  .delete(
    '/books/:id',
    (c) => {
      if (!books.delete(c.req.valid('params').id)) return c.json({ error: `no book ${c.params.id}` }, 404)
      return null
    },
    { validate: { params: IdParams }, openapi: { summary: 'Remove a book', tags: ['books'], responses: { 204: { description: 'Removed' }, 404: notFound } } },
  )
  .onError((err, c) => {
    // A validation failure keeps its shape ({ error, target, issues }): the typed client knows it as a 400.
    if (err instanceof ValidationError) return c.json(err, 400)
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status)
    console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: 'internal error' }, 500)
  })

/** The API's type: `client<App>(url)` reads every route, input and answer from it. */
export type App = typeof app
