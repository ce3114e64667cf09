// The uploads example over real sockets: a paced upload watched over SSE, the stored bytes read back, names
// sanitised, limits (declared and chunked), a client that leaves half way, a second upload of a name.
import assert from 'node:assert/strict'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { checks, sleep, sseEvents, start, waitFor } from '../test-support.mjs'

const LIMIT = 8 * 1024 * 1024
const parent = mkdtempSync(join(tmpdir(), 'gust-uploads-'))
const dir = join(parent, 'files')
const server = await start(new URL('./server.js', import.meta.url), { UPLOAD_DIR: dir, MAX_UPLOAD_BYTES: String(LIMIT) })
const { port } = new URL(server.url)

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex')

/**
 * PUTs `pieces` one by one with `pauseMs` between them (a slow client), with a content-length unless `chunked`.
 * Resolves with the status and the parsed answer; `abortAfter` pieces destroys the socket instead.
 */
function put(path, pieces, { pauseMs = 0, chunked = false, abortAfter } = {}) {
  const total = pieces.reduce((n, p) => n + p.length, 0)
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'PUT',
      headers: chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(total) },
    })
    req.on('response', (res) => {
      const got = []
      res.on('data', (d) => got.push(d))
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(got).toString() || 'null') }))
    })
    req.on('error', (err) => (abortAfter === undefined ? reject(err) : resolve({ status: 0, body: null })))
    void (async () => {
      for (let i = 0; i < pieces.length; i++) {
        if (i === abortAfter) {
          req.destroy()
          resolve({ status: 0, body: null })
          return
        }
        if (!req.write(pieces[i])) await new Promise((r) => req.once('drain', r))
        if (pauseMs) await sleep(pauseMs)
      }
      req.end()
    })().catch(reject)
  })
}

const progress = async (id) => (await fetch(`${server.url}/api/uploads/${id}`)).json()

