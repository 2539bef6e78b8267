#!/usr/bin/env bash
# Runs the thread-heavy tests under the sanitizers: every Swift test under ThreadSanitizer,
# and the C worker pool (32 threads x 200 synchronous requests, with asynchronous ones at the
# same time) under AddressSanitizer and under ThreadSanitizer, the Swift side of libcurlxhr.so
# built with the same sanitizer. Needs the loopback servers and the installed library: run
# it through `scripts/test.sh --sanitizers`, or with TESTENV_DIR and CURLXHR_PREFIX set.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TESTENV_DIR:?start the servers first (Tests/Servers/start.sh DIR) and export TESTENV_DIR=DIR}"
# shellcheck disable=SC1091
source "$TESTENV_DIR/testenv.env"

echo "== swift test --sanitize=thread"
# The client layer's package traits, as scripts/test.sh builds them.
export CURLXHR_TRAITS=${CURLXHR_TRAITS:-Logging,Tracing,Metrics}
traits=(--traits "$CURLXHR_TRAITS")
swift build --build-tests --sanitize=thread --scratch-path .build-thread "${traits[@]}"
# CURLXHR_SANITIZER: tests that measure a process (memory, runs in a time) allow for the
# sanitizer's own cost.
# Its reports go to files, printed again at the end, so a race is the last thing a log shows.
reports="$TESTENV_DIR/tsan-swift"
rm -f "$reports".*
status=0
# A run that hangs fails after 40 minutes (it takes under 10), saying where it stood.
CURLXHR_SANITIZER=thread TSAN_OPTIONS="log_path=$reports" \
  bash scripts/watch.sh 2400 swift test --skip-build --sanitize=thread --scratch-path .build-thread "${traits[@]}" || status=$?
if compgen -G "$reports.*" >/dev/null; then
  cat "$reports".* >&2
  echo "ERROR: ThreadSanitizer reported the races above in swift test" >&2
  exit 1
fi
if [ "$status" != 0 ]; then exit "$status"; fi

