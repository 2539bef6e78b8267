#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds the xhr tool and runs `xhr demo`,
# a tour of the library against a server inside the process (no network needed).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh --build-only
swift build --product xhr
"$(swift build --show-bin-path)/xhr" demo
