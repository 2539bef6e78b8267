#!/usr/bin/env bash
# Builds the DocC documentation of CurlXHR, CurlXHRClient and CurlXHROpenAPI with swift-docc-plugin and fails
# on any documentation warning (an unresolved symbol or article link, an undocumented or
# misnamed parameter, …) or on any public symbol declared in Sources/<target> without
# documentation.
#
#   scripts/docs.sh            # the archives go to ${TMPDIR:-/tmp}/curlxhr-docs/<Target>.doccarchive
#
# Warnings: `generate-documentation --warnings-as-errors`, so DocC itself exits non-zero and its
# diagnostics are printed. Undocumented symbols: DocC does not fail on those, so the symbol
# graphs it was built from are read: every symbol of access level public or open whose source
# location lies in Sources/<target>/ must carry a doc comment (its own, or the one it inherits
# from the protocol requirement it implements, which is what DocC shows for it). Symbols the
# compiler synthesizes or inherits from the standard library have no location there and are
# not counted. Needs what `scripts/install-deps.sh --build-only` installs, and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=${TMPDIR:-/tmp}/curlxhr-docs
# The package's own build folder: the debug build the tests made is reused for the symbol graphs.
scratch=$root/.build
mkdir -p "$work"
targets=(CurlXHR CurlXHRClient CurlXHROpenAPI)
failed=0

for target in "${targets[@]}"; do
  out=$work/$target.doccarchive
  log=$work/$target.log
  # Fresh symbol graphs for the check below: the plugin writes them again on every run.
  find "$scratch" -type d -name extracted-symbols -prune -exec rm -rf {} + 2>/dev/null || true
  echo "docs: $target"
  # With the client layer's package traits, whose symbols are documented too (as the tests
  # build them, so that the debug build is reused).
  if ! swift package --scratch-path "$scratch" --traits Logging,Tracing,Metrics --allow-writing-to-directory "$work" \
      generate-documentation --target "$target" --warnings-as-errors --output-path "$out" >"$log" 2>&1; then
    echo "ERROR: DocC reported problems in $target (warnings count as errors):" >&2
    # The diagnostics with their source excerpts; the whole log is in $log.
    grep -v '^\[[0-9]*/[0-9]*\]' "$log" | sed -n '/^\(error\|warning\): /,/^$/p' >&2 || true
    grep -q '^\(error\|warning\): ' "$log" || tail -40 "$log" >&2
    failed=1
    continue
  fi
  graphs=$(find "$scratch" -path "*/extracted-symbols/*/$target/*.symbols.json" | sort)
  if [ -z "$graphs" ]; then
    echo "ERROR: no symbol graph of $target found under $scratch" >&2
    failed=1
    continue
  fi
  # shellcheck disable=SC2086
  if ! /usr/bin/env python3 - "$root/Sources/$target/" $graphs <<'PY'
import json, os, sys
from urllib.parse import unquote, urlparse

sources, graphs = sys.argv[1], sys.argv[2:]
seen, missing = set(), []
for graph in graphs:
    with open(graph) as file:
        symbols = json.load(file)["symbols"]
    for symbol in symbols:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        location = symbol.get("location") or {}
        path = unquote(urlparse(location.get("uri", "")).path)
        if not path.startswith(sources):
            continue
        key = symbol["identifier"]["precise"]
        if key in seen:
            continue
        seen.add(key)
        lines = (symbol.get("docComment") or {}).get("lines") or []
        if not any(line.get("text", "").strip() for line in lines):
            line = location.get("position", {}).get("line", 0) + 1
            missing.append(f"{os.path.relpath(path)}:{line}: "
                           f"{'.'.join(symbol['pathComponents'])} ({symbol['kind']['displayName']})")
print(f"  {len(seen)} public symbols, {len(seen) - len(missing)} documented")
for entry in sorted(missing):
    print(f"  undocumented: {entry}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
  then
    echo "ERROR: $target has public symbols without documentation (listed above)" >&2
    failed=1
    continue
  fi
  echo "  $out"
done

if [ "$failed" -ne 0 ]; then
  echo "docs: FAILED" >&2
  exit 1
fi
echo "docs: no warnings, every public symbol documented"
