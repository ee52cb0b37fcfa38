# Thin wrapper around Meson for the README's commands.
#   make run      install missing build packages (as root), build, run `gpuready check`
#   make test     install test packages, build with ASan+UBSan, run every test
#   make install  PREFIX=/usr/local DESTDIR= ALIASES=yes : gpuready, its aliases (ALIASES=no: none), the man page
#   make deb      install the packaging tools, build the Debian packages into dist/, lintian them
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
TESTBUILD ?= build-test
FUZZBUILD ?= build-fuzz
FUZZ_SECONDS ?= 20
# NVIDIA's real libraries and headers for the ABI tests, fetched once (scripts/nvidia-libs.sh).
NVIDIA_CACHE ?= $(or $(GPUREADY_NVIDIA_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpuready/nvidia)

.PHONY: all build run test unit fuzz install deb update-expected man clean

all: build

# The release build needs no test dependency (cmocka, MPI, Python).
$(BUILD)/build.ninja:
	meson setup $(BUILD) --prefix=$(PREFIX) -Dtests=disabled

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# A failing check (exit 1) is a verdict, not a build failure; exit 2 is.
run:
	scripts/deps.sh
	$(MAKE) build
	./$(BUILD)/gpuready check || [ $$? -eq 1 ]

$(TESTBUILD)/build.ninja:
	meson setup $(TESTBUILD) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
		-Dtests=enabled -Dnvidia_libs=$(NVIDIA_CACHE)

# NVIDIA's libraries come from Debian's non-free archive into $(NVIDIA_CACHE), never
# installed; where they cannot be fetched, the tests that need them skip and say why.
test:
	scripts/deps.sh --test --deb
	-scripts/nvidia-libs.sh $(NVIDIA_CACHE) >/dev/null
	$(MAKE) $(TESTBUILD)/build.ninja
	ninja -C $(TESTBUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C $(TESTBUILD) --print-errorlogs
	$(MAKE) fuzz

# libFuzzer smoke runs (clang only), FUZZ_SECONDS each, the library instrumented too: the file
# parsers (seeds in tests/fuzz/seeds), the job's frames and bench net's handshake (seeds in
# tests/fuzz/seeds-frames and seeds-handshake).
FUZZ_TARGETS = parsers frames handshake
fuzz:
	@if ! command -v clang >/dev/null; then echo "fuzz: clang not installed, skipped"; exit 0; fi; \
	[ -f $(FUZZBUILD)/build.ninja ] || CC=clang meson setup $(FUZZBUILD) --buildtype=debug -Dtests=enabled -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null; \
	for t in $(FUZZ_TARGETS); do \
		seeds=tests/fuzz/seeds; [ $$t = parsers ] || seeds=tests/fuzz/seeds-$$t; \
		ninja -C $(FUZZBUILD) tests/fuzz_$$t >/dev/null && \
		mkdir -p $(FUZZBUILD)/corpus-$$t && \
		./$(FUZZBUILD)/tests/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=1024 \
			$(FUZZBUILD)/corpus-$$t $$seeds 2>$(FUZZBUILD)/fuzz-$$t.log && \
		echo "fuzz $$t: $$(grep -c . $(FUZZBUILD)/fuzz-$$t.log) log lines, no crash in $(FUZZ_SECONDS)s" || \
		{ tail -40 $(FUZZBUILD)/fuzz-$$t.log; exit 1; }; \
	done

# ALIASES=no: no all_reduce_perf, verify-rdma, ... links (an existing
# program of that name is left alone either way; scripts/install-aliases.sh).
ALIASES ?= yes
install: build
	meson configure $(BUILD) --prefix=$(PREFIX) >/dev/null
	DESTDIR=$(DESTDIR) GPUREADY_ALIASES=$(ALIASES) meson install -C $(BUILD) --quiet
	@cat $(BUILD)/meson-logs/install-aliases.log 2>/dev/null || true

# gpuready, gpuready-mpi and gpuready-aliases .deb files in $(DIST) (dpkg-buildpackage -b in a
# copy of the tree under build-deb/, debian/changelog from meson.build's version; lintian's
# report in $(DIST)/lintian.txt, an error or warning fails; scripts/build-deb.sh).
DIST ?= dist
deb:
	scripts/deps.sh --deb
	scripts/build-deb.sh $(DIST)

# Rewrites tests/fixtures/*/expected after an intended output change.
update-expected: $(TESTBUILD)/build.ninja
	ninja -C $(TESTBUILD)
	GPUREADY_UPDATE=1 meson test -C $(TESTBUILD) --suite cli --print-errorlogs
	./$(TESTBUILD)/gpuready man > docs/gpuready.1

man: build
	./$(BUILD)/gpuready man > docs/gpuready.1

clean:
	rm -rf $(BUILD) $(TESTBUILD) $(FUZZBUILD) build-deb $(DIST)
