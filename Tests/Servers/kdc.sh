#!/usr/bin/env bash
# Stops or restarts the KDC of a running test environment, for tests of an unreachable KDC.
#   kdc.sh DIR stop     the KDC is gone when this returns (its port refuses connections)
#   kdc.sh DIR start    the KDC is back on the same port
set -euo pipefail
dir=${1:?usage: kdc.sh DIR stop|start}
here=$(cd "$(dirname "$0")" && pwd)
export PATH="/usr/sbin:/sbin:$PATH"
# shellcheck disable=SC1091
source "$dir/testenv.env"
pidfile=$dir/run/krb5kdc.pid

listening() {
  /usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.2)" "$TESTENV_KDC_PORT" 2>/dev/null
}

case ${2:?usage: kdc.sh DIR stop|start} in
  stop)
    if [ -s "$pidfile" ]; then
      pid=$(cat "$pidfile")
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      rm -f "$pidfile"
    fi
    # A KDC started from a program that blocks SIGTERM (as test runners' threads do) inherits
    # the blocked signal: KILL it when TERM did not do.
    for attempt in $(seq 1 50); do
      listening || exit 0
      if [ "$attempt" = 10 ] && [ -n "${pid:-}" ]; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; fi
      sleep 0.1
    done
    echo "ERROR: the KDC still listens on 127.0.0.1:$TESTENV_KDC_PORT" >&2
    exit 1
    ;;
  start)
    listening && exit 0
    KRB5_KDC_PROFILE="$dir/krb5/kdc.conf" /usr/bin/python3 "$here/daemon.py" "$dir/logs/krb5kdc-stdout.log" \
      krb5kdc -n -r "$TESTENV_KRB5_REALM" >"$pidfile"
    for _ in $(seq 1 100); do listening && exit 0; sleep 0.05; done
    echo "ERROR: the KDC did not come back; the end of its log:" >&2
    tail -n 20 "$dir/logs/krb5kdc.log" >&2
    exit 1
    ;;
  *) echo "usage: kdc.sh DIR stop|start" >&2; exit 2 ;;
esac
