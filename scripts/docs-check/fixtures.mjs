// The files the docs' examples read, written into the sandbox the blocks run in (their working directory), so
// an example can say `app.static('/assets', './public')` or `tls: { cert: './cert.pem', key: './key.pem' }` as
// an app would and still run here.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** Test certificates shared with the engine's tests: `cert.pem` is for `localhost` and `127.0.0.1`. */
const TLS = 'crates/gust-core/tests/fixtures/tls'

const FILES = {
  'public/index.html': '<!doctype html><title>Home</title><h1>Hello from Gust</h1>\n',
  'public/app.css': 'body { font-family: system-ui; }\n',
  'public/favicon.ico': Buffer.from([0, 0, 1, 0]),
  'dist/assets/app.3f9c.js': 'console.log("app")\n',
  'reports/latest.pdf': '%PDF-1.4\n% a stand-in report\n',
  'media/video.mp4': Buffer.alloc(4096, 7),
}

const COPIES = {
  'cert.pem': `${TLS}/cert.pem`,
  'key.pem': `${TLS}/key.pem`,
  'ca.pem': `${TLS}/ca.pem`,
  'clients-ca.pem': `${TLS}/client-ca.pem`,
  'client-cert.pem': `${TLS}/client-cert.pem`,
  'client-key.pem': `${TLS}/client-key.pem`,
  'api-cert.pem': `${TLS}/other-cert.pem`,
  'api-key.pem': `${TLS}/other-key.pem`,
}

export function writeFixtures(sandbox, root) {
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(sandbox, path)), { recursive: true })
    writeFileSync(join(sandbox, path), content)
  }
  for (const [path, from] of Object.entries(COPIES)) copyFileSync(join(root, from), join(sandbox, path))
}
