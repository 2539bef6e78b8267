#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (the toolchain's clang and swiftc -sanitize=fuzzer,
# with AddressSanitizer and its leak checker). The targets are in Tests/Fuzz:
#
#   head        the response-head parser (ResponseHeadParser, and the C recorder headrecorder.c)
#   cookiefile  the cookie store file reader (CookieStore.parseStore, Cookie(netscapeLine:)) and
#               libcurl's cookie engine fed with what it accepts
#   validation  URL, method and header validation (MessageValidation)
#   form        form encoding (RequestMessage.setFormValue, formBody)
#   capi        the C interface's argument and state checks (curlxhr.h), as sequences of calls
#
#   scripts/fuzz.sh [--seconds N] [--seed N] [--regress] [target…]
#
# Builds the targets into .build-fuzz (FUZZ_BUILD to change it) and runs each for N seconds
# (default 50: the five take about five minutes with their builds); a local run goes longer,
# e.g. `scripts/fuzz.sh --seconds 600 head`. Each run starts from the seeds in
# Tests/Fuzz/corpus/<target> (reproducers of earlier failures among them, so every failure
# found is replayed from then on) and from what earlier local runs added in
# .build-fuzz/corpus/<target>. --regress only replays the seeds, once each. --seed fixes
# libFuzzer's random seed; under CI (CI=true) it is 1, so that a CI run retraces the ground a
# local run with the same seed covered (`scripts/fuzz.sh --seed 1 --seconds 300`), otherwise
# each run picks its own, which it prints.
# Exits non-zero when a target crashes, leaks, times out, runs out of memory or breaks one
# of the properties it checks, printing the reproducer's path and how to replay it; copy the
# reproducer into Tests/Fuzz/corpus/<target>/ once it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=50
regress=0
seed=
if [ "${CI:-}" = true ]; then seed=1; fi
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --regress) regress=1; shift ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(head cookiefile validation form capi)
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
for target in "${targets[@]}"; do
  case " ${all[*]} " in *" $target "*) ;; *) echo "unknown target $target (${all[*]})" >&2; exit 2 ;; esac
done

swiftc=$(command -v swiftc)
clang=$(dirname "$swiftc")/clang
build=${FUZZ_BUILD:-$root/.build-fuzz}
mkdir -p "$build"
build=$(cd "$build" && pwd)

# MARK: Building

sanitize=(-sanitize=fuzzer,address)
cflags=(-g -O1 -fsanitize=fuzzer-no-link,address -Wall -Wextra -Werror)
swiftflags=(-swift-version 6 -g -O -parse-as-library "${sanitize[@]}")
libs=(-lcurl -lssl -lcrypto -lkrb5 -lgssapi_krb5 -ldl -lpsl -lz -lbrotlidec -lzstd)
build_started=$SECONDS

echo "== building the fuzz targets in $build"
mkdir -p "$build/obj" "$build/bin"
modules=(-I "$build/obj")
for module in CCurlShim CSQLite CDecode CurlXHRHeader; do
  mkdir -p "$build/modules/$module"
  printf 'module %s {\n  umbrella "%s/CSupport/%s/include"\n  export *\n}\n' "$module" "$root" "$module" \
    >"$build/modules/$module/module.modulemap"
  modules+=(-I "$build/modules/$module")
done

