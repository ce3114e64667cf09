#!/usr/bin/env bash
# `make native`: the release addon into packages/gust/native, with its generated loader and declarations.
#
# On a Linux glibc host (x64, arm64) it is built the way `make pack` builds the published package for this
# machine: through zig, against glibc 2.17 (scripts/platforms.sh). So what the suites test, what `make bench`
# measures and what users install are one binary, and `make test`'s install test packs this file instead of
# building the release addon a second time (about 3 of a fresh clone's minutes). Elsewhere (macOS, Windows,
# musl), or where zig cannot be installed, it is napi's plain build for the host (`make test` then fails at the
# packed binary's glibc check, `make demo` runs).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/platforms.sh
source scripts/zig.sh

args=(--platform --release --manifest-path crates/gust-napi/Cargo.toml
  --package-json-path packages/gust/package.json --output-dir packages/gust/native
  --js binding.cjs --dts binding.d.cts)

host=$(host_glibc_platform)
zig_target=""
for line in "${LINUX_TARGETS[@]}"; do
  read -r triple target platform <<<"$line"
  if [[ -n $host && $platform == "$host" ]]; then zig_target=$target; fi
done
if [[ -n $zig_target ]] && ! zig_tools; then
  echo "native: zig could not be installed (python3's venv module and PyPI are needed): building for this host only" >&2
  zig_target=""
fi
if [[ -n $zig_target ]]; then
  rustup target add "${zig_target%%.*}" >/dev/null 2>&1 || true
  node_modules/.bin/napi build "${args[@]}" --cross-compile --target "$zig_target"
else
  node_modules/.bin/napi build "${args[@]}"
fi
node scripts/gen-wire-layout.mjs
