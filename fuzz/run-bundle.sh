#!/bin/bash
# Runs a bundle from fuzz/bundle.sh: every target at once for SECONDS, from the committed corpus (fuzz/corpus,
# run from the repository's root) and the bundle's, each process with its own seed; the compressing targets,
# 100 times slower per input, get more processes. The libFuzzer flags are scripts/fuzz.mjs's. Prints executions
# and coverage per target and the total; a crash's input goes to $OUT/artifacts and fails the run.
# Usage: OUT=dir fuzz/run-bundle.sh <bundle.tar.xz> [SECONDS] (16 processes for ten targets: a 16-core machine)
set -u
bundle=$1
secs=${2:-400}
out=${OUT:?set OUT to a directory for logs and crashes}
work=$(mktemp -d)
tar xJf "$bundle" -C "$work"
mkdir -p "$out/logs" "$out/artifacts"
targets=$(cd "$work" && for f in *; do [ -f "$f" ] && [ -x "$f" ] && echo "$f"; done)
# One process per target; the slowest per input get more (the 16 cores' worth for ten targets).
declare -A extra=([content_coding]=2 [ws_deflate]=1 [connection]=1 [accept_encoding]=1 [ws_extension]=1)
pids=()
for t in $targets; do
  for k in $(seq 0 "${extra[$t]:-0}"); do
    mkdir -p "$work/new/$t-$k"
    "$work/$t" "$work/new/$t-$k" "fuzz/corpus/$t" "$work/corpus/$t" -max_total_time="$secs" -print_final_stats=1 \
      -max_len=65536 -rss_limit_mb=2048 -timeout=10 -seed=$((1000 + k * 7919 + RANDOM)) \
      -artifact_prefix="$out/artifacts/$t-" > "$out/logs/$t-$k.log" 2>&1 &
    pids+=($!)
  done
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
total=0
for t in $targets; do
  n=0
  for f in "$out/logs/$t"-*.log; do
    e=$(grep -o 'number_of_executed_units: *[0-9]*' "$f" | grep -o '[0-9]*$')
    n=$((n + ${e:-0}))
  done
  cov=$(for f in "$out/logs/$t"-*.log; do grep -o 'cov: [0-9]*' "$f" | tail -1 | grep -o '[0-9]*'; done | sort -n | tail -1)
  echo "$t executions=$n cov=$cov processes=$(ls "$out/logs/$t"-*.log | wc -l)"
  total=$((total + n))
done
echo "total executions=$total, processes that failed: $failed"
rm -rf "$work"
[ "$failed" -eq 0 ]
