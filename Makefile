# mlbench: the README's two commands.
#   make run    install dependencies, build, benchmark the example pipelines, then `mlbench demo`:
#               the worked example's six steps on the reference image-classification workload
#   make test   install dependencies, build, run every test through ctest
# Also: make build, make asan-test (ASan/UBSan build of the tests), make bench, make clean,
# make fuzz (the libFuzzer targets of tests/fuzz/, FUZZ_SECONDS each, default 300) and
# make fuzz-ci (30 s each, what CI runs).
# Installing (README.md, "Install"):
#   make install [PREFIX=/usr/local] [DESTDIR=DIR]   binaries, libraries, headers, man pages,
#                                                    completions, docs
#   make uninstall [DESTDIR=DIR]   removes what the last make install installed (its manifest)
#   make deb                       the Debian packages, in $(BUILD)/ (mlbench, mlbench-cuda)
# Warnings are errors when CI is set (CI=true make test) or with WERROR=ON.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
WERROR ?= $(if $(CI),ON,OFF)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 300
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps build run test asan-test fuzz fuzz-ci bench clean install uninstall deb

all: build

deps:
	scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DMLBENCH_WERROR=$(WERROR) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# The build is configured for PREFIX, so that its directories are the ones Debian uses there
# (GNUInstallDirs: /usr/lib/<multiarch> under /usr); the manifest lists every file installed.
install: deps
	cmake -S . -B $(BUILD) -DMLBENCH_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

uninstall:
	DESTDIR="$(DESTDIR)" packaging/uninstall.sh $(BUILD)/install_manifest.txt

deb: deps
	cmake -S . -B $(BUILD) -DMLBENCH_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=/usr $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && cpack -G DEB

run: build
	$(BUILD)/mlbench run -w 1 -l example-c -- $(BUILD)/examples/example-pipeline
	PYTHONPATH=$(CURDIR)/python $(BUILD)/mlbench run -w 1 -l example-python -- python3 examples/pipeline.py
	$(BUILD)/mlbench demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan-test: deps
	cmake -S . -B $(BUILD)-asan -DMLBENCH_SANITIZE=ON -DMLBENCH_WERROR=$(WERROR) -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

fuzz: deps
	WERROR=$(WERROR) JOBS=$(JOBS) tests/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-ci: deps
	WERROR=$(WERROR) JOBS=$(JOBS) tests/fuzz/run.sh 30

bench: build
	scripts/install-deps.sh --bench
	bench/overhead.sh
	bench/marker-cost.sh
	bench/marker-flood.sh
	bench/sampler-cost.sh
	bench/nvtx-cost.sh
	bench/cnn-vs-torch.sh
	bench/cnn-bf16.sh
	bench/input-pipeline.sh
	bench/logreg-vs-sklearn.sh
	bench/time-to-accuracy.sh
	bench/sweep-false-alarms.sh
	bench/load-capacity.sh
	bench/load-latency.sh
	bench/load-syscalls.sh
	bench/serve-throughput.sh
	bench/store-scale.sh
	bench/ranks.sh

clean:
	rm -rf $(BUILD) $(BUILD)-asan build-fuzz
