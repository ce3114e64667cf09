// Gust with `GET /` as a turbo route (answered in Rust); the other routes as gust-native.js.
import { serve } from './gust-app.js'

await serve('Hi')
