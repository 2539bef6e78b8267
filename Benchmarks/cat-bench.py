#!/usr/bin/env python3
"""The cache-hit-100m workload's floor: `cat FILE > /dev/null` of the body file the cache
stored, as a benchmark client (run.sh's client `cat`).

    cat-bench.py --workload NAME --file PATH [--requests N] [--expect-bytes N]
                 [--max-seconds S] [--client NAME] [the other clients' options, ignored]

Runs `cat PATH` with its standard output on /dev/null --requests times, one after another,
each a new process (posix_spawn; the process inherits this one's CPU affinity, so it runs on
the client CPU as the other clients do), and prints one JSON line as the other clients do
(BenchSupport's Tally). A "request" is one cat process; its time is the process's wall time,
from the spawn to its exit reaped (wait4), so its start-up (exec, the dynamic loader: about
1 ms) is in it; `seconds` is the sum of those times, not the time between them. A run is an
error unless cat exits 0 and PATH has --expect-bytes bytes. CPU times, context switches and
peak RSS are cat's (wait4's rusage of each process: summed, and the largest RSS).
"""
import argparse
import json
import os
import sys
import time

CAT = "/bin/cat"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--expect-bytes", type=int, default=100)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    parser.add_argument("--client", default="cat")
    # The options run.sh gives every client; cat has no use for them.
    for ignored in ("--url", "--mode", "--concurrency", "--post-bytes"):
        parser.add_argument(ignored)
    args = parser.parse_args()

    size = os.stat(args.file).st_size if os.path.exists(args.file) else -1
    devnull = [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)]
    deadline = time.monotonic() + args.max_seconds
    finished = errors = body = 0
    seconds = user = system = 0.0
    switches = rss = 0
    first_error = None
    while finished < args.requests and time.monotonic() < deadline:
        started = time.monotonic()
        pid = os.posix_spawn(CAT, ["cat", args.file], os.environ, file_actions=devnull)
        _, status, usage = os.wait4(pid, 0)
        seconds += time.monotonic() - started
        finished += 1
        user += usage.ru_utime
        system += usage.ru_stime
        switches += usage.ru_nvcsw + usage.ru_nivcsw
        rss = max(rss, usage.ru_maxrss)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or size != args.expect_bytes:
            errors += 1
            if first_error is None:
                first_error = (f"cat exited {code}" if code != 0
                               else f"{args.file} has {size} bytes, expected {args.expect_bytes}")
        else:
            body += size
    result = {
        "client": args.client, "workload": args.workload, "requests": finished, "seconds": seconds,
        "req_per_s": finished / seconds if seconds else 0.0, "bytes_per_s": body / seconds if seconds else 0.0,
        "cpu_user_s": user, "cpu_sys_s": system, "context_switches": switches, "peak_rss_kib": rss,
        "errors": errors, "timed_out": finished < args.requests,
    }
    if first_error:
        result["first_error"] = first_error
        print(f"{args.client} {args.workload}: {first_error}", file=sys.stderr)
    print(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
