// Bun's way to use several cores: WORKERS processes of bun-serve.js on one port with `reusePort` (the kernel
// spreads connections; Linux only). For the scaling benchmark.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const count = Number(process.env.WORKERS ?? 1)
const entry = fileURLToPath(new URL('./bun-serve.js', import.meta.url))
const children = Array.from({ length: count }, () =>
  spawn(process.execPath, [entry], { stdio: 'inherit', env: { ...process.env, REUSE_PORT: '1' } }),
)
process.on('SIGTERM', () => {
  for (const child of children) child.kill('SIGTERM')
  process.exit(0)
})
