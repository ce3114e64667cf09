// Gust over h2c: `GET /` answered by a JavaScript handler, or with TURBO=1 by a turbo route. Reads PORT.
import { Gust } from '../../packages/gust/dist/index.js'

const turbo = process.env.TURBO === '1'
await new Gust().get('/', turbo ? 'Hi' : () => 'Hi').listen({ hostname: '127.0.0.1', port: Number(process.env.PORT) })