# The C shims, instrumented for coverage.
shim=()
for source in CSupport/CCurlShim/*.c CSupport/CSQLite/*.c CSupport/CDecode/*.c; do
  object="$build/obj/shim-$(basename "$source" .c).o"
  "$clang" "${cflags[@]}" -I "$(dirname "$source")/include" -c "$source" -o "$object"
  shim+=("$object")
done
# swift-http-types (HTTPFields), the one package the library depends on, as a module of its
# own (in the Swift language mode its package declares).
swift package resolve >/dev/null
http_types=$root/.build/checkouts/swift-http-types
# The settings its manifest gives every target: its availability macros ("HTTPTypes 1.0": …).
http_types_settings=(-enable-upcoming-feature InternalImportsByDefault)
while IFS=$'\t' read -r name value; do
  http_types_settings+=(-enable-experimental-feature "AvailabilityMacro=$name: $value")
done < <(sed -n 's/^ *"\(HTTPTypes [0-9.]*\)": "\([^"]*\)",*$/\1\t\2/p' "$http_types/Package.swift")
"$swiftc" -swift-version 5 -g -O -parse-as-library "${sanitize[@]}" "${http_types_settings[@]}" -module-name HTTPTypes -package-name HTTPTypes \
  -emit-module -emit-module-path "$build/obj/HTTPTypes.swiftmodule" \
  -emit-library -static -o "$build/obj/libHTTPTypes.a" "$http_types"/Sources/HTTPTypes/*.swift
# The library as one module built with testing enabled, so the targets reach its internal
# parsers with @testable import; the C interface when the capi target is asked for.
"$swiftc" "${swiftflags[@]}" -module-name CurlXHR -package-name CurlXHR -enable-testing "${modules[@]}" \
  -emit-module -emit-module-path "$build/obj/CurlXHR.swiftmodule" \
  -emit-library -static -o "$build/obj/libCurlXHR.a" $(find Sources/CurlXHR -name "*.swift" | sort)
case " ${targets[*]} " in
  *" capi "*)
    # The C interface's OAuth2 part is the client layer's.
    "$swiftc" "${swiftflags[@]}" -module-name CurlXHRClient -package-name CurlXHR "${modules[@]}" \
      -emit-module -emit-module-path "$build/obj/CurlXHRClient.swiftmodule" \
      -emit-library -static -o "$build/obj/libCurlXHRClient.a" $(find Sources/CurlXHRClient -name "*.swift" | sort)
    "$swiftc" "${swiftflags[@]}" -module-name CurlXHRCAPI -package-name CurlXHR "${modules[@]}" \
      -emit-library -static -o "$build/obj/libCurlXHRCAPI.a" Sources/CurlXHRCAPI/*.swift
    ;;
esac

for target in "${targets[@]}"; do
  binary="$build/bin/$target"
  if [ "$target" = capi ]; then
    "$clang" "${cflags[@]}" -std=c11 -I CSupport/CurlXHRHeader/include -c Tests/Fuzz/capi.c -o "$build/obj/capi.o"
    "$swiftc" "${sanitize[@]}" -use-ld=lld "$build/obj/capi.o" "$build/obj/libCurlXHRCAPI.a" "$build/obj/libCurlXHRClient.a" \
      "$build/obj/libCurlXHR.a" "$build/obj/libHTTPTypes.a" "${shim[@]}" "${libs[@]}" -o "$binary"
  else
    "$swiftc" "${swiftflags[@]}" -use-ld=lld "${modules[@]}" -module-name "Fuzz_$target" "Tests/Fuzz/$target.swift" \
      "$build/obj/libCurlXHR.a" "$build/obj/libHTTPTypes.a" "${shim[@]}" "${libs[@]}" -o "$binary"
  fi
done
echo "built in $((SECONDS - build_started)) s"

# MARK: Running

# Leaks are failures too; a failing property traps (Swift) or aborts (C) and counts as a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
# Swift's own crash handler would get in the way of the sanitizer's report.
export SWIFT_BACKTRACE=enable=no
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(dirname "$swiftc")/llvm-symbolizer}
failed=()
for target in "${targets[@]}"; do
  binary="$build/bin/$target"
  seeds="$root/Tests/Fuzz/corpus/$target"
  log="$build/logs/$target.log"
  artifacts="$build/artifacts/$target/"
  mkdir -p "$build/logs" "$artifacts" "$build/corpus/$target"
  options=(-artifact_prefix="$artifacts" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
  if [ -n "$seed" ]; then options+=(-seed="$seed"); fi
  if [ -f "Tests/Fuzz/$target.dict" ]; then options+=(-dict="$root/Tests/Fuzz/$target.dict"); fi
  case $target in
    head|cookiefile) options+=(-max_len=8192) ;;
    capi) options+=(-max_len=2048) ;;
    *) options+=(-max_len=1024) ;;
  esac
  # The capi target keeps its files (a cookie store, a Kerberos cache) in a directory of its own.
  scratch="$build/tmp/$target"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  before=$(ls "$artifacts")
  started=$SECONDS
  status=0
  if [ "$regress" = 1 ]; then
    echo "== $target: replaying $(ls "$seeds" | wc -l) seeds"
    TMPDIR="$scratch" "$binary" "${options[@]}" "$seeds"/* >"$log" 2>&1 || status=$?
  else
    echo "== $target: fuzzing for $seconds s${seed:+, seed $seed}"
    TMPDIR="$scratch" "$binary" "${options[@]}" -max_total_time="$seconds" \
      "$build/corpus/$target" "$seeds" >"$log" 2>&1 || status=$?
  fi
  rm -rf "$scratch"
  if [ "$status" = 0 ]; then
    summary=$(grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$log" | sed 's/^stat:://' | tr -s ' \n' '  ')
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    echo "   ok in $((SECONDS - started)) s: ${summary}${coverage}"
    continue
  fi
  failed+=("$target")
  echo "   FAILED (exit $status) after $((SECONDS - started)) s; from $log:" >&2
  grep -m 12 -E 'property violated|Fatal error|ERROR: |SUMMARY: |^    #[0-9] ' "$log" | sed 's/^/   | /' >&2 || true
  grep -A 3 -E '^MS: ' "$log" | head -4 | cut -c 1-300 | sed 's/^/   | /' >&2 || true
  for artifact in $(comm -13 <(echo "$before") <(ls "$artifacts")); do
    echo "   reproducer: $artifacts$artifact" >&2
    echo "   replay it:  SWIFT_BACKTRACE=enable=no $binary $artifacts$artifact" >&2
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing passed: ${targets[*]}"
