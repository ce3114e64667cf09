# Two commands work on a fresh clone: `make demo` and `make test`. Both go through `make build`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
TSC := node_modules/.bin/tsc
DEMO_RUNTIME ?= node
# The JS suites run on the oldest Node the package supports (`engines`) and on the newest LTS line, both from
# the npm registry (scripts/node.sh), and on Bun.
NODE_OLDEST := 20.19.0
NODE_LTS := 26.10.0
NODE_OLDEST_BIN := .tools/node-$(NODE_OLDEST)/bin/node
NODE_LTS_BIN := .tools/node-$(NODE_LTS)/bin/node
NODES := $(NODE_OLDEST_BIN) $(NODE_LTS_BIN)

.PHONY: install build native ts demo pack nodes redis test test-layers test-rust test-fuzz fuzz soak test-soak test-http1 conformance test-types test-node test-bun test-autobahn test-h2spec test-package test-browser test-docs test-examples test-arm64 test-bench bench bench-scaling bench-pubsub bench-upload bench-cold-start hyper-baseline bombardier

install:
	@command -v bun >/dev/null 2>&1 || { echo "Bun not found: installing it with npm"; npm install -g bun; }
	@command -v cargo >/dev/null 2>&1 || { echo "cargo is required: install Rust from https://rustup.rs"; exit 1; }
	bun install --frozen-lockfile

# On a Linux glibc host, through zig against glibc 2.17, as the published package is built (scripts/native.sh).
native: install
	bash scripts/native.sh

ts: install
	node scripts/build-package.mjs

build: native ts

demo: build
	$(DEMO_RUNTIME) examples/demo.js

# Every tarball this machine can build (main package + the four Linux platform packages) into artifacts/.
pack: build
	PACK_HOST_FROM_BUILD=1 bash scripts/pack.sh

nodes:
	bash scripts/node.sh $(NODE_OLDEST) $(NODE_LTS)

test: build test-layers test-rust test-types test-node test-bun test-docs test-examples test-http1 test-soak test-autobahn test-h2spec test-package test-browser test-bench

# The engine's layers and the package's floors import only downwards, nothing imports in a loop, no hand-written
# file passes 500 lines (crates/gust-core/README.md, packages/gust/src/README.md); and the generated files the
# build just wrote (.gitattributes) are the committed ones: none was edited by hand or left uncommitted.
GENERATED := packages/gust/native/binding.cjs packages/gust/native/binding.d.cts packages/gust/src/native/layout.ts
test-layers: build
	node scripts/check-layers.mjs
	@git diff --quiet -- $(GENERATED) || { git diff --stat -- $(GENERATED); echo "make build rewrote generated files: commit them as the build writes them (never edit them by hand)"; exit 1; }

# With the fuzz doors built in, so every committed fuzz input (fuzz/corpus) is replayed on stable as well. The
# end-to-end suites run twice: on the threaded engine, then on the one-thread engine (tests/support/engine.rs).
# Redis (Debian's redis-server, which brings redis-cli) for the pub/sub relay's tests: each starts its own on a
# free port. Installed once when missing (root, or sudo otherwise); with GUST_REQUIRE_REDIS a suite that cannot
# find it fails instead of skipping.
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y redis-server; }

test-rust: redis
	GUST_REQUIRE_REDIS=1 cargo test -p gust-core --features fuzzing
	GUST_TEST_ENGINE=one-thread cargo test -p gust-core --features fuzzing --test '*'

# Coverage-guided fuzzing of the engine's own decoders (fuzz/, crates/gust-core/src/fuzzing/) with cargo-fuzz
# (libFuzzer: what hyper, h2 and rustls are fuzzed with, Rust's most used harness, and the only one of the three
# that needs nothing beyond rustup and cargo here; AddressSanitizer and overflow checks on). Needs a nightly
# toolchain, which rustup installs. `make fuzz FUZZ_SECONDS=600` for a long run. Not in `make test`: its
# sanitizer build alone took 7 of a fresh clone's 9 minutes for 4 s of fuzzing per target. `make test` (test-rust,
# tests/fuzz_corpus.rs) replays every committed input and 512 seeded mutants of each on stable, so a regression
# still fails CI; `make test-fuzz` is the short coverage-guided run.
FUZZ_SECONDS ?= 60
CARGO_FUZZ := .tools/cargo-fuzz/bin/cargo-fuzz
$(CARGO_FUZZ):
	rustup toolchain install nightly --profile minimal
	cargo install cargo-fuzz --version 0.13.2 --locked --root .tools/cargo-fuzz

fuzz: $(CARGO_FUZZ)
	node scripts/fuzz.mjs $(CARGO_FUZZ) --seconds $(FUZZ_SECONDS)

