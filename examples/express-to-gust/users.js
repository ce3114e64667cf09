// The domain code both servers share: a store of users and its rules. It knows nothing of HTTP frameworks, so
// moving from Express to Gust leaves it as it is; only express-server.js became gust-server.js.

/** A mistake in what a client sent, with the HTTP status it deserves. */
export class UserError extends Error {
  constructor(status, message) {
    super(message)
    this.name = 'UserError'
    this.status = status
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** Checks a new user's (or, with `partial`, a change's) fields; returns the clean ones or throws a 400. */
function checked(input, partial) {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new UserError(400, 'expected a JSON object')
  const out = {}
  for (const key of Object.keys(input)) if (key !== 'name' && key !== 'email') throw new UserError(400, `unknown field "${key}"`)
  if (input.name !== undefined || !partial) {
    if (typeof input.name !== 'string' || input.name.trim().length === 0 || input.name.length > 50) throw new UserError(400, '"name" must be 1 to 50 characters')
    out.name = input.name.trim()
  }
  if (input.email !== undefined || !partial) {
    if (typeof input.email !== 'string' || !EMAIL.test(input.email)) throw new UserError(400, '"email" must be an email address')
    out.email = input.email.toLowerCase()
  }
  return out
}

/** A whole number in [min, max] from a query string value, or `fallback` when absent. */
function whole(value, name, fallback, min, max) {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !Number.isInteger(n) || n < min || n > max) throw new UserError(400, `"${name}" must be a whole number from ${min} to ${max}`)
  return n
}

/**
 * Users in memory, by id.
 * @example
 * const users = new Users()
 * const ann = users.create({ name: 'Ann', email: 'ann@example.com' }) // { id: 1, name: 'Ann', … }
 */
export class Users {
  #byId = new Map()
  #nextId = 1

  /** A page of users, oldest first: `limit` (1–100, default 20) from `offset`. */
  list({ limit, offset } = {}) {
    const from = whole(offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
    const count = whole(limit, 'limit', 20, 1, 100)
    return { total: this.#byId.size, users: [...this.#byId.values()].slice(from, from + count) }
  }

  get(id) {
    const user = this.#byId.get(Number(id))
    if (user === undefined) throw new UserError(404, `no user ${id}`)
    return user
  }

  create(input) {
    const fields = checked(input, false)
    if ([...this.#byId.values()].some((u) => u.email === fields.email)) throw new UserError(409, `${fields.email} is taken`)
    const user = { id: this.#nextId++, ...fields }
    this.#byId.set(user.id, user)
    return user
  }

  update(id, input) {
    const user = this.get(id)
    Object.assign(user, checked(input, true))
    return user
  }

  remove(id) {
    this.get(id)
    this.#byId.delete(Number(id))
  }
}
