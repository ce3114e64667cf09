# Two commands work on a fresh clone: `make demo` and `make test`. Both go through `make build`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
NAPI := node_modules/.bin/napi
TSC := node_modules/.bin/tsc
DEMO_RUNTIME ?= node

.PHONY: install build native ts demo test test-rust test-types test-node test-bun test-bench bench hyper-baseline

install:
	@command -v bun >/dev/null 2>&1 || { echo "Bun not found: installing it with npm"; npm install -g bun; }
	@command -v cargo >/dev/null 2>&1 || { echo "cargo is required: install Rust from https://rustup.rs"; exit 1; }
	bun install --frozen-lockfile

native: install
	$(NAPI) build --platform --release --manifest-path crates/gust-napi/Cargo.toml \
		--package-json-path packages/gust/package.json --output-dir packages/gust/native \
		--js binding.cjs --dts binding.d.cts

ts: install
	node scripts/build-package.mjs

build: native ts

demo: build
	$(DEMO_RUNTIME) examples/demo.js

test: build test-rust test-types test-node test-bun test-bench

test-rust:
	cargo test -p gust-core

test-types:
	rm -rf packages/gust/dist-test
	$(TSC) -p packages/gust/tsconfig.test.json

test-node: test-types
	node --test --test-concurrency=1 packages/gust/dist-test/test/*.test.js

test-bun: test-types
	bun test --timeout 30000 ./packages/gust/dist-test/test/

hyper-baseline:
	cargo build --release -p hyper-baseline

# Every benchmark contestant starts and answers every route correctly (no load).
test-bench: build hyper-baseline
	./benchmarks/compare-fair.sh --skip-build --validate-only

# The full benchmark; pass options with BENCH_ARGS, e.g. make bench BENCH_ARGS="--quick --only gust,bun-serve".
bench: build hyper-baseline
	./benchmarks/compare-fair.sh --skip-build $(BENCH_ARGS)
