// Gust with `GET /` and the files as turbo routes (answered in Rust); the other routes as gust-native.js.
import { serve } from './gust-app.js'

await serve('Hi', { turboFiles: true })
