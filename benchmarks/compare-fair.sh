#!/usr/bin/env bash
# compare-fair: an honest, reproducible benchmark of Gust against Bun.serve, Elysia, Hono, Express, Fastify and
# plain hyper. Builds what it needs, then runs benchmarks/harness/compare-fair.mjs. `--help` lists the options.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

skip_build=0
for arg in "$@"; do [ "$arg" = "--skip-build" ] && skip_build=1; done
for arg in "$@"; do case "$arg" in -h|--help) exec node benchmarks/harness/compare-fair.mjs --help ;; esac; done

if [ "$skip_build" = 0 ]; then
  make build
  cargo build --release -p hyper-baseline -p ws-load
fi

validate_only=0
for arg in "$@"; do [ "$arg" = "--validate-only" ] && validate_only=1; done
# wrk checks every answer under load; bombardier (installed into .tools/go/bin by make bombardier, where
# compare-fair finds it) and oha are checked by a pass after each run.
if [ "$validate_only" = 0 ] && ! command -v wrk >/dev/null && ! command -v bombardier >/dev/null && [ ! -x .tools/go/bin/bombardier ] && ! command -v oha >/dev/null; then
  echo "No load tool found (wrk, bombardier or oha): installing one."
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get install -y wrk
  elif command -v go >/dev/null; then
    make bombardier
  else
    cargo install oha --locked
  fi
fi

# HTTP/2 runs need h2load (Debian's nghttp2-client).
for arg in "$@"; do
  case "$arg" in h2|h2c)
    if [ "$validate_only" = 0 ] && ! command -v h2load >/dev/null; then
      echo "--protocol $arg needs h2load: installing nghttp2-client."
      if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then apt-get install -y nghttp2-client; else echo "install h2load (nghttp2) first"; exit 2; fi
    fi ;;
  esac
done

# The idle-connection table holds 10,000 sockets open on each side (--idle); let both ends have the descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec node benchmarks/harness/compare-fair.mjs "$@"