clang=$(dirname "$(command -v swift)")/clang
runtime=$(swift -print-target-info | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeLibraryPaths"][0])')
worker_args=(32 200 "$TESTENV_HTTP_URL" "$TESTENV_FAULT_URL" "$TESTENV_DIGEST_FILE_URL" "$TESTENV_USER" "$TESTENV_PASSWORD")
for sanitizer in address thread; do
  echo "== C worker pool under the $sanitizer sanitizer"
  prefix="$TESTENV_DIR/prefix-$sanitizer"
  bash scripts/install-c.sh "$prefix" debug "$sanitizer" >/dev/null
  program="$TESTENV_DIR/worker_pool-$sanitizer"
  # The toolchain's ThreadSanitizer runtime intercepts libdispatch, so it links against it.
  extra=()
  if [ "$sanitizer" = thread ]; then extra=(-L"$runtime" -Wl,-rpath,"$runtime" -ldispatch -lBlocksRuntime); fi
  # shellcheck disable=SC2046
  "$clang" -std=c11 -Wall -Wextra -Werror -g -fsanitize="$sanitizer" Tests/C/worker_pool.c \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs curlxhr) -lpthread "${extra[@]}" -o "$program"
  ASAN_OPTIONS=detect_leaks=1 TSAN_OPTIONS=halt_on_error=1 "$program" "${worker_args[@]}"
  if [ "$sanitizer" = address ]; then
    # The C API test (every call, misuse, cookies from threads) with LeakSanitizer: what the
    # library hands to C and takes back must not leak.
    echo "== C API test under the address sanitizer, with LeakSanitizer"
    # shellcheck disable=SC2046
    "$clang" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address Tests/C/capi_test.c \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs curlxhr) -lpthread -o "$TESTENV_DIR/capi_test-address"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/capi_test-address" "$TESTENV_HTTP_URL" "$TESTENV_FAULT_URL" \
      "https://127.0.0.1:$TESTENV_HTTPS_SELFSIGNED_PORT"
    echo "== C OAuth2 test under the address sanitizer, with LeakSanitizer"
    # shellcheck disable=SC2046
    "$clang" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address Tests/C/oauth2_test.c \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs curlxhr) -lpthread -o "$TESTENV_DIR/oauth2_test-address"
    mkdir -p "$TESTENV_DIR/oauth2-c-address"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/oauth2_test-address" "$TESTENV_OAUTH2_URL" "$TESTENV_OAUTH2_PASSWORD_CLIENT_ID" \
      "$TESTENV_OAUTH2_PASSWORD_CLIENT_SECRET" "$TESTENV_USER" "$TESTENV_PASSWORD" "$TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS" \
      "$TESTENV_DIR/oauth2-c-address"
    echo "== C cache test under the address sanitizer, with LeakSanitizer"
    # shellcheck disable=SC2046
    "$clang" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address Tests/C/cache_test.c \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs curlxhr) -lpthread -o "$TESTENV_DIR/cache_test-address"
    rm -rf "$TESTENV_DIR/cache-c-address"
    mkdir -p "$TESTENV_DIR/cache-c-address"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/cache_test-address" "$TESTENV_FAULT_URL" "$TESTENV_DIR/cache-c-address"
    echo "== C client certificate, proxy, rate limit, PAC, observing and curl command tests under the address sanitizer, with LeakSanitizer"
    for test in tls_identity_test proxy_test rate_test pac_test observe_test curl_command_test; do
      # shellcheck disable=SC2046
      "$clang" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address "Tests/C/$test.c" \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs curlxhr) -o "$TESTENV_DIR/$test-address"
    done
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/tls_identity_test-address" "$TESTENV_MTLS_URL" "$TESTENV_CA_FILE" \
      "$TESTENV_CLIENT_CERT" "$TESTENV_CLIENT_KEY" "$TESTENV_CLIENT_P12" "$TESTENV_CLIENT_PASSWORD" "$TESTENV_LOCALHOST_PIN"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/proxy_test-address" "$TESTENV_HTTP_URL" "$TESTENV_CA_FILE" "$TESTENV_PROXY_TLS_PORT" \
      "$TESTENV_SOCKS_PORT" "$TESTENV_SOCKS_AUTH_PORT" "$TESTENV_SOCKS_USER" "$TESTENV_SOCKS_PASSWORD" \
      "$TESTENV_PROXY_TLS_PIN" "$TESTENV_PROXY_MTLS_PORT" "$TESTENV_CLIENT_CERT" "$TESTENV_CLIENT_KEY" \
      "$TESTENV_SOCKS_GSSAPI_PORT" "$TESTENV_SOCKS_GSSAPI_NOMETHOD_PORT" "$TESTENV_KRB5CCNAME"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/rate_test-address" "$TESTENV_FAULT_URL"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/observe_test-address" "$TESTENV_DIGEST_URL" "$TESTENV_USER" "$TESTENV_PASSWORD" \
      "$TESTENV_FAULT_URL"
    ASAN_OPTIONS=detect_leaks=1 "$TESTENV_DIR/curl_command_test-address" "$TESTENV_HTTP_URL"
    rm -rf "$TESTENV_DIR/pac-c-address"
    mkdir -p "$TESTENV_DIR/pac-c-address"
    # libpacparser 1.3.6 leaks the URL copies it makes for each FindProxyForURL (str_replace):
    # its own, not the library's.
    printf 'leak:libpacparser.so\n' >"$TESTENV_DIR/pac-lsan.supp"
    ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$TESTENV_DIR/pac-lsan.supp" "$TESTENV_DIR/pac_test-address" \
      "$TESTENV_HTTP_URL" "$TESTENV_PROXY_PORT" "$TESTENV_FAULT_URL" "$TESTENV_DIR/pac-c-address"
  fi
done
