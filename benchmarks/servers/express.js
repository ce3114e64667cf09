// Express 5, on Node or Bun. `res.send(string)` defaults to text/html, so the type is set as the scenario asks.
import express from 'express'

const app = express()
app.get('/', (req, res) => {
  res.type('text/plain').send('Hi')
})
app.get('/id/:id', (req, res) => {
  res.set('x-powered-by', 'benchmark').type('text/plain').send(`${req.params.id} ${req.query.name}`)
})
app.post('/json', express.json(), (req, res) => {
  res.json(req.body)
})
app.get('/stream/:n', (req, res) => {
  res.type('text/plain')
  for (let i = 1; i <= 8; i++) res.write(`${req.params.n}:${i}\n`)
  res.end()
})
app.listen(Number(process.env.PORT ?? 3000))
