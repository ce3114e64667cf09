// Cold start: Gust with one JavaScript route, on whichever runtime runs it; prints the port once listening.
import { Gust } from 'gust'

const server = await new Gust().get('/', () => 'Hi').listen({ port: 0, hostname: '127.0.0.1' })
console.log(server.port)
