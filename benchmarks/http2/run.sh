#!/usr/bin/env bash
# A quick HTTP/2 measurement, not yet a compare-fair scenario: each server pinned to core 0, h2load on core 1
# (16 connections × 32 streams, h2c by prior knowledge), a 2 s warm-up then 5 s measured, server CPU per request
# from /proc, contestants interleaved over ROUNDS rounds. Every server's answer is checked before its load.
# Needs h2load (apt-get install nghttp2-client), curl with HTTP/2, bun, and `make build`.
# Usage: benchmarks/http2/run.sh [rounds] [node binary]
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS=${1:-3}
NODE=${2:-node}
measure() {
  local name=$1; shift
  local port=$((40000 + RANDOM % 1000))
  PORT=$port taskset -c 0 "$@" > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -s --http2-prior-knowledge "http://127.0.0.1:$port/" -o /dev/null && break; sleep 0.1; done
  local body; body=$(curl -s --http2-prior-knowledge "http://127.0.0.1:$port/")
  if [ "$body" != "Hi" ]; then echo "$name: wrong answer '$body'"; kill $pid; return 1; fi
  taskset -c 1 h2load -c 16 -m 32 -D 2 "http://127.0.0.1:$port/" > /dev/null 2>&1
  local t0; t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  local out; out=$(taskset -c 1 h2load -c 16 -m 32 -D 5 "http://127.0.0.1:$port/" 2>&1)
  local t1; t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  local done ok; done=$(echo "$out" | grep -oP 'requests: \d+ total, \d+ started, \K\d+(?= done)')
  ok=$(echo "$out" | grep -oP 'status codes: \K\d+(?= 2xx)')
  [ "$ok" = "$done" ] || echo "$name: only $ok of $done answers were 2xx"
  printf '%s\t%d\t%.2f\n' "$name" $((done / 5)) "$(echo "($t1-$t0)*1000000/$(getconf CLK_TCK)/$done" | bc -l)"
}
echo -e "contestant\treq/s\tserver CPU µs/request"
for _ in $(seq "$ROUNDS"); do
  measure gust@node "$NODE" gust.mjs
  TURBO=1 measure gust-turbo@node "$NODE" gust.mjs
  measure gust@bun bun gust.mjs
  measure node:http2 "$NODE" node-http2.mjs
  measure bun-serve-http2 bun bun-http2.mjs
done