test-fuzz: $(CARGO_FUZZ)
	node scripts/fuzz.mjs $(CARGO_FUZZ) --seconds 4

# The soak (scripts/soak/run.mjs): a mixed load against one server on Node and one on Bun for SOAK_SECONDS each,
# every answer checked and counted, RSS and descriptors sampled; fails on a lost, doubled or wrong answer, a dead
# server, or memory or descriptors still growing after the warm-up. Then the same on two worker threads per
# runtime for SOAK_FAULT_SECONDS, a worker failing outside any handler every 12 s (its requests in flight may be
# answered 503 or cut off, nothing else). Results and an RSS chart in target/soak/. `make test` soaks each
# runtime on the default engine (one-thread) for 40 s (20 s of warm-up, then memory judged over 20 samples), and
# with workers for 30 s; then the threaded engine once per runtime for 30 s, with workers on Node and without on
# Bun (its I/O thread and its lanes to the workers are the runtime's same napi calls either way). The driver
# needs a global WebSocket: the newest Node.
SOAK_SECONDS ?= 3600
SOAK_FAULT_SECONDS ?= 600
SOAK := .tools/node-$(NODE_LTS)/bin/node scripts/soak/run.mjs
soak: build nodes
	GUST_ENGINE=one-thread $(SOAK) --runtime $(NODE_LTS_BIN) --seconds $(SOAK_SECONDS)
	GUST_ENGINE=one-thread $(SOAK) --runtime bun --seconds $(SOAK_SECONDS)
	GUST_ENGINE=one-thread $(SOAK) --runtime $(NODE_LTS_BIN) --seconds $(SOAK_FAULT_SECONDS) --workers 2
	GUST_ENGINE=one-thread $(SOAK) --runtime bun --seconds $(SOAK_FAULT_SECONDS) --workers 2
	GUST_ENGINE=threads $(SOAK) --runtime $(NODE_LTS_BIN) --seconds $(SOAK_SECONDS)
	GUST_ENGINE=threads $(SOAK) --runtime bun --seconds $(SOAK_SECONDS)
	GUST_ENGINE=threads $(SOAK) --runtime $(NODE_LTS_BIN) --seconds $(SOAK_FAULT_SECONDS) --workers 2
	GUST_ENGINE=threads $(SOAK) --runtime bun --seconds $(SOAK_FAULT_SECONDS) --workers 2

test-soak: build nodes
	GUST_ENGINE=one-thread $(SOAK) --runtime $(NODE_LTS_BIN) --seconds 40
	GUST_ENGINE=one-thread $(SOAK) --runtime bun --seconds 40
	GUST_ENGINE=one-thread $(SOAK) --runtime $(NODE_LTS_BIN) --seconds 30 --workers 2
	GUST_ENGINE=one-thread $(SOAK) --runtime bun --seconds 30 --workers 2
	GUST_ENGINE=threads $(SOAK) --runtime $(NODE_LTS_BIN) --seconds 30 --workers 2
	GUST_ENGINE=threads $(SOAK) --runtime bun --seconds 30

# Autobahn's fuzzing-client cases 1–10 and 12–13 (permessage-deflate, shared and dedicated compression) against
# Gust echo servers, through kosoku (PyPI: Autobahn's case files driven from Rust, no Docker), once: the engine
# owns the frames, so a second runtime would prove nothing more. All of them on the default engine (one-thread);
# on the threaded one, whose frames are the same code on other threads, the framing and protocol cases (1–7,
# 10), not again the large messages and compression (9, 12, 13: 4 of the 4.5 minutes).
KOSOKU := .tools/autobahn/bin/kosoku
$(KOSOKU):
	python3 -m venv .tools/autobahn
	.tools/autobahn/bin/pip install --quiet kosoku==0.1.0

test-autobahn: $(KOSOKU)
	GUST_ENGINE=one-thread node scripts/autobahn.mjs $(KOSOKU)
	GUST_ENGINE=threads node scripts/autobahn.mjs $(KOSOKU) '1.*' '2.*' '3.*' '4.*' '5.*' '6.*' '7.*' '10.*'

# h1spec's and Http11Probe's HTTP/1.1 cases (ported as data, scripts/conformance/) against Gust, once: the engine
# parses HTTP/1.1, so a second runtime would prove nothing more. Every h1spec case must pass, and a scored
# Http11Probe case may fail only with its reason recorded (scripts/conformance/gust-h1.mjs).
test-http1: build
	GUST_ENGINE=threads node scripts/conformance/http1-check.mjs
	GUST_ENGINE=one-thread node scripts/conformance/http1-check.mjs

