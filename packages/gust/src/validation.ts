/**
 * Route-level validation with any [Standard Schema](https://standardschema.dev) validator (Zod, Valibot,
 * ArkType …): the interface is declared here, so no validation library is a dependency of the package.
 * @module
 */
import { backstage, type Context } from './context.js'
import { HTTPException } from './http-exception.js'

/** The Standard Schema interface (v1), as validators implement it. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
  }
}

/** What a Standard Schema's `validate` returns. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> }

/** One problem a validator found. */
export interface StandardIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}

/** The parts of a request a route can validate. */
export type ValidationTarget = 'params' | 'query' | 'headers' | 'cookies' | 'json' | 'form'
const TARGETS: readonly ValidationTarget[] = ['params', 'query', 'headers', 'cookies', 'json', 'form']

/** A schema per part of the request, as given in a route's `validate` option. */
export type Validators = { readonly [K in ValidationTarget]?: StandardSchemaV1 }

/** The validated values of a route, typed from its schemas' outputs: what `c.req.valid(target)` returns. */
export type Validated<V> = {
  [K in keyof V]: V[K] extends StandardSchemaV1<any, infer Out> ? Out : never
}

/** One issue as sent to the client: a message and where (`["items", 0, "name"]`). */
export interface ValidationIssue {
  message: string
  path: (string | number)[]
}

/**
 * A request part that failed its route's schema: a 400 whose default body is
 * `{ "error": "Validation failed", "target": "json", "issues": [{ "message": "…", "path": ["name"] }] }`.
 * An app's `onError` can shape it differently (`err instanceof ValidationError`).
 */
export class ValidationError extends HTTPException {
  readonly target: ValidationTarget
  readonly issues: ValidationIssue[]

  constructor(target: ValidationTarget, issues: ValidationIssue[]) {
    super(400, `Validation failed for ${target}: ${issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')}`)
    this.name = 'ValidationError'
    this.target = target
    this.issues = issues
  }

  /** The JSON body of the default 400. */
  toJSON(): { error: string; target: ValidationTarget; issues: ValidationIssue[] } {
    return { error: 'Validation failed', target: this.target, issues: this.issues }
  }
}

/** Checks a route's `validate` option; throws naming the route and what is wrong. */
export function checkValidators(route: string, value: unknown): Validators {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`Route ${route}: option "validate" must be an object of schemas, e.g. { json: schema }`)
  }
  for (const [key, schema] of Object.entries(value)) {
    if (!TARGETS.includes(key as ValidationTarget)) {
      throw new Error(`Route ${route}: cannot validate "${key}"; known targets: ${TARGETS.join(', ')}`)
    }
    const standard = (schema as StandardSchemaV1 | null)?.['~standard']
    if (typeof standard !== 'object' || standard === null || standard.version !== 1 || typeof standard.validate !== 'function') {
      throw new TypeError(
        `Route ${route}: validate.${key} is not a Standard Schema (v1) validator (a schema of Zod ≥ 3.24, Valibot ≥ 1 or ArkType ≥ 2 is one)`,
      )
    }
  }
  return value as Validators
}

function issuePath(issue: StandardIssue): (string | number)[] {
  return (issue.path ?? []).map((p) => {
    const key = typeof p === 'object' && p !== null ? p.key : p
    return typeof key === 'number' ? key : String(key)
  })
}

/** A form as a plain object: a repeated field becomes an array, files stay `File`s. */
function formObject(form: FormData): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of form) {
    const had = Object.hasOwn(out, name) ? out[name] : undefined
    if (had === undefined) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
    else out[name] = Array.isArray(had) ? [...had, value] : [had, value]
  }
  return out
}

async function input(c: Context, target: ValidationTarget): Promise<unknown> {
  switch (target) {
    case 'params':
      return { ...c.req.params }
    case 'query':
      return c.req.query()
    case 'headers':
      return c.req.header()
    case 'cookies':
      return c.req.cookie()
    case 'json': {
      const type = c.req.header('content-type') ?? ''
      if (!/^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i.test(type)) {
        throw new ValidationError('json', [{ message: 'Expected a JSON body (content-type: application/json)', path: [] }])
      }
      return c.req.json()
    }
    case 'form':
      return formObject(await c.req.formData())
  }
}

/**
 * Validates each part of the request its route names, in a fixed order (params, query, headers, cookies, then
 * the body), and stores the outputs for `c.req.valid()`. The first failure throws a `ValidationError`.
 */
export async function validate(c: Context, validators: Validators): Promise<void> {
  for (const target of TARGETS) {
    const schema = validators[target]
    if (schema === undefined) continue
    let result = schema['~standard'].validate(await input(c, target))
    if (result instanceof Promise) result = await result
    if (result.issues !== undefined) {
      throw new ValidationError(target, result.issues.map((issue) => ({ message: issue.message, path: issuePath(issue) })))
    }
    backstage.setValid(c, target, result.value)
  }
}
