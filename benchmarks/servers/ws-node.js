// `ws` on node:http, the way Node users add WebSockets: an echo route, and a fan-out route whose topic is a Set
// of sockets (ws has no pub/sub; its README's broadcast is this loop); the echo again with permessage-deflate,
// set as Bun's and Gust's are (no context kept either way, zlib's fastest level, every message compressed).
// Reads PORT.
import http from 'node:http'

import { WebSocketServer } from 'ws'

const server = http.createServer((_req, res) => res.writeHead(404).end('Not Found'))
const wss = new WebSocketServer({ noServer: true })
const deflating = new WebSocketServer({
  noServer: true,
  perMessageDeflate: { serverNoContextTakeover: true, clientNoContextTakeover: true, threshold: 0, zlibDeflateOptions: { level: 1 } },
})
const fan = new Set()

server.on('upgrade', (req, socket, head) => {
  const path = req.url
  if (path === '/ws/deflate') {
    deflating.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })))
    return
  }
  if (path !== '/ws/echo' && path !== '/ws/fanout') return socket.destroy()
  wss.handleUpgrade(req, socket, head, (ws) => {
    if (path === '/ws/echo') {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
      return
    }
    fan.add(ws)
    ws.on('close', () => fan.delete(ws))
    ws.on('message', (data, isBinary) => {
      let reached = 0
      for (const other of fan) {
        if (other !== ws && other.readyState === 1) {
          other.send(data, { binary: isBinary })
          reached++
        }
      }
      ws.send(String(reached))
    })
    ws.send('ready')
  })
})

server.listen(Number(process.env.PORT ?? 3000))