# h2spec (HTTP/2 conformance, Go, from the module proxy) against Gust over TLS and h2c, once: the engine owns the
# frames, so a second runtime would prove nothing more.
H2SPEC := .tools/go/bin/h2spec
$(H2SPEC):
	GOBIN=$(CURDIR)/.tools/go/bin go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible

test-h2spec: $(H2SPEC)
	node scripts/h2spec.mjs $(H2SPEC)

# Autobahn and h2spec against Gust and the best peers (Bun.serve, ws, node:http2); rewrites CONFORMANCE.md.
conformance: build nodes $(KOSOKU) $(H2SPEC)
	.tools/node-$(NODE_LTS)/bin/node scripts/conformance/run.mjs $(KOSOKU) $(H2SPEC)

# bombardier (Go, from the module proxy), a load tool for compare-fair where wrk is not installed (macOS without
# Homebrew's wrk, say): its answers are checked by a pass after each run, not under load (benchmarks/harness/
# answer-check.mjs). compare-fair finds it in .tools/go/bin. v1.2.6 is the module proxy's latest.
BOMBARDIER := .tools/go/bin/bombardier
$(BOMBARDIER):
	GOBIN=$(CURDIR)/.tools/go/bin go install github.com/codesenberg/bombardier@v1.2.6

bombardier: $(BOMBARDIER)

test-types:
	rm -rf packages/gust/dist-test
	$(TSC) -p packages/gust/tsconfig.test.json
	node scripts/type-errors.mjs

# Each suite runs on both engines, named by GUST_ENGINE, on the newest Node and on Bun; on the oldest Node, on the
# default engine only: what differs between Node versions is the runtime under the package, which that pass
# covers, while the threaded engine's own path (its threads, its napi calls) is the same on every Node.
#
# Node 20 runs each file in its own process; the newest Node runs them all in one (`--test-isolation=none`, as
# Bun always does), which saves a process start per file (about 35 s a pass) and also shows that no file depends
# on a fresh process. The threaded passes stream 256 MiB instead of 1 GiB in the bounded-memory tests (the limit is
# 64 MiB either way, so keeping any whole body still fails).
test-node: test-types nodes redis
	for run in "$(NODE_OLDEST_BIN) one-thread 1024" "$(NODE_LTS_BIN) threads 256 --test-isolation=none" "$(NODE_LTS_BIN) one-thread 1024 --test-isolation=none"; do set -- $$run; \
		echo "== $$($$1 --version), engine $$2"; \
		GUST_REQUIRE_REDIS=1 GUST_TEST_NODE=$$1 GUST_ENGINE=$$2 GUST_LARGE_MIB=$$3 $$1 --test --test-concurrency=1 $${4:-} packages/gust/dist-test/test/*.test.js || exit 1; done

test-bun: test-types nodes redis
	GUST_REQUIRE_REDIS=1 GUST_TEST_NODE=.tools/node-$(NODE_LTS)/bin/node GUST_ENGINE=threads GUST_LARGE_MIB=256 bun test --timeout 30000 ./packages/gust/dist-test/test/
	GUST_REQUIRE_REDIS=1 GUST_TEST_NODE=.tools/node-$(NODE_LTS)/bin/node GUST_ENGINE=one-thread bun test --timeout 30000 ./packages/gust/dist-test/test/

# Every ```ts and ```js block of the README, the npm page and docs/ runs against the built package and is
# type-checked, and every link between those pages resolves (scripts/docs-check/run.mjs, a few seconds; the
# convention for writers is in docs/README.md). Once, on the newest Node, which runs TypeScript by stripping types.
test-docs: build nodes
	.tools/node-$(NODE_LTS)/bin/node scripts/docs-check/run.mjs

# Every example app (examples/*/test.mjs) started as its README says, on a free port, and checked over real
# sockets (HTTP, WebSocket, SSE, uploads) on Bun and the newest Node, which has a global WebSocket; about 10 s.
test-examples: build nodes redis
	node scripts/examples.mjs --runtime bun --runtime .tools/node-$(NODE_LTS)/bin/node

# The packed tarballs as users get them: publint and arethetypeswrong (import and require), then installed with
# npm and with bun into fresh projects and run on every runtime (scripts/install-test/run.mjs). Packs the main
# package and this machine's platform package, the one installed here, from the addon `make build` made (the
# same zig build for glibc 2.17, scripts/native.sh); `make pack` cross-builds every Linux one.
test-package: build nodes
	PACK_ONLY=host PACK_HOST_FROM_BUILD=1 bash scripts/pack.sh
	node_modules/.bin/publint packages/gust --strict
	node_modules/.bin/attw artifacts/gust-*.tgz
	node scripts/install-test/run.mjs $(foreach node,$(NODES),--runtime $(node)) --runtime bun

