#!/bin/bash
# Packs the fuzz targets `make fuzz` built (target/x86_64-unknown-linux-gnu/release/<target>, AddressSanitizer
# and overflow checks) and the corpus grown so far (target/fuzz-corpus) into one file, for a long run on a bigger
# machine that has no Rust toolchain: there, `fuzz/run-bundle.sh` runs them. Usage: fuzz/bundle.sh [out.tar.xz]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/fuzz-bundle.tar.xz}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in $(ls fuzz/fuzz_targets | sed 's/\.rs$//'); do
  strip -o "$work/$t" "target/x86_64-unknown-linux-gnu/release/$t"
done
mkdir -p "$work/corpus" target/fuzz-corpus
cp -r target/fuzz-corpus/. "$work/corpus/"
tar cf - -C "$work" . | xz -T0 -6 > "$out"
echo "$out: $(du -h "$out" | cut -f1)"
