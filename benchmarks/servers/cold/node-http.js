// Cold start: node:http with one route; prints the port once listening.
import http from 'node:http'

const server = http.createServer((_req, res) => res.end('Hi'))
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