# In headless Chromium, once: the OpenAPI documentation pages (Scalar, Swagger UI, served from their npm
# packages) must each list the app's operations (scripts/openapi-browser.mjs), and gust/client's built file,
# imported by a page, must call the app as its types say (scripts/client-browser.mjs); a few seconds each.
# Chromium is Debian's, installed once when missing (root, or sudo otherwise).
test-browser: build
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y chromium; }
	node scripts/openapi-browser.mjs
	node scripts/client-browser.mjs
	node scripts/websocket-browser.mjs

# Not in `make test` (needs root for apt): the arm64 glibc package served by an arm64 Node under qemu-user.
test-arm64: pack
	NODE_OLDEST=$(NODE_OLDEST) bash scripts/smoke-arm64.sh

# The Rust contestant and the WebSocket load client (compare-fair's ws-* scenarios).
hyper-baseline:
	cargo build --release -p hyper-baseline -p ws-load

# The harness's own tests, then every benchmark contestant starts and answers every route correctly (no load).
test-bench: build hyper-baseline nodes redis
	node --test benchmarks/harness/
	./benchmarks/compare-fair.sh --skip-build --validate-only --all --node .tools/node-$(NODE_LTS)/bin/node
	for p in https handshake h2c h2; do ./benchmarks/compare-fair.sh --skip-build --validate-only --all --protocol $$p --node .tools/node-$(NODE_LTS)/bin/node || exit 1; done
	node benchmarks/scaling.mjs --validate-only --counts 2 --node .tools/node-$(NODE_LTS)/bin/node
	node benchmarks/pubsub.mjs --validate-only --node .tools/node-$(NODE_LTS)/bin/node
	node benchmarks/upload-rss.mjs --mib 8 --rounds 1 --node .tools/node-$(NODE_LTS)/bin/node
	node benchmarks/cold-start.mjs --rounds 1 --node .tools/node-$(NODE_LTS)/bin/node

# The memory a 256 MiB upload read as a stream costs, on both engines against node:http and Bun.serve.
bench-upload: build nodes
	node benchmarks/upload-rss.mjs --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)

# Cold start: spawning the runtime to the first whole answer, Gust against node:http and Bun.serve, interleaved
# rounds, medians and spreads (benchmarks/cold-start.mjs). Part of `make bench` too.
bench-cold-start: build nodes
	node benchmarks/cold-start.mjs --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)

# Several cores: Gust's workers against Bun reusePort processes and Node cluster (needs N + 2 cores for each N,
# 16 for N = 8); pass options with BENCH_ARGS, e.g. make bench-scaling BENCH_ARGS="--counts 1,2,4".
bench-scaling: build nodes
	node benchmarks/scaling.mjs --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)

# Pub/sub across two processes through one Redis (benchmarks/pubsub.mjs): Gust's relay on Bun and on Node against
# Bun.serve relaying through the `redis` npm client; 1,000 subscribers per server, then a latency run at 10,000
# messages a second; results in benchmarks/results/pubsub-*.md. Pass options with BENCH_ARGS.
bench-pubsub: build hyper-baseline nodes redis
	node benchmarks/pubsub.mjs --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)
	node benchmarks/pubsub.mjs --node .tools/node-$(NODE_LTS)/bin/node --subscribers 10 --rate 10000 $(BENCH_ARGS)

# The full benchmark, Node contestants on the newest LTS, then `/`, `/id/:id` and `/json` again at 64
# connections (fewer connections batch less: the crossing's fixed cost shows; results/latest-c64.json), then the
# seed's own method: the Bun frameworks with bombardier at 500 connections (results/latest-bombardier.json). The
# README's block and chart come from these three; `make test` fails when they are of another engine default or
# results format (benchmarks/harness/readme.test.mjs). Pass options to all three with BENCH_ARGS, e.g.
# make bench BENCH_ARGS="--rounds 3 --duration 3".
bench: build hyper-baseline nodes $(BOMBARDIER)
	./benchmarks/compare-fair.sh --skip-build --all --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)
	./benchmarks/compare-fair.sh --skip-build --all --node .tools/node-$(NODE_LTS)/bin/node --connections 64 \
		--routes /,/id/:id,/json --latency none --idle 0 $(BENCH_ARGS)
	./benchmarks/compare-fair.sh --skip-build --tool bombardier --node .tools/node-$(NODE_LTS)/bin/node $(BENCH_ARGS)
	node benchmarks/cold-start.mjs --node .tools/node-$(NODE_LTS)/bin/node
