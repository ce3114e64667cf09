// Bun.serve with a JavaScript handler on every route.
Bun.serve({
  port: Number(process.env.PORT ?? 3000),
  routes: {
    '/': () => new Response('Hi'),
    '/id/:id': (req) =>
      new Response(`${req.params.id} ${new URL(req.url).searchParams.get('name')}`, {
        headers: { 'x-powered-by': 'benchmark' },
      }),
    '/json': { POST: async (req) => Response.json(await req.json()) },
    '/stream/:n': (req) =>
      new Response(
        async function* () {
          for (let i = 1; i <= 8; i++) yield `${req.params.n}:${i}\n`
        },
        { headers: { 'content-type': 'text/plain; charset=utf-8' } },
      ),
  },
  fetch: () => new Response('Not Found', { status: 404 }),
})
