// Deno.serve with a JavaScript handler on every route: Rust HTTP (hyper's heir, on the JavaScript thread) calling
// the handler synchronously, the anchor the one-thread engine is measured against. Runs under `deno run -A`.
// Routes by hand (no router): the fewest JavaScript steps a Deno.serve app can take.

const enc = new TextEncoder()
/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)
const TEXT = { 'content-type': 'text/plain;charset=utf-8' }

/** A streamed body, each piece written on its own. */
function streamed(pieces, type) {
  return new Response(
    new ReadableStream({
      async pull(controller) {
        const next = await pieces.next()
        if (next.done) controller.close()
        else controller.enqueue(typeof next.value === 'string' ? enc.encode(next.value) : next.value)
      },
    }),
    { headers: { 'content-type': type } },
  )
}

Deno.serve({ port: Number(Deno.env.get('PORT') ?? 3000), hostname: '127.0.0.1', onListen() {} }, async (req) => {
  const url = new URL(req.url)
  const path = url.pathname
  if (path === '/' && req.method === 'GET') return new Response('Hi', { headers: TEXT })
  if (path.startsWith('/id/') && req.method === 'GET') {
    return new Response(`${path.slice(4)} ${url.searchParams.get('name')}`, {
      headers: { ...TEXT, 'x-powered-by': 'benchmark' },
    })
  }
  if (path === '/json' && req.method === 'POST') return Response.json(await req.json())
  if (path.startsWith('/stream/')) {
    const n = path.slice(8)
    return streamed((async function* () {
      for (let i = 1; i <= 8; i++) yield `${n}:${i}\n`
    })(), 'text/plain; charset=utf-8')
  }
  if (path.startsWith('/download/')) {
    const n = path.slice(10)
    return streamed((async function* () {
      yield `${n}:`
      for (let i = 0; i < 64; i++) yield X16
      yield `:${n}\n`
    })(), 'application/octet-stream')
  }
  if (path.startsWith('/sse/')) {
    const n = path.slice(5)
    return streamed((async function* () {
      for (let i = 1; i <= 16; i++) yield `data: ${n}:${i}\n\n`
    })(), 'text/event-stream')
  }
  return new Response('Not Found', { status: 404 })
})
