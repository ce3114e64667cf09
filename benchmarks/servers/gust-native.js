// Gust with a JavaScript handler on every route (the dynamic path). Runs under `node` and `bun`; reads PORT.
// `--logged` (the gust-logged contestants): every request logged as JSON to LOG_FILE (default /dev/null).
import { serve } from './gust-app.js'

await serve(() => 'Hi', { logged: process.argv.includes('--logged') })
