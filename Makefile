# Thin entry points for the README's commands. The build itself is CMake's.
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build demo test test-asan fuzz bench ci format clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DMF_WERROR=ON $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Runs the main job on the embedded default (scripted model, local store).
demo: build
	@MF_BIN=$(BUILD)/bin scripts/demo.sh

# Builds everything and runs every test suite (unit, conformance, end-to-end).
test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

# The test suite once more under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B build-asan -DMF_WERROR=ON -DMF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
	      -DMF_SANITIZE=address,undefined $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
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
