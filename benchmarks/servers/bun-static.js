// Bun.serve with `GET /` as a static Response (answered without running JavaScript); the others as bun-serve.js.
import { serve } from './bun-routes.js'

serve(new Response('Hi'))
