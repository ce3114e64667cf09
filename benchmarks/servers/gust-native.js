// Gust with a JavaScript handler on every route (the dynamic path). Runs under `node` and `bun`; reads PORT.
import { serve } from './gust-app.js'

await serve(() => 'Hi')
