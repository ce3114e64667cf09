/**
 * The only module that touches the native addon. The napi-generated loader (`native/binding.cjs`) picks the
 * local build in development and the per-platform package when installed from npm.
 * @module
 */
import { createRequire } from 'node:module'

import type * as Native from '../../../../index.js'

const require = createRequire(import.meta.url)

/** The native binding, typed by the napi-generated declarations (`index.d.ts` at the repository root). */
export const native = require('../../native/binding.cjs') as typeof Native

export type { BindingFixed, BindingOptions, BindingRoute, BindingServer } from '../../../../index.js'
