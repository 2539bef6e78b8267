#!/usr/bin/env bash
# Usage: scripts/watch.sh SECONDS COMMAND [ARGUMENTS...]
# Runs a test run (COMMAND) with a limit, its output line by line. Past SECONDS it prints
# the tests that started and never ended, every thread's stack in each of the command's
# processes (gdb), stops them and exits 124: a hang ends as a failure that says where it
# stood. Otherwise it exits with the command's status.
set -uo pipefail
limit=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/curlxhr-watch.XXXXXX")
trap 'rm -f "$log"' EXIT
# Line-buffered (stdbuf reaches the test process swift test starts), so that the log shows
# how far a run got even when it is killed.
stdbuf -oL -eL "$@" > >(tee "$log") 2>&1 &
pid=$!

descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

deadline=$((SECONDS + limit))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    {
      echo "ERROR: still running after $limit s: $*"
      echo "== the tests that started and did not end"
      grep -oE '^. Test [^ ]+\(.*\) started' "$log" | sed -E 's/^. Test (.*) started$/\1/' | sort >"$log.started"
      grep -oE '^. Test [^ ]+\([^)]*\)( with [0-9]+ test cases)? (passed|failed|skipped)' "$log" \
        | sed -E 's/^. Test ([^ ]+\([^)]*\)).*/\1/' | sort -u >"$log.ended"
      comm -23 "$log.started" "$log.ended"
      rm -f "$log.started" "$log.ended"
      for process in "$pid" $(descendants "$pid"); do
        [ "$(ps -o comm= -p "$process")" = tee ] && continue
        echo "== the threads of $(ps -o args= -p "$process" | cut -c1-200) (pid $process)"
        timeout 120 gdb -p "$process" -batch -ex "thread apply all bt 30" 2>/dev/null | grep -E '^(Thread|#)' | cut -c1-240
      done
    } >&2
    for process in $(descendants "$pid") "$pid"; do kill -9 "$process" 2>/dev/null; done
    wait "$pid" 2>/dev/null
    exit 124
  fi
  sleep 2
done
wait "$pid"
