# Shared by the perf scripts that time a small C driver against the
# library: build_driver NAME BUILD_DIR OUT builds perf/NAME.c against
# BUILD_DIR's libgpuready.a into OUT, taking over a sanitizer build's
# flags (a release build, `meson setup build-rel --buildtype=release`,
# gives the timings that mean something).
# shellcheck shell=sh
build_driver() {
	san=""
	if grep -q "fsanitize=address" "$2/build.ninja" 2>/dev/null; then
		san="-fsanitize=address,undefined"
	fi
	# shellcheck disable=SC2046,SC2086
	cc -std=gnu11 -O2 $san -I"$here/../src" -I"$2" "$here/$1.c" "$2/libgpuready.a" \
		-o "$3" $(pkg-config --cflags --libs json-c inih zlib libsodium) -ldl -lm -pthread
}
