/**
 * What the engine knows, read once when the package loads: method names, the statuses a response may have, the
 * texts of the engine's own answers, every `listen()` option with its range and default, the `app.static()`
 * options, and how a server's threads are split. Rust defines each of them (`engine_info` in
 * `crates/gust-napi/src/binding_options.rs`); the package reads them here and restates none.
 * @module
 */
import { type BindingMessages, type BindingStaticDefaults, native } from './binding.js'

/** Everything the engine reports about itself, as it reported it. */
export const engine = native.engineInfo()

/** Method names by wire code (the one list). */
export const METHODS: readonly string[] = Object.freeze(engine.methods)

/** The codings `compression.encodings` may list, in the engine's default order of preference. */
export const ENCODINGS: readonly string[] = Object.freeze(engine.compressionEncodings)

/** Whether `compression.types` may list `t` (`application/json`, `text/*`): the engine's rule. */
export const compressionTypeAccepts: (t: string) => boolean = native.compressionTypeAccepts

/** The least status a response may have. */
export const STATUS_MIN: number = engine.minStatus

/** The greatest status a response may have. */
export const STATUS_MAX: number = engine.maxStatus

/** The texts of the engine's own answers (`Not Found`, `Payload Too Large` …), for answering the same way. */
export const MESSAGES: Readonly<BindingMessages> = Object.freeze(engine.messages)

/** An integer option: the values the engine takes, and what it uses when the option is not given. */
export interface IntegerOption {
  readonly name: string
  readonly min: number
  readonly max: number
  readonly default: number | undefined
}

const integers = new Map<string, IntegerOption>()
for (const { name, min, max, default: given } of engine.options) {
  if (min != null && max != null) integers.set(name, Object.freeze({ name, min, max, default: given ?? undefined }))
}

/** The integer options by name (`maxPending`, `http2.keepAliveTimeout`, `compression.level.gzip`). */
export const INTEGER_OPTIONS: ReadonlyMap<string, IntegerOption> = integers

/** Every option of `listen()` the engine takes, in its order (the package adds its own). */
export const ENGINE_OPTIONS: readonly string[] = Object.freeze(engine.options.map((o) => o.name).filter((name) => !name.includes('.')))

/** The names of the settings inside option `parent` (`http2` → `maxConcurrentStreams` …), in the engine's order. */
export function settingsOf(parent: string): string[] {
  return engine.options.filter((o) => o.name.startsWith(`${parent}.`)).map((o) => o.name.slice(parent.length + 1))
}

/**
 * An integer option by name (`maxPending`, `http2.keepAliveTimeout`, `compression.level.gzip`). Throws for a name
 * the engine does not have: a mistake in the package, never in the user's options.
 */
export function integerOption(name: string): IntegerOption {
  const option = INTEGER_OPTIONS.get(name)
  if (option === undefined) throw new Error(`gust: the engine has no integer option "${name}"`)
  return option
}

/** How many worker threads can attach to one server. */
export const MAX_WORKERS: number = engine.maxWorkers

/** `app.static()`'s options (their names, in order) with the engine's defaults; `null`: none. */
export const STATIC_OPTIONS: Readonly<BindingStaticDefaults> = Object.freeze(engine.staticOptions)

/** Whether the engine takes `value` for `app.static()` option `name` (a string or a boolean; check the type first). */
export const staticOptionAccepts: (name: string, value: string | boolean) => boolean = native.staticOptionAccepts

/**
 * How many worker threads and I/O threads a server gets: `workers` as given, or with `'auto'` as many as `cores`
 * leave beside the I/O threads; `ioThreads` as given, or the engine's share. Both counts must be checked first.
 */
export function threadPlan(cores: number, workers: number | 'auto', ioThreads: number | undefined): { workers: number; ioThreads: number } {
  return native.threadPlan(cores, workers === 'auto' ? undefined : workers, ioThreads)
}
