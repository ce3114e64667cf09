// Uploads in progress (and recently ended), by id: what the progress feed and the polling endpoint report.
import { HTTPException } from 'gust'

/** How long an ended upload (or a watched id no upload came for) is remembered. */
const KEEP_MS = 60_000
/** Ids remembered at once: past it, new watches and uploads are refused (ids are chosen by clients). */
const MAX_TRACKED = 10_000

/**
 * The table of uploads. An entry is `{ id, name, total, received, state, error }`, `state` one of `waiting`
 * (watched, no bytes yet), `receiving`, `done`, `failed`. Waiting for a change costs one promise per watcher.
 * @example
 * const uploads = new Uploads()
 * const u = uploads.begin('abc12345', 'photo.jpg', 1024)
 * uploads.received(u, 512)
 * uploads.snapshot(u) // { id: 'abc12345', name: 'photo.jpg', total: 1024, received: 512, state: 'receiving', … }
 */
export class Uploads {
  #byId = new Map()
  /** Names being written now, so the file list can say which files are not whole yet. */
  #receiving = new Set()

  /** The entry for `id`, made in the `waiting` state when a watcher comes first. */
  watch(id) {
    return this.#byId.get(id) ?? this.#add(id)
  }

  get(id) {
    return this.#byId.get(id)
  }

  /** An upload of `name` starts under `id`; an id used by another upload already is 409. */
  begin(id, name, total) {
    const upload = this.#byId.get(id) ?? this.#add(id)
    if (upload.state !== 'waiting') throw new HTTPException(409, `upload id ${id} is taken`)
    clearTimeout(upload.expiry)
    Object.assign(upload, { name, total: Number.isSafeInteger(total) ? total : null, state: 'receiving' })
    this.#receiving.add(name)
    this.#wake(upload)
    return upload
  }

  received(upload, bytes) {
    upload.received += bytes
    this.#wake(upload)
  }

  finish(upload) {
    this.#end(upload, 'done')
  }

  fail(upload, error) {
    upload.error = error
    this.#end(upload, 'failed')
  }

  isReceiving(name) {
    return this.#receiving.has(name)
  }

  /** What a client sees of an upload. */
  snapshot({ id, name, total, received, state, error }) {
    return { id, name, total, received, percent: total ? Math.floor((received / total) * 100) : null, state, ...(error ? { error } : {}) }
  }

  /**
   * Resolves at the upload's next change, but not before `minMs` (so a fast upload costs a watcher one event
   * per `minMs`, not one per chunk), or at once if it has ended.
   */
  async changed(upload, minMs) {
    await new Promise((resolve) => setTimeout(resolve, minMs))
    if (upload.version !== upload.seen) {
      upload.seen = upload.version
      return
    }
    await new Promise((resolve) => upload.waiters.push(resolve))
    upload.seen = upload.version
  }

  #add(id) {
    if (this.#byId.size >= MAX_TRACKED) throw new HTTPException(503, 'too many uploads tracked; try again later')
    const upload = { id, name: null, total: null, received: 0, state: 'waiting', error: undefined, version: 0, seen: 0, waiters: [] }
    this.#byId.set(id, upload)
    this.#forget(upload)
    return upload
  }

  #end(upload, state) {
    upload.state = state
    this.#receiving.delete(upload.name)
    this.#wake(upload)
    this.#forget(upload)
  }

  #forget(upload) {
    clearTimeout(upload.expiry)
    upload.expiry = setTimeout(() => {
      this.#byId.delete(upload.id)
      // A watcher still waiting for an upload that never came is told so, and its feed ends.
      if (upload.state === 'waiting') Object.assign(upload, { state: 'failed', error: 'no upload arrived' })
      this.#wake(upload)
    }, KEEP_MS)
    // A record kept for latecomers must not keep a stopping process alive.
    upload.expiry.unref?.()
  }

  #wake(upload) {
    upload.version++
    for (const resolve of upload.waiters.splice(0)) resolve()
  }
}
