#!/usr/bin/env bash
# `make pack`: cross-builds every Linux binary this machine can build, checks each one, and writes every
# tarball (the main `gust` package and one package per built platform) into artifacts/.
#
# Tools come from package registries only: the Rust std for each target from rustup, zig and cargo-zigbuild
# from PyPI (pinned, in .tools/venv: scripts/zig.sh). Needs `make build` first (the generated loader and the TypeScript build).
# Per-target linker flags (musl's dynamic CRT) live in .cargo/config.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/platforms.sh

source scripts/zig.sh
zig_tools || { echo "pack: zig and cargo-zigbuild could not be installed from PyPI (python3 venv needed)" >&2; exit 1; }

# PACK_ONLY: the platform packages to build (space-separated npm platform dirs), or `host` for this machine's
# glibc one; `make test` packs only what its install test installs, `make pack` every one.
host=$(host_glibc_platform)
if [[ ${PACK_ONLY:-} == host ]]; then
  [[ -n $host ]] || { echo "pack: no Linux glibc package for this machine ($(uname -sm))" >&2; exit 1; }
  PACK_ONLY=$host
fi
export PACK_ONLY
selected=()
for line in "${LINUX_TARGETS[@]}"; do
  read -r _ _ platform <<<"$line"
  if [[ -z ${PACK_ONLY:-} || " $PACK_ONLY " == *" $platform "* ]]; then selected+=("$line"); fi
done
if [[ ${#selected[@]} -eq 0 ]]; then echo "pack: PACK_ONLY=$PACK_ONLY names no Linux platform" >&2; exit 1; fi
LINUX_TARGETS=("${selected[@]}")

triples=()
for line in "${LINUX_TARGETS[@]}"; do read -r triple _ _ <<<"$line"; triples+=("$triple"); done
rustup target add "${triples[@]}"

# PACK_HOST_FROM_BUILD=1 (`make test`): this machine's glibc package takes the addon `make native` built, which
# on a Linux glibc host is this same zig build for glibc 2.17 (scripts/native.sh); check-binaries.mjs below
# still checks its symbol versions, so a host-built file would fail there rather than ship.
for line in "${LINUX_TARGETS[@]}"; do
  read -r triple zig_target platform <<<"$line"
  built="packages/gust/native/gust.$platform.node"
  if [[ ${PACK_HOST_FROM_BUILD:-} == 1 && $platform == "$host" && -f $built ]]; then
    echo "pack: $platform from make native ($built)"
    cp "$built" "packages/gust/npm/$platform/gust.$platform.node"
    continue
  fi
  echo "pack: building $platform ($zig_target)"
  cargo zigbuild --quiet --release -p gust-napi --target "$zig_target"
  cp "target/$triple/release/libgust_napi.so" "packages/gust/npm/$platform/gust.$platform.node"
done

node scripts/check-binaries.mjs

rm -rf artifacts
mkdir -p artifacts
for line in "${LINUX_TARGETS[@]}"; do
  read -r _ _ platform <<<"$line"
  cp LICENSE "packages/gust/npm/$platform/LICENSE"
  (cd "packages/gust/npm/$platform" && npm pack --silent --pack-destination ../../../../artifacts >/dev/null)
done
# `npm pack` runs the package's prepack: dist is rebuilt from source and LICENSE copied in.
(cd packages/gust && npm pack --silent --pack-destination ../../artifacts >/dev/null)
ls -l artifacts
echo "pack: done in ${SECONDS}s"
