#!/usr/bin/env bash
# Builds libcurlxhr.so and installs it with curlxhr.h, a curlxhr.pc pkg-config file and the
# xhr(1) man page (docs/xhr.1) under PREFIX, so that `cc app.c $(pkg-config --cflags --libs curlxhr)` works with
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig. The library finds the Swift runtime through its
# RUNPATH, and programs find the library through theirs: no LD_LIBRARY_PATH needed.
#
#   scripts/install-c.sh PREFIX [release|debug] [address|thread]
#
# The third argument builds the library with that sanitizer (in .build-SANITIZER); programs
# linked with it must then be built with the toolchain's clang and the same -fsanitize.
# CURLXHR_TRAITS (e.g. Logging,Tracing,Metrics) builds with those package traits: the tests set
# it to the traits they build with, so that the build folder they share is not built again.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: install-c.sh PREFIX [release|debug] [address|thread]}
config=${2:-release}
sanitizer=${3:-}
command -v patchelf >/dev/null || { echo "ERROR: patchelf is missing: run scripts/install-deps.sh" >&2; exit 1; }

build=(swift build -c "$config")
if [ -n "${CURLXHR_TRAITS:-}" ]; then build+=(--traits "$CURLXHR_TRAITS"); fi
if [ -n "$sanitizer" ]; then build+=(--sanitize="$sanitizer" --scratch-path ".build-$sanitizer"); fi
"${build[@]}" --product curlxhr
bin=$("${build[@]}" --show-bin-path)
runtime=$(swift -print-target-info | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeLibraryPaths"][0])')

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$bin/libcurlxhr.so" "$prefix/lib/libcurlxhr.so"
patchelf --set-rpath "$runtime" "$prefix/lib/libcurlxhr.so"
install -m 644 CSupport/CurlXHRHeader/include/curlxhr.h "$prefix/include/curlxhr.h"
install -d "$prefix/share/man/man1"
install -m 644 docs/xhr.1 "$prefix/share/man/man1/xhr.1"
version=$(sed -n 's/^#define CURLXHR_VERSION "\(.*\)"$/\1/p' CSupport/CurlXHRHeader/include/curlxhr.h)
cat >"$prefix/lib/pkgconfig/curlxhr.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: curlxhr
Description: XHR-style HTTP requests over libcurl (GDHttpRequest counterpart)
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lcurlxhr
Cflags: -I\${includedir}
PC
echo "installed libcurlxhr $version under $prefix"
