#!/usr/bin/env bash
# Runs every test: installs what is missing, starts the loopback servers (Apache, the
# fault server) in a temporary directory, installs the C library under a temporary prefix
# for the C tests, runs `swift test`, and stops the servers. With --sanitizers first, it
# also runs scripts/test-sanitizers.sh (ThreadSanitizer and AddressSanitizer) before.
# Other arguments go to `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=0
if [ "${1:-}" = --sanitizers ]; then
  sanitizers=1
  shift
fi

bash scripts/install-deps.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/curlxhr-test.XXXXXX")
trap 'bash Tests/Servers/stop.sh "$dir" >/dev/null || true; rm -rf "$dir"' EXIT
bash Tests/Servers/start.sh "$dir" >/dev/null
export TESTENV_DIR="$dir"
swift build --build-tests
bash scripts/install-c.sh "$dir/prefix" debug >/dev/null
export CURLXHR_PREFIX="$dir/prefix"
if [ "$sanitizers" = 1 ]; then bash scripts/test-sanitizers.sh; fi
swift test --skip-build "$@"
