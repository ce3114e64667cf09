// The OpenTelemetry example: the app traced into an in-memory exporter, its spans checked (names from the route
// patterns, attributes, a continued trace, a child span, errors); then server.js run as its README says, its
// console exporter printing the span of a request.
import assert from 'node:assert/strict'

import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

import { buildApp } from './app.js'
import { checks, start, waitFor } from '../test-support.mjs'

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const app = buildApp(provider.getTracer('test'))
const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
const base = server.url

/** The finished spans once `count` are there (a span ends as its answer is handed over, maybe after the client read it). */
async function spans(count) {
  await waitFor(`${count} span(s)`, () => exporter.getFinishedSpans().length >= count)
  const out = exporter.getFinishedSpans()
  exporter.reset()
  assert.equal(out.length, count)
  return out
}

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const PARENT = 'b7ad6b7169203331'

let child
await checks(
  {
    'a request is one server span named after its route pattern, with the HTTP attributes': async () => {
      const res = await fetch(`${base}/api/users/42?fields=name`, { headers: { 'user-agent': 'example-test' } })
      assert.deepEqual(await res.json(), { id: '42', name: 'Grace' })
      const [db, span] = await spans(2)
      assert.equal(span.name, 'GET /api/users/:id')
      assert.equal(span.kind, SpanKind.SERVER)
      assert.deepEqual(
        { ...span.attributes, 'client.address': typeof span.attributes['client.address'], 'server.address': typeof span.attributes['server.address'] },
        {
          'http.request.method': 'GET',
          'http.route': '/api/users/:id',
          'url.path': '/api/users/42',
          'url.query': 'fields=name',
          'url.scheme': 'http',
          'server.address': 'string',
          'client.address': 'string',
          'network.protocol.version': '1.1',
          'user_agent.original': 'example-test',
          'http.response.status_code': 200,
          'http.response.body.size': Buffer.byteLength('{"id":"42","name":"Grace"}'),
        },
      )
      assert.equal(span.status.code, SpanStatusCode.UNSET)
      assert.equal(db.name, 'db.select users')
      assert.equal(db.parentSpanContext?.spanId, span.spanContext().spanId, 'the database span is a child of the request span')
      assert.equal(db.spanContext().traceId, span.spanContext().traceId)
    },
    "an incoming traceparent continues the caller's trace": async () => {
      await (await fetch(`${base}/api/users/1`, { headers: { traceparent: `00-${TRACE}-${PARENT}-01` } })).text()
      const [, span] = await spans(2)
      assert.equal(span.spanContext().traceId, TRACE)
      assert.equal(span.parentSpanContext?.spanId, PARENT)
      assert.equal(span.parentSpanContext?.isRemote, true)
    },
    'a thrown error makes a 500 span with the error recorded; a 4xx is not an error': async () => {
      assert.equal((await fetch(`${base}/boom`)).status, 500)
      const [boom] = await spans(1)
      assert.equal(boom.name, 'GET /boom')
      assert.equal(boom.attributes['http.response.status_code'], 500)
      assert.equal(boom.attributes['error.type'], 'Error')
      assert.equal(boom.status.code, SpanStatusCode.ERROR)
      assert.equal(boom.status.message, 'the payment service is down')
      assert.equal(boom.events.find((e) => e.name === 'exception')?.attributes?.['exception.message'], 'the payment service is down')

      assert.equal((await fetch(`${base}/api/users/7`)).status, 404)
      const [, missing] = await spans(2)
      assert.equal(missing.name, 'GET /api/users/:id')
      assert.equal(missing.attributes['http.response.status_code'], 404)
      assert.equal(missing.status.code, SpanStatusCode.UNSET)
    },
    'a path no route matches is named by its method alone, without http.route': async () => {
      assert.equal((await fetch(`${base}/nowhere/123`)).status, 404)
      const [span] = await spans(1)
      assert.equal(span.name, 'GET')
      assert.equal(span.attributes['http.route'], undefined)
      assert.equal(span.attributes['url.path'], '/nowhere/123')
    },
    'server.js runs with one command and prints the span of each request': async () => {
      child = await start(new URL('./server.js', import.meta.url))
      assert.equal((await fetch(`${child.url}/api/users/1`)).status, 200)
      // Node's console.dir quotes with ', Bun's with ".
      await waitFor('the console exporter to print the span', () => /name: ['"]GET \/api\/users\/:id['"]/.test(child.output()))
      assert.match(child.output(), /['"]http\.route['"]: ['"]\/api\/users\/:id['"]/)
      assert.equal(await child.stop(), 0)
      child = undefined
    },
  },
  async () => {
    await child?.stop()
    await server.stop()
    await provider.shutdown()
  },
)
