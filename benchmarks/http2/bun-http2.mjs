// Bun.serve with `http2: true` (h2c by prior knowledge on a plain port). Reads PORT.
Bun.serve({ port: Number(process.env.PORT), hostname: '127.0.0.1', http2: true, fetch: () => new Response('Hi') })
