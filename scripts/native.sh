#!/usr/bin/env bash
# `make native`: the release addon into packages/gust/native, with its generated loader and declarations.
#
# On a Linux glibc host (x64, arm64) it is built the way `make pack` builds the published package for this
# machine: through zig, against glibc 2.17 (scripts/platforms.sh). So what the suites test, what `make bench`
# measures and what users install are one binary, and `make test`'s install test packs this file instead of
# building the release addon a second time (about 3 of a fresh clone's minutes). Elsewhere (macOS, Windows,
# musl) it is napi's plain build for the host.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/platforms.sh

args=(--platform --release --manifest-path crates/gust-napi/Cargo.toml
  --package-json-path packages/gust/package.json --output-dir packages/gust/native
  --js binding.cjs --dts binding.d.cts)

host=""
if [[ $(uname -s) == Linux ]] && getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
  case "$(uname -m)" in
    x86_64) host=linux-x64-gnu ;;
    aarch64 | arm64) host=linux-arm64-gnu ;;
  esac
fi
if [[ -n $host ]]; then
  for line in "${LINUX_TARGETS[@]}"; do
    read -r triple zig_target platform <<<"$line"
    [[ $platform == "$host" ]] || continue
    source scripts/zig.sh
    rustup target add "$triple" >/dev/null 2>&1 || true
    node_modules/.bin/napi build "${args[@]}" --cross-compile --target "$zig_target"
  done
else
  node_modules/.bin/napi build "${args[@]}"
fi
node scripts/gen-wire-layout.mjs
