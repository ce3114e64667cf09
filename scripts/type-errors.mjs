// Type errors that point at the mistake (part of `make test-types`): each snippet below is a common mistake, and
// `tsc` must reject it with a message that names the cause, against the built package's declarations as a user's
// project sees them. `// @ts-expect-error` in the type tests proves that a mistake is an error; this proves the
// error says what to fix.
//
// Usage: node scripts/type-errors.mjs (after `make ts`).
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const ts = createRequire(import.meta.url)(join(root, 'node_modules', 'typescript'))

/** A mistake, and what the error must say (every string, in the diagnostics of its file). */
const CASES = [
  {
    name: 'a misspelt route option',
    code: `import { Gust } from 'gust'
import { z } from 'zod'
export const app = new Gust().post('/users', (c) => c.text('ok'), { validator: { json: z.object({ name: z.string() }) } })
`,
    says: ["'validator' does not exist in type 'RouteOptions", "Did you mean to write 'validate'?"],
  },
  {
    name: 'a handler returning a number',
    code: `import { Gust } from 'gust'
export const app = new Gust().get('/n', () => 42)
`,
    says: ["Type 'number' is not assignable to type 'HandlerResult"],
  },
  {
    name: "c.req.valid('json') on a route without a json schema",
    code: `import { Gust } from 'gust'
export const app = new Gust().post('/users', (c) => c.json(c.req.valid('json')))
`,
    says: [`not assignable to parameter of type '"valid('json') needs a json schema in this route's validate option"'`],
  },
  {
    name: "c.req.valid('form') on a route with only a json schema",
    code: `import { Gust } from 'gust'
import { z } from 'zod'
export const app = new Gust().post('/users', (c) => c.json(c.req.valid('form')), { validate: { json: z.object({ name: z.string() }) } })
`,
    says: [`"valid('form') needs a form schema in this route's validate option"`],
  },
]

const dir = join(root, 'target', 'type-errors')
rmSync(dir, { recursive: true, force: true })
mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
symlinkSync(join(root, 'packages', 'gust'), join(dir, 'node_modules', 'gust'), 'dir')
symlinkSync(join(root, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir')
symlinkSync(join(root, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir')
writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n')
const files = CASES.map((c, i) => {
  const file = join(dir, `case-${i}.ts`)
  writeFileSync(file, c.code)
  return file
})
const program = ts.createProgram(files, {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  noEmit: true,
  types: ['node'],
})
let failures = 0
for (const [i, c] of CASES.entries()) {
  const said = ts
    .getPreEmitDiagnostics(program, program.getSourceFile(files[i]))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    .join('\n')
  const missing = c.says.filter((text) => !said.includes(text))
  if (said === '') {
    failures++
    console.log(`FAIL ${c.name}: no type error at all`)
  } else if (missing.length > 0) {
    failures++
    console.log(`FAIL ${c.name}: the error does not say ${missing.map((m) => JSON.stringify(m)).join(', ')}; it says:\n${said}`)
  } else {
    console.log(`ok   ${c.name}`)
  }
}
if (failures > 0) process.exit(1)
