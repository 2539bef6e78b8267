#!/usr/bin/env python3
"""Turns the results of run.sh (lines "REP<TAB>JSON") into a Markdown table.

    report.py [--require-clean] [--no-targets] RESULTS.jsonl

For each workload and client, over the repetitions:
  median, min-max   requests per second (MiB per second for downloads)
  vs libcurl        the median over repetitions of (client / raw libcurl in the same
                    repetition and workload); 1.00 = as fast as raw libcurl, 0.25 = 4x slower
  CPU/request       median of (user + system CPU time of the client process) / requests
  switches/request  median of the client process's context switches (voluntary and
                    involuntary, all threads) / requests: thread hand-offs and sleeps
  peak RSS          median of the client process's peak resident set, and in brackets its
                    difference to raw libcurl's median
  errors            sum over repetitions; "!n" marks runs that stopped at the time bound
                    before their request count, "FAILED n" runs that printed no result
The baseline is the client named exactly "libcurl"; other raw libcurl clients (such as
"libcurl-handoff", libcurl with CurlXHR's engine and callback threads) are rows like any other.
Then the issue's targets for CurlXHR, each with the measured value (informational: they
never make the exit status non-zero).

--require-clean exits 1 unless every run finished its count with 0 errors.
"""
import argparse
import json
import statistics
import sys

BASELINE = "libcurl"  # matched by exact name: "libcurl-handoff" is a client like the others

# (workload prefix, client, what, minimum ratio to libcurl); the download row also has the
# RSS bound and the POST row the comparison with AsyncHTTPClient (see targets()).
TARGETS = [
    ("get-c64", "curlxhr", "async small GETs, 64 in flight", 0.90),
    ("get-c16", "curlxhr", "async small GETs, 16 in flight", 0.90),
    ("get-c1", "curlxhr", "small GETs one at a time", 0.85),
    ("get-t16", "curlxhr-sync", "sync small GETs from 16 threads", 0.90),
    ("get-t64", "curlxhr-sync", "sync small GETs from 64 threads", 0.90),
    ("download-100m", "curlxhr", "100 MiB download drained in LOADING", 0.90),
    ("post-1m-c8", "curlxhr", "1 MiB POST, 8 in flight", 0.90),
    ("redirect-c16", "curlxhr", "GETs through a 302, 16 in flight (the library follows)", 0.90),
]
RSS_MARGIN_KIB = 16 * 1024


def metric(workload):
    return "bytes_per_s" if workload.startswith("download") else "req_per_s"


def fmt_rate(value, workload):
    if value is None:
        return "-"
    if metric(workload) == "bytes_per_s":
        return f"{value / 1048576:,.0f} MiB/s"
    return f"{value:,.0f} req/s"


def fmt_cpu(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds * 1e6:,.1f} µs"


def load(path):
    runs = {}  # (workload, client) -> {rep: result}
    workloads, clients = [], {}
    with open(path) as lines:
        for line in lines:
            if not line.strip():
                continue
            rep, text = line.rstrip("\n").split("\t", 1)
            result = json.loads(text)
            workload, client = result["workload"], result["client"]
            if workload not in workloads:
                workloads.append(workload)
                clients[workload] = []
            if client not in clients[workload]:
                clients[workload].append(client)
            runs.setdefault((workload, client), {})[int(rep)] = result
    return runs, workloads, clients


def usable(result):
    return result is not None and not result.get("failed") and result.get("requests", 0) > 0


def ratios(runs, workload, client, against=BASELINE):
    """Per-repetition ratios of client to `against` in the same workload."""
    key = metric(workload)
    mine = runs.get((workload, client), {})
    theirs = runs.get((workload, against), {})
    return [
        result[key] / theirs[rep][key]
        for rep, result in mine.items()
        if usable(result) and usable(theirs.get(rep)) and theirs[rep].get(key)
    ]


def median_of(runs, workload, client, field):
    values = [r[field] for r in runs.get((workload, client), {}).values() if usable(r)]
    return statistics.median(values) if values else None


