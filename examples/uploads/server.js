// File uploads to disk with live progress: `node examples/uploads/server.js` or `bun examples/uploads/server.js`.
// A body is streamed to its file one chunk at a time, so an upload of any size holds a bounded amount of memory;
// its progress is a server-sent event feed the page (or curl) watches while the bytes arrive.
import { randomUUID } from 'node:crypto'
import { mkdir, open, readdir, stat, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Gust, HTTPException, file } from 'gust'

import { safeName } from './safe-name.js'
import { Uploads } from './progress.js'

const DIR = resolve(process.env.UPLOAD_DIR ?? fileURLToPath(new URL('./files/', import.meta.url)))
/** The largest upload accepted, in bytes (1 GiB unless MAX_UPLOAD_BYTES says otherwise). */
const MAX_UPLOAD = Number(process.env.MAX_UPLOAD_BYTES ?? 2 ** 30)
/** At most one progress event per this many milliseconds per watcher, however fast the bytes come. */
const PROGRESS_EVERY = 100
/** An upload id: what the page generates with crypto.randomUUID(), or anything as plain. */
const ID = /^[A-Za-z0-9_-]{8,64}$/

await mkdir(DIR, { recursive: true })
const uploads = new Uploads()

const app = new Gust()
  .get('/', file(fileURLToPath(new URL('./index.html', import.meta.url))))
  // Stored files, served by the engine (ETag, Range, 304): no JavaScript per download.
  .static('/files', DIR, { cacheControl: 'no-store' })
  .get('/api/files', async () => {
    const names = (await readdir(DIR)).filter((name) => !name.startsWith('.'))
    const files = await Promise.all(
      names.map(async (name) => {
        const { size, mtime } = await stat(join(DIR, name))
        return { name, size, modified: mtime.toISOString(), receiving: uploads.isReceiving(name) }
      }),
    )
    return files.sort((a, b) => a.name.localeCompare(b.name))
  })

  // The upload: the raw body (what `fetch(url, { method: 'PUT', body: file })` sends) streamed to disk.
  .put(
    '/upload/:name',
    async (c) => {
      const name = safeName(c.params.name)
      const id = c.query.id ?? randomUUID()
      if (!ID.test(id)) throw new HTTPException(400, 'the upload id must be 8 to 64 letters, digits, _ or -')
      const body = c.req.body
      if (body === null) throw new HTTPException(400, 'the upload has no body')
      const declared = c.req.header('content-length')
      const upload = uploads.begin(id, name, declared === undefined ? null : Number(declared))

      // 'wx' claims the name atomically: a second upload of it is 409, never an overwrite. The check comes before
      // the body is read, so a client that sent `Expect: 100-continue` is refused without sending its bytes.
      let handle
      try {
        handle = await open(join(DIR, name), 'wx')
      } catch (err) {
        uploads.fail(upload, err.code === 'EEXIST' ? 'a file of that name exists' : 'could not create the file')
        if (err.code === 'EEXIST') throw new HTTPException(409, `${name} exists already`)
        throw err
      }

      // One chunk at a time: read (at most 256 KiB), write, then read the next. The socket is read only as fast
      // as the disk takes the bytes, so memory stays bounded whatever the size.
      const reader = body.getReader()
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          await handle.write(value)
          uploads.received(upload, value.byteLength)
        }
        await handle.close()
      } catch (err) {
        // Over the limit (413), the client gone, or the disk full: no half file is left behind.
        await handle.close().catch(() => {})
        await unlink(join(DIR, name)).catch(() => {})
        if (err instanceof HTTPException && err.status === 413) {
          const tooLarge = `the upload is over the limit of ${MAX_UPLOAD} bytes`
          uploads.fail(upload, tooLarge)
          throw new HTTPException(413, tooLarge)
        }
        uploads.fail(upload, c.req.signal.aborted ? 'the client went away' : 'the file could not be written')
        throw err
      }
      uploads.finish(upload)
      return c.json({ id, name, size: upload.received, url: `/files/${encodeURIComponent(name)}` }, 201)
    },
    { maxBodySize: MAX_UPLOAD },
  )

  // Progress as server-sent events: open it before (or while) uploading with the same id. It ends with the
  // upload's last state, `done` or `failed`.
  .get('/progress/:id', (c) => {
    if (!ID.test(c.params.id)) throw new HTTPException(400, 'the upload id must be 8 to 64 letters, digits, _ or -')
    const upload = uploads.watch(c.params.id)
    return c.sse(async (s) => {
      for (;;) {
        await s.writeSSE({ event: 'progress', data: JSON.stringify(uploads.snapshot(upload)) })
        if (upload.state === 'done' || upload.state === 'failed' || s.aborted) return
        await uploads.changed(upload, PROGRESS_EVERY)
      }
    })
  })
  // The same as one JSON answer, for a client that polls.
  .get('/api/uploads/:id', (c) => {
    const upload = uploads.get(c.params.id)
    if (upload === undefined) throw new HTTPException(404, 'no such upload')
    return uploads.snapshot(upload)
  })
  .onError((err, c) => {
    const status = err instanceof HTTPException ? err.status : 500
    if (status === 500) console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: err instanceof Error ? err.message : String(err) }, status)
  })

const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`Uploads on ${server.url} (files in ${DIR}, up to ${MAX_UPLOAD} bytes each)
  curl -T big.iso '${server.url}/upload/big.iso?id=my-upload-1'   # and, meanwhile:
  curl -N ${server.url}/progress/my-upload-1`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
