// OpenTelemetry tracing for a Gust app: `node examples/opentelemetry/server.js` (or `bun …`). Every request
// becomes a server span, printed to the console here; swap ConsoleSpanExporter for an OTLP exporter (and
// SimpleSpanProcessor for BatchSpanProcessor) to send them to a collector, Jaeger or Tempo.
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

import { buildApp } from './app.js'

const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] })
const app = buildApp(provider.getTracer('gust-example'))

const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`Traced app on ${server.url}
  curl ${server.url}/api/users/42
  curl -H 'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' ${server.url}/api/users/1
  curl ${server.url}/boom`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    // Spans still in the processor are exported before the process ends.
    await provider.shutdown()
    process.exit(0)
  })
}
