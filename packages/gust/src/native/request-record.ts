/**
 * Where each section of a request record is (`crates/gust-core/src/wire/request.rs` documents the layout; the
 * word indices come from `layout.ts`, generated from the core). Every function takes the batch's words and the
 * index of the record's first word, and costs a few additions: offsets are computed when read, never stored.
 * @module
 */
import { HEADER_WORDS, W_BODY_LEN, W_HEADERS_LEN, W_LENGTH, W_METHOD_LEN, W_PARAM_COUNT, W_PATH_LEN, W_PEER_LEN, W_URL_LEN } from './layout.js'

/**
 * The record's flags: the tag's top 16 bits (a request's `HTTP_10`, `BODY_STREAM`, `TLS`, `HTTP_2`). Every kind of
 * record has them there, so the engine loop reads an event's with this too (a WebSocket close carries its code).
 */
export function flagsOf(words: Uint32Array, w: number): number {
  return words[w]! >>> 16
}

/** Byte offset of the method section (the name of a method without a code). */
export function methodStart(words: Uint32Array, w: number): number {
  return (w + HEADER_WORDS + words[w + W_PARAM_COUNT]!) << 2
}

/** Byte offset of the url section (the raw path and query). */
export function urlStart(words: Uint32Array, w: number): number {
  return methodStart(words, w) + words[w + W_METHOD_LEN]!
}

/** Byte offset of the decoded path section (empty when the raw path is the path). */
export function pathStart(words: Uint32Array, w: number): number {
  return urlStart(words, w) + words[w + W_URL_LEN]!
}

/** Byte offset of the params section (their lengths are the words after the fixed header). */
export function paramsStart(words: Uint32Array, w: number): number {
  return pathStart(words, w) + words[w + W_PATH_LEN]!
}

/** The length of param `i`. */
export function paramLength(words: Uint32Array, w: number, i: number): number {
  return words[w + HEADER_WORDS + i]!
}

/** Byte offset of the headers section. */
export function headersStart(words: Uint32Array, w: number): number {
  let at = paramsStart(words, w)
  for (let i = w + HEADER_WORDS, end = i + words[w + W_PARAM_COUNT]!; i < end; i++) at += words[i]!
  return at
}

/** Byte offset of the peer section (the client's address as text). */
export function peerStart(words: Uint32Array, w: number): number {
  return headersStart(words, w) + words[w + W_HEADERS_LEN]!
}

/** Byte offset of the body (all of it, or with `BODY_STREAM` what came with the record). */
export function bodyStart(words: Uint32Array, w: number): number {
  return peerStart(words, w) + words[w + W_PEER_LEN]!
}

/** Byte offset and length of the TLS section of a record flagged `TLS`: after the body; its length is the record's last word. */
export function tlsSection(words: Uint32Array, w: number): [start: number, length: number] {
  return [bodyStart(words, w) + words[w + W_BODY_LEN]!, words[w + (words[w + W_LENGTH]! >>> 2) - 1]!]
}
