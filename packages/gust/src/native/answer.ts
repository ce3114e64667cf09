/**
 * Writing answers in the layout `crates/gust-core/src/wire/answer.rs` documents and decodes;
 * `crates/gust-core/src/wire/golden/answers.json` is a sample both sides' tests check.
 * @module
 */
import type { Reply } from '../reply.js'
import { WIRE_VERSION } from './wire.js'

const ANSWER = 2
const TAG = ANSWER | (WIRE_VERSION << 8)

/**
 * Appends one answer: `[tag, id, status, headerCount]` then a name and value length per header in `meta`; the
 * header texts themselves in `headers`, to be joined into one string. Lengths are in UTF-16 code units, so no
 * character can shift a boundary; the engine refuses anything that is not valid HTTP, per answer.
 */
export function encodeAnswer(meta: number[], headers: string[], id: number, reply: Reply): void {
  const h = reply.headers
  meta.push(TAG, id, reply.status, h.length >> 1)
  for (let i = 0; i < h.length; i++) {
    meta.push(h[i]!.length)
    headers.push(h[i]!)
  }
}
