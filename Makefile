# Thin entry points for the README's commands. The build itself is CMake's.
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

# Make's "Entering directory" lines for every target CMake's makefiles recurse into say nothing a
# build's output needs; errors and the progress lines stay.
MAKEFLAGS += --no-print-directory

.PHONY: all deps build demo test build-asan test-asan fuzz bench ci format clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DMF_WERROR=ON $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Runs the main job on the embedded default (scripted model, local store). The build's output goes
# to $(BUILD)/demo-build.log, shown only when the build fails, so the demo prints its own steps.
demo:
	@mkdir -p $(BUILD)
	@echo "demo: building (log in $(BUILD)/demo-build.log)" >&2
	@$(MAKE) build >$(BUILD)/demo-build.log 2>&1 || { cat $(BUILD)/demo-build.log >&2; exit 1; }
	@MF_BIN=$(BUILD)/bin scripts/demo.sh

# Builds everything and runs every test suite (unit, conformance, end-to-end).
test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

# The test suite once more under AddressSanitizer and UndefinedBehaviorSanitizer, at -O1 as
# AddressSanitizer's documentation advises for a usable speed, with line tables only (-g1: all a
# report's stack needs). The install check runs in the release build only: it repeats every
# end-to-end script against installed copies.
build-asan: deps
	cmake -S . -B build-asan -DMF_WERROR=ON -DMF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
	      -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DMF_SANITIZE=address,undefined $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)

test-asan: build-asan
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --test-dir build-asan -j $(JOBS) --output-on-failure

# libFuzzer on the strict JSON and YAML readers, on rescue and on the wire codec for
# MF_FUZZ_SECONDS (default 60).
fuzz: deps
	scripts/fuzz.sh

bench: build
	MF_BIN=$(BUILD)/bin bench/run.sh

ci: test test-asan fuzz

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-fuzz