await checks(
  {
    'the page is served': async () => {
      const res = await fetch(server.url)
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type'), /^text\/html/)
      assert.match(await res.text(), /EventSource\(`\/progress\//)
    },

    'a paced 6 MiB upload is reported over SSE while it arrives, and stored byte for byte': async () => {
      const id = randomUUID()
      const pieces = Array.from({ length: 24 }, () => randomBytes(256 * 1024))
      const total = 24 * 256 * 1024
      // Watch first, as the page does: the feed opens in the `waiting` state.
      const feed = await fetch(`${server.url}/progress/${id}`)
      assert.equal(feed.headers.get('content-type'), 'text/event-stream')
      const seen = []
      const watching = (async () => {
        for await (const e of sseEvents(feed)) {
          assert.equal(e.event, 'progress')
          seen.push(JSON.parse(e.data))
        }
      })()
      const answer = await put(`/upload/report.bin?id=${id}`, pieces, { pauseMs: 15 })
      await watching // the feed ends by itself after the last state
      assert.equal(answer.status, 201)
      assert.deepEqual(answer.body, { id, name: 'report.bin', size: total, url: '/files/report.bin' })

      assert.equal(seen[0].state, 'waiting')
      const last = seen.at(-1)
      assert.deepEqual(last, { id, name: 'report.bin', total, received: total, percent: 100, state: 'done' })
      const during = seen.filter((p) => p.state === 'receiving' && p.received > 0 && p.received < total)
      assert.ok(during.length >= 2, `progress seen while receiving: ${JSON.stringify(seen.map((p) => p.received))}`)
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i].received >= seen[i - 1].received, 'progress never goes back')

      const stored = readFileSync(join(dir, 'report.bin'))
      assert.equal(sha(stored), sha(Buffer.concat(pieces)))
      const download = await fetch(`${server.url}/files/report.bin`)
      assert.equal(download.status, 200)
      assert.equal(sha(Buffer.from(await download.arrayBuffer())), sha(stored))
    },

    'a second upload of a name is 409 and leaves the first file alone': async () => {
      const answer = await put('/upload/report.bin', [Buffer.from('other bytes')])
      assert.equal(answer.status, 409)
      assert.equal(answer.body.error, 'report.bin exists already')
      assert.equal(readFileSync(join(dir, 'report.bin')).length, 6 * 1024 * 1024)
    },

    'names are sanitised: no way out of the directory, no hidden files': async () => {
      const escape = await put('/upload/..%2F..%2Fescape%20me%20(1).txt', [Buffer.from('x')])
      assert.equal(escape.status, 201)
      assert.equal(escape.body.name, 'escape_me_1_.txt')
      assert.ok(existsSync(join(dir, 'escape_me_1_.txt')))
      assert.ok(!readdirSync(parent).some((name) => name.startsWith('escape')), 'nothing written outside the upload directory')
      assert.equal((await put('/upload/.bashrc', [Buffer.from('x')])).body.name, 'bashrc')
      assert.equal((await put('/upload/nul.txt', [Buffer.from('x')])).body.name, '_nul.txt')
      const dots = await put('/upload/%2E%2E', [Buffer.from('x')])
      assert.equal(dots.status, 400)
      assert.match(dots.body.error, /no characters usable/)
    },

    'a body declared over the limit is 413 before a byte of it is read': async () => {
      const answer = await new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1')
        let got = ''
        socket.on('data', (d) => {
          got += d
          if (got.includes('\r\n\r\n')) {
            socket.destroy()
            resolve(got)
          }
        })
        socket.on('error', reject)
        socket.write(`PUT /upload/huge.bin HTTP/1.1\r\nhost: x\r\ncontent-length: ${LIMIT + 1}\r\n\r\n`)
      })
      assert.match(answer, /^HTTP\/1\.1 413 /)
      assert.ok(!existsSync(join(dir, 'huge.bin')))
    },

    'a chunked body that passes the limit fails with 413 and leaves no file': async () => {
      const id = randomUUID()
      const pieces = Array.from({ length: 9 }, () => Buffer.alloc(1024 * 1024, 7))
      const answer = await put(`/upload/chunked.bin?id=${id}`, pieces, { chunked: true })
      assert.equal(answer.status, 413)
      const state = await progress(id)
      assert.equal(state.state, 'failed')
      assert.equal(state.error, 'the upload is over the limit of 8388608 bytes')
      assert.equal(answer.body.error, state.error)
      assert.ok(state.received <= LIMIT)
      assert.ok(!existsSync(join(dir, 'chunked.bin')))
    },

    'a client that leaves half way leaves no half file': async () => {
      const id = randomUUID()
      const pieces = Array.from({ length: 8 }, () => Buffer.alloc(256 * 1024, 1))
      await put(`/upload/partial.bin?id=${id}`, pieces, { pauseMs: 20, abortAfter: 4 })
      const state = await waitFor('the upload to fail', async () => {
        const p = await progress(id)
        return p.state === 'failed' && p
      })
      assert.equal(state.error, 'the client went away')
      assert.ok(state.received > 0 && state.received < 8 * 256 * 1024)
      assert.ok(!existsSync(join(dir, 'partial.bin')))
    },

    'the list shows what was stored': async () => {
      const files = await (await fetch(`${server.url}/api/files`)).json()
      assert.deepEqual(
        files.map((f) => [f.name, f.size, f.receiving]),
        [
          ['_nul.txt', 1, false],
          ['bashrc', 1, false],
          ['escape_me_1_.txt', 1, false],
          ['report.bin', 6 * 1024 * 1024, false],
        ],
      )
    },

    'bad ids are 400, unknown ones 404': async () => {
      assert.equal((await fetch(`${server.url}/progress/x`)).status, 400)
      assert.equal((await fetch(`${server.url}/api/uploads/${randomUUID()}`)).status, 404)
    },

    'SIGTERM stops it cleanly': async () => {
      assert.equal(await server.stop(), 0)
    },
  },
  async () => {
    await server.stop()
    rmSync(parent, { recursive: true, force: true })
  },
)
