// What every version of the migration guides' tasks app must do, whichever framework serves it: the same
// requests get the same statuses and bodies, so the guides show one app and not six near ones. Hidden checks
// import it as './helpers/tasks-app.ts' (run.mjs copies this folder into the sandbox).
import assert from 'node:assert/strict'

const auth = { authorization: 'Bearer secret' }
const origin = 'https://example.com'

async function call(base: string, path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(`${base}${path}`, init)
  const text = await res.text()
  const json = (res.headers.get('content-type') ?? '').includes('application/json')
  return { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : text }
}

/** Checks the tasks app served at `base` (`http://127.0.0.1:<port>`); throws naming the first difference. */
export async function checkTasksApp(base: string): Promise<void> {
  const list = await call(base, '/api/tasks', { headers: { ...auth, origin } })
  assert.deepEqual([list.status, list.body], [200, [{ id: 1, title: 'Write the docs', done: false }]], 'GET /api/tasks')
  assert.equal(list.headers.get('access-control-allow-origin'), origin, 'CORS on GET /api/tasks')

  const anonymous = await call(base, '/api/tasks', { headers: { origin } })
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'unauthorized' }], 'GET /api/tasks without a token')
  assert.equal(anonymous.headers.get('access-control-allow-origin'), origin, 'CORS on the 401')

  const preflight = await call(base, '/api/tasks', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  })
  assert.equal(preflight.status, 204, 'a preflight is answered before the auth check')
  assert.equal(preflight.headers.get('access-control-allow-origin'), origin, 'CORS on the preflight')

  const one = await call(base, '/api/tasks/1', { headers: auth })
  assert.deepEqual([one.status, one.body], [200, { id: 1, title: 'Write the docs', done: false }], 'GET /api/tasks/1')
  const missing = await call(base, '/api/tasks/9', { headers: auth })
  assert.deepEqual([missing.status, missing.body], [404, { error: 'task 9 not found' }], 'GET /api/tasks/9')

  const json = { ...auth, 'content-type': 'application/json' }
  const created = await call(base, '/api/tasks', { method: 'POST', headers: json, body: JSON.stringify({ title: 'Ship it' }) })
  assert.deepEqual([created.status, created.body], [201, { id: 2, title: 'Ship it', done: false }], 'POST /api/tasks')
  const invalid = await call(base, '/api/tasks', { method: 'POST', headers: json, body: JSON.stringify({ title: '' }) })
  assert.equal(invalid.status, 400, 'POST /api/tasks with an empty title')
  assert.equal((invalid.body as { error: string }).error, 'invalid body', 'the 400 body')

  const boom = await call(base, '/boom')
  assert.deepEqual([boom.status, boom.body], [500, { error: 'internal error' }], 'GET /boom')
  const css = await call(base, '/static/app.css')
  assert.deepEqual([css.status, css.body], [200, 'body { font-family: system-ui; }\n'], 'GET /static/app.css')
  const nowhere = await call(base, '/nowhere')
  assert.deepEqual([nowhere.status, nowhere.body], [404, { error: 'not found' }], 'GET /nowhere')
}

/** Checks a WebSocket echo at `url` (`ws://…`): a text message comes back as it was sent. */
export async function checkEcho(url: string): Promise<void> {
  const socket = new WebSocket(url)
  await new Promise((resolve, reject) => {
    socket.onopen = resolve
    socket.onerror = () => reject(new Error(`no WebSocket at ${url}`))
  })
  const reply = new Promise<string>((resolve) => {
    socket.onmessage = (e) => resolve(String(e.data))
  })
  socket.send('hello')
  assert.equal(await reply, 'hello')
  socket.close()
}
