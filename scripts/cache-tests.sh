#!/usr/bin/env bash
# The RFC 9111 conformance suite (http-tests/cache-tests, vendored beside the repository in
# ../shared/conformance/cache-tests; its README.md) against `xhr --cache`: builds the release
# xhr (a no-op when it is up to date), runs the whole suite, and fails when a required test
# fails or when an optional test (kind `optimal`) or a check that passed when the baseline was
# taken no longer does. The baseline is Tests/Conformance/cache-tests-optional.txt, one
# `KIND ID` line per passing optional test or check; a test that starts to pass is printed,
# to be added with `--update-baseline` (which rewrites the list from this run) in the commit
# that makes it pass. A check that changes on purpose goes out of the list in its commit too.
#
#   scripts/cache-tests.sh [--update-baseline] [--skip-build]
#
# Needs Node.js 18 or later (scripts/install-deps.sh installs Debian's `nodejs`). Knobs:
# CACHE_TESTS_SUITE (the suite's folder), XHR (the client, default .build/release/xhr).
set -euo pipefail
cd "$(dirname "$0")/.."

update=0
build=1
while [ $# -gt 0 ]; do
  case $1 in
    --update-baseline) update=1; shift ;;
    --skip-build) build=0; shift ;;
    *) echo "usage: scripts/cache-tests.sh [--update-baseline] [--skip-build]" >&2; exit 2 ;;
  esac
done

suite=${CACHE_TESTS_SUITE:-../shared/conformance/cache-tests}
baseline=Tests/Conformance/cache-tests-optional.txt
xhr=${XHR:-.build/release/xhr}
if [ ! -x "$suite/run.sh" ]; then
  echo "ERROR: no conformance suite at $suite (the repository's ../shared/conformance/cache-tests)" >&2
  exit 2
fi
if [ "$build" = 1 ] && [ -z "${XHR:-}" ]; then swift build -c release --product xhr; fi

out=$(mktemp "${TMPDIR:-/tmp}/cache-tests.XXXXXX")
trap 'rm -f "$out"' EXIT
status=0
"$suite/run.sh" "$xhr" >"$out" 2>"$out.stderr" || status=$?
rm -f "$out.stderr"
grep -E '^(FAIL \[required\]|INFO|checks:|optional:|cache-tests:)' "$out" || true
if [ "$status" -eq 2 ] || ! grep -q '^cache-tests: ' "$out"; then
  tail -n 5 "$out" >&2
  echo "ERROR: the suite did not run" >&2
  exit 2
fi

# The optional tests and checks that pass now, as `KIND ID` lines.
passing=$(sed -nE 's/^PASS \[optimal\] ([^: ]+).*/optimal \1/p; s/^YES \[check\] ([^: ]+).*/check \1/p' "$out" | sort)
if [ "$update" = 1 ]; then
  mkdir -p "$(dirname "$baseline")"
  { echo "# The optional tests (optimal) and checks of the RFC 9111 suite that xhr --cache passes:"
    echo "# scripts/cache-tests.sh fails when one of them no longer does. Rewritten by --update-baseline."
    printf '%s\n' "$passing"; } >"$baseline"
  echo "baseline: $(grep -cv '^#' "$baseline") passing optional tests and checks written to $baseline"
fi
lost=$(comm -23 <(grep -vE '^(#|$)' "$baseline" | sort) <(printf '%s\n' "$passing"))
gained=$(comm -13 <(grep -vE '^(#|$)' "$baseline" | sort) <(printf '%s\n' "$passing"))
if [ -n "$gained" ]; then
  echo "passing now but not in $baseline (add them with --update-baseline):"
  printf '%s\n' "$gained" | sed 's/^/  /'
fi
failed=0
if [ "$status" -ne 0 ]; then
  echo "FAILED: required tests fail (above)" >&2
  failed=1
fi
if [ -n "$lost" ]; then
  echo "FAILED: optional tests or checks of $baseline no longer pass:" >&2
  grep -E "^(FAIL|NO) \[(optimal|check)\] ($(printf '%s\n' "$lost" | cut -d' ' -f2 | paste -sd'|'))(:|$)" "$out" >&2 || true
  failed=1
fi
exit "$failed"
