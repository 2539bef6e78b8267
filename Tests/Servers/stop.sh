#!/usr/bin/env bash
# Stops the servers start.sh started in DIR, by their recorded pids only: TERM, then KILL
# after 5 s. A zombie counts as stopped. Exits 0 when everything is down.
set -euo pipefail
dir=${1:?usage: stop.sh DIR}
daemons=(socksgss danted danted_login oauth2 hypercorn nginx squid ntlmserver apache faultserver krb5kdc)

running() {  # running PID: exists and is not a zombie
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

pids=()
for daemon in "${daemons[@]}"; do
  file="$dir/run/$daemon.pid"
  [ -s "$file" ] || continue
  pid=$(cat "$file")
  if running "$pid"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    pids+=("$pid")
  fi
  rm -f "$file"
done

for _ in $(seq 1 50); do
  left=()
  for pid in "${pids[@]}"; do running "$pid" && left+=("$pid"); done
  [ ${#left[@]} -eq 0 ] && exit 0
  sleep 0.1
done
for pid in "${left[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
sleep 0.2
for pid in "${left[@]}"; do
  if running "$pid"; then echo "ERROR: pid $pid did not stop" >&2; exit 1; fi
done
