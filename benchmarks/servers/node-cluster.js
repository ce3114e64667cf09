// Node's own way to use several cores: `cluster`, WORKERS processes each running plain node:http (node-http.js),
// the primary handing connections round-robin to them. For the scaling benchmark.
import cluster from 'node:cluster'

if (cluster.isPrimary) {
  const count = Number(process.env.WORKERS ?? 1)
  cluster.schedulingPolicy = cluster.SCHED_RR
  for (let i = 0; i < count; i++) cluster.fork()
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM')
    process.exit(0)
  })
} else {
  await import('./node-http.js')
}
