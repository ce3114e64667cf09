// Bun.serve with a JavaScript handler on every route.
import { serve } from './bun-routes.js'

serve(() => new Response('Hi'))