def targets(runs, workloads):
    lines = []
    for prefix, client, what, minimum in TARGETS:
        workload = next((w for w in workloads if w == prefix), None)
        if workload is None:
            continue
        found = ratios(runs, workload, client)
        if not found:
            lines.append(f"| {what} | {client} | ≥ {minimum:.2f}× | no result | ✗ |")
            continue
        ratio = statistics.median(found)
        met = ratio >= minimum
        detail = f"{ratio:.2f}×"
        goal = f"≥ {minimum:.2f}×"
        if workload.startswith("download"):
            rss, base = median_of(runs, workload, client, "peak_rss_kib"), median_of(runs, workload, BASELINE, "peak_rss_kib")
            if rss is not None and base is not None:
                detail += f", RSS {(rss - base) / 1024:+.1f} MiB"
                goal += ", RSS ≤ +16 MiB"
                met = met and rss - base <= RSS_MARGIN_KIB
        if workload.startswith("post") and (workload, "ahc") in runs:
            versus = ratios(runs, workload, client, against="ahc")
            if versus:
                detail += f", {statistics.median(versus):.2f}× ahc"
                goal += ", ≥ 1.00× ahc"
                met = met and statistics.median(versus) >= 1.0
        lines.append(f"| {what} | {client} | {goal} | {detail} | {'✓' if met else '✗'} |")
    if not lines:
        return []
    return ["| target | client | goal | measured (median of per-repetition ratios) | met |",
            "| --- | --- | --- | --- | :---: |"] + lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--require-clean", action="store_true")
    parser.add_argument("--no-targets", action="store_true", help="leave out the targets table (smoke runs)")
    args = parser.parse_args()

    runs, workloads, clients = load(args.results)
    problems = []
    print("| workload | client | median | min–max | vs libcurl | CPU/request | switches/request | peak RSS (vs libcurl) | errors |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for workload in workloads:
        key = metric(workload)
        base_rss = median_of(runs, workload, BASELINE, "peak_rss_kib")
        for client in clients[workload]:
            reps = runs[(workload, client)]
            good = [r for r in reps.values() if usable(r)]
            values = [r[key] for r in good]
            found = ratios(runs, workload, client)
            cpu = [(r["cpu_user_s"] + r["cpu_sys_s"]) / r["requests"] for r in good]
            switches = [r["context_switches"] / r["requests"] for r in good if "context_switches" in r]
            per_request = f"{statistics.median(switches):.2f}" if switches else "-"
            rss = statistics.median([r["peak_rss_kib"] for r in good]) if good else None
            errors = sum(max(r.get("errors", 0), 0) for r in reps.values())
            failed = sum(1 for r in reps.values() if r.get("failed"))
            stopped = sum(1 for r in reps.values() if not r.get("failed") and (r.get("timed_out") or not r.get("requests")))
            marks = str(errors)
            if stopped:
                marks += f" !{stopped}"
            if failed:
                marks += f" FAILED {failed}"
            if errors or failed or stopped:
                firsts = {r.get("first_error") for r in reps.values() if r.get("first_error")}
                problems.append(f"{workload} {client}: {errors} errors, {failed} failed, {stopped} stopped early"
                                + (f"; {'; '.join(sorted(firsts))}" if firsts else ""))
            median = statistics.median(values) if values else None
            spread = f"{fmt_rate(min(values), workload)} – {fmt_rate(max(values), workload)}" if values else "-"
            ratio = f"{statistics.median(found):.2f}" if found else "-"
            if rss is None:
                memory = "-"
            elif client == BASELINE or base_rss is None:
                memory = f"{rss / 1024:,.1f} MiB"
            else:
                memory = f"{rss / 1024:,.1f} MiB ({(rss - base_rss) / 1024:+.1f})"
            print(
                f"| {workload} | {client} | {fmt_rate(median, workload)} | {spread} | {ratio} | "
                f"{fmt_cpu(statistics.median(cpu) if cpu else None)} | {per_request} | {memory} | {marks} |"
            )
    reps_seen = sorted({rep for results in runs.values() for rep in results})
    print()
    print(f"{len(reps_seen)} repetition(s); median over repetitions. vs libcurl: median of per-repetition "
          "ratios to raw libcurl (higher is better). CPU/request: client process only, user + system. "
          "switches/request: the client process's context switches per request. "
          "peak RSS: ru_maxrss of the client process (difference to raw libcurl's in MiB).")
    if not args.no_targets:
        table = targets(runs, workloads)
        if table:
            print()
            print("\n".join(table))
    if problems:
        print()
    for problem in problems:
        print(f"- {problem}")
    if args.require_clean and problems:
        print(f"report.py: {len(problems)} client/workload pair(s) with errors or incomplete runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
