#!/usr/bin/env bash
# Runs every test: installs what is missing, starts the loopback servers (Apache with
# Basic, Digest and Kerberos locations, an MIT KDC, an NTLM server, squid proxies and the
# fault server) in a temporary directory and checks them with curl, installs the C library
# under a temporary prefix for the C tests, runs `swift test`, and stops the servers. With --sanitizers first, it
# also runs scripts/test-sanitizers.sh (ThreadSanitizer and AddressSanitizer) before.
# Other arguments go to `swift test`. Without any, the run ends with the public RFC 9111 cache
# conformance suite through `xhr --cache` (scripts/cache-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=0
if [ "${1:-}" = --sanitizers ]; then
  sanitizers=1
  shift
fi

bash scripts/install-deps.sh
# ThreadSanitizer runs the suite about ten times slower: the OAuth2 server's access tokens
# then live 6 s (2 s by default), so that one outlives the calls a test makes with it.
if [ "$sanitizers" = 1 ]; then export TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS=${TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS:-6}; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/curlxhr-test.XXXXXX")
trap 'bash Tests/Servers/stop.sh "$dir" >/dev/null || true; rm -rf "$dir"' EXIT
bash Tests/Servers/start.sh "$dir" >/dev/null
if ! bash Tests/Servers/selftest.sh "$dir" >"$dir/selftest.log"; then
  grep FAIL "$dir/selftest.log" >&2
  echo "ERROR: the test servers do not answer as they should (Tests/Servers/selftest.sh)" >&2
  exit 1
fi
export TESTENV_DIR="$dir"
# The client layer's package traits (opt-in, Package.swift): built and tested with all three,
# by every build that shares a build folder with this one (install-c.sh, the sanitizers',
# docs.sh), so that none builds the package again with other traits.
export CURLXHR_TRAITS=Logging,Tracing,Metrics
traits=(--traits "$CURLXHR_TRAITS")
echo "== swift build --build-tests (at $SECONDS s)"
swift build --build-tests "${traits[@]}"
bash scripts/install-c.sh "$dir/prefix" debug >/dev/null
export CURLXHR_PREFIX="$dir/prefix"
if [ "$sanitizers" = 1 ]; then bash scripts/test-sanitizers.sh; fi
echo "== swift test (at $SECONDS s)"
# A run that hangs fails after 15 minutes (it takes 2), saying where it stood (scripts/watch.sh).
bash scripts/watch.sh 900 swift test --skip-build "${traits[@]}" "$@"
# The whole run: also the public cache conformance suite, through the xhr built above.
if [ $# -eq 0 ]; then XHR=.build/debug/xhr bash scripts/cache-tests.sh; fi
