#!/usr/bin/env bash
# Start-up cost of the xhr tool against curl: one small GET each, run alternately N times
# against a loopback server, with the median wall time, CPU time (user + sys) and peak
# resident memory of each and xhr's ratios to curl's.
#
#   Benchmarks/startup.sh [--runs N] [--xhr PATH] [--skip-build]
#   Benchmarks/run.sh --startup [--runs N] [--skip-build]
#
#   --runs N      runs of each tool (default 200), alternating xhr and curl.
#   --xhr PATH    the xhr to measure (default: the release build's, made with
#                 `swift build -c release --product xhr` unless --skip-build; a release xhr
#                 has the Swift runtime and FoundationEssentials linked in, see Package.swift).
#   --skip-build  use the xhr already built.
#
# The server is `python3 -m http.server` on a free port of 127.0.0.1, serving a 100-byte file
# from a temp dir that is removed on exit. Each run is a child of one Python process, which
# times it (wall: from spawn to exit) and reads its rusage (user, sys, maxrss) from wait4, so
# both tools are measured the same way. Both write the body to /dev/null; curl runs with -q
# (no ~/.curlrc). Targets: xhr <= 1.5x curl's wall and CPU, <= 2x its peak RSS.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=200
xhr=""
skip_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:?--runs needs a number}"; shift ;;
    --xhr) xhr="${2:?--xhr needs a path}"; shift ;;
    --skip-build) skip_build=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "startup.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$runs" in ''|*[!0-9]*|0) echo "startup.sh: --runs needs a positive number" >&2; exit 2 ;; esac
command -v curl > /dev/null || { echo "startup.sh: curl is missing" >&2; exit 1; }
build=(swift build -c release --product xhr)
[ -z "$xhr" ] && xhr=$(cd "$root" && "${build[@]}" --show-bin-path)/xhr
if [ $skip_build -eq 0 ]; then
  (cd "$root" && "${build[@]}" > /dev/null)
fi
[ -x "$xhr" ] || { echo "startup.sh: no xhr at $xhr (build it, or give --xhr)" >&2; exit 1; }

dir=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
head -c 100 /dev/urandom > "$dir/100b"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$dir" > "$dir/server.log" 2>&1 &
server_pid=$!
url=http://127.0.0.1:$port/100b
for _ in $(seq 50); do
  curl -q -sf -o /dev/null "$url" && break
  sleep 0.1
done
curl -q -sf -o /dev/null "$url" || { echo "startup.sh: the server did not come up" >&2; exit 1; }

python3 - "$runs" "$xhr" "$url" <<'EOF'
import os, statistics, sys, time

runs, xhr, url = int(sys.argv[1]), sys.argv[2], sys.argv[3]
commands = {
    "xhr": [xhr, "-s", "-o", "/dev/null", url],
    "curl": ["curl", "-q", "-s", "-o", "/dev/null", url],
}

def measure(argv):
    """Wall seconds, CPU seconds (user + sys) and peak RSS in KiB of one run."""
    started = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"startup.sh: {' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss

for argv in commands.values():  # warm the page cache and the server
    measure(argv)
results = {name: [] for name in commands}
for _ in range(runs):
    for name, argv in commands.items():
        results[name].append(measure(argv))

medians = {name: [statistics.median(r[i] for r in rows) for i in range(3)] for name, rows in results.items()}
print(f"# Start-up: one small GET, {runs} runs each, alternating (medians)\n")
print("| tool | wall ms | CPU ms (user+sys) | peak RSS KiB |")
print("|---|---|---|---|")
for name, (wall, cpu, rss) in medians.items():
    print(f"| {name} | {wall * 1000:.2f} | {cpu * 1000:.2f} | {rss:.0f} |")
x, c = medians["xhr"], medians["curl"]
ratios = [x[i] / c[i] if c[i] else float("inf") for i in range(3)]
print(f"| xhr / curl | {ratios[0]:.2f}x | {ratios[1]:.2f}x | {ratios[2]:.2f}x |")
met = ratios[0] <= 1.5 and ratios[1] <= 1.5 and ratios[2] <= 2
print(f"\ntargets (wall, CPU <= 1.5x; RSS <= 2x): {'met' if met else 'NOT met'}")
EOF
