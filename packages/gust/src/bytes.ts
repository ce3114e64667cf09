/**
 * Byte types the package's declarations can name without `@types/node`: a browser project that imports
 * `gust/client`, or a project with `"types": []`, type-checks the installed package as it is.
 * @module
 */

/**
 * Bytes that decode themselves, as Node's and Bun's `Buffer` does: what the engine's batches are at run time.
 * Declared here (only what the readers call) so no declaration names `Buffer`.
 */
export interface TextBytes extends Uint8Array {
  toString(encoding?: 'utf8' | 'latin1', start?: number, end?: number): string
}

/**
 * Node's `Buffer` where its types are loaded (`@types/node`, `@types/bun`), else `Uint8Array`: a WebSocket's
 * binary message is a `Buffer` at run time, on both runtimes, and typed as one wherever that type exists.
 */
export type NodeBuffer = typeof globalThis extends { Buffer: { alloc(size: number): infer B extends Uint8Array } } ? B : Uint8Array
