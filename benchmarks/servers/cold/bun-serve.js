// Cold start: Bun.serve with one route; prints the port once listening.
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('Hi') })
console.log(server.port)
