// node:http2 answering every stream with "Hi" (streams given error handlers: without them h2spec-style
// clients crash it). Reads PORT.
import http2 from 'node:http2'
const server = http2.createServer()
server.on('stream', (stream) => { stream.on('error', () => {}); stream.respond({ ':status': 200, 'content-type': 'text/plain; charset=utf-8' }); stream.end('Hi') })
server.on('sessionError', () => {})
server.listen(Number(process.env.PORT), '127.0.0.1')
