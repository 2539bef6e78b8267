#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds, starts a loopback server and
# shows a synchronous and an asynchronous request with every ready state.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build --product xhr-example
dir=$(mktemp -d "${TMPDIR:-/tmp}/curlxhr-demo.XXXXXX")
trap 'bash Tests/Servers/stop.sh "$dir" >/dev/null || true; rm -rf "$dir"' EXIT
bash Tests/Servers/start.sh "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/testenv.env"
"$(swift build --show-bin-path)/xhr-example" "$TESTENV_FAULT_URL/drip?chunks=4&size=1000&interval_ms=200"
