#!/usr/bin/env python3
"""Turns the results of run.sh (lines "REP<TAB>JSON") into a Markdown table.

    report.py [--require-clean] [--no-targets] RESULTS.jsonl

For each workload and client, over the repetitions:
  median, min-max   requests per second (MiB per second for downloads, and for the multipart
                    uploads: MiB of the files sent per second)
  vs libcurl        the median over repetitions of (client / raw libcurl in the same
                    repetition and workload); 1.00 = as fast as raw libcurl, 0.25 = 4x slower
  CPU/request       median of (user + system CPU time of the client process) / requests
  switches/request  median of the client process's context switches (voluntary and
                    involuntary, all threads) / requests: thread hand-offs and sleeps
  peak RSS          median of the client process's peak resident set, and in brackets its
                    difference to raw libcurl's median
  errors            sum over repetitions; "!n" marks runs that stopped at the time bound
                    before their request count, "FAILED n" runs that printed no result
For the cache-hit-* workloads, the requests nginx served during each client's runs
(server_requests, which run.sh adds): a client answered by the cache (curlxhr-cache*) must
reach it with none, and each request that did counts as an error ("+n to the server").
The baseline is the client named exactly "libcurl"; other raw libcurl clients (such as
"libcurl-handoff", libcurl with CurlXHR's engine and callback threads) are rows like any other.
Then, for the workloads whose clients report it (get-h2-*), the protocols the responses came
over and the connections raw libcurl opened (a response over another protocol than the
workload's is an error in its client). Then the issue's targets for CurlXHR, each with the
measured value (informational: they never make the exit status non-zero); the download
targets also bound the peak RSS above raw libcurl's (in the same workload: for
download-file-100m, libcurl writing the same file); some also bound the ratio to another
client in the same repetition (AsyncHTTPClient `ahc`, or CurlXHR's own `curlxhr`, or for
client-bearer-c16 the client layer without its OAuth2 executor, `curlxhr-client-header`; for
cache-hit-100b CurlXHR's network GET `curlxhr-sync`, for cache-hit-100m `cat` of the stored
body file), or only show it (a peer's minimum of None).

--require-clean exits 1 unless every run finished its count with 0 errors.

    report.py --memory [--require-clean] [--no-targets] RESULTS-memory.jsonl

instead reads the lines of the memory programs (curlxhr-memory, memory-peer) and prints, for
each program and baseline kind, the median and range over the repetitions of growth_kib
(VmHWM after the requests minus VmRSS at the baseline), the median baseline, peak and final
RSS; then the target: CurlXHR's growth from the `started` baseline within MEMORY_TARGET_KIB.
"""
import argparse
import json
import statistics
import sys

BASELINE = "libcurl"  # matched by exact name: "libcurl-handoff" is a client like the others

# (workload, client, what, minimum ratio to libcurl (None: shown, not judged; nor shown in a
# workload raw libcurl does not run, such as json-1m), largest peak RSS
# above libcurl's in KiB or None; for the download-file rows, above libcurl's beyond the gap
# get-c1 shows in the same run, when it ran[, {peer client: minimum ratio to it in the same
# repetition}]).
DOWNLOAD_RSS_MARGIN_KIB = 16 * 1024
FILE_RSS_MARGIN_KIB = 4 * 1024
TARGETS = [
    # The thread structure in plain C (libcurl-handoff), and an XHR-style request's least
    # duties on it in plain C (xhr-in-c) and in lean Swift (xhr-in-swift): shown, not judged.
    # Re-based on the floor: the XHR duties in lean Swift (xhr-in-swift), and AsyncHTTPClient.
    ("get-c64", "curlxhr", "async small GETs, 64 in flight", 0.90, None,
     {"xhr-in-swift": 0.97, "ahc": 2.0, "libcurl-handoff": None, "xhr-in-c": None}),
    ("get-c64", "curlxhr-await", "async small GETs, 64 in flight, with async/await (response())", None, None,
     {"curlxhr": 0.95, "ahc": 2.0}),
    ("get-c16", "curlxhr", "async small GETs, 16 in flight", 0.90, None,
     {"xhr-in-swift": 0.97, "ahc": 2.0, "libcurl-handoff": None, "xhr-in-c": None}),
    ("get-c1", "curlxhr", "small GETs one at a time", 0.85, None),
    ("get-h2-c64", "curlxhr", "async small GETs over HTTP/2 + TLS, 64 streams on one connection", 0.95, None, {"xhr-in-swift": 0.97, "ahc": 2.0, "xhr-in-c": None}),
    ("get-t16", "curlxhr-sync", "sync small GETs from 16 threads", 0.90, None),
    ("get-t64", "curlxhr-sync", "sync small GETs from 64 threads", 0.90, None),
    ("download-100m", "curlxhr", "100 MiB download drained in LOADING", 0.90, DOWNLOAD_RSS_MARGIN_KIB),
    ("download-file-100m", "curlxhr", "100 MiB download to a file (setResponseFile), async",
     0.95, FILE_RSS_MARGIN_KIB),
    ("download-file-100m", "curlxhr-sync", "100 MiB download to a file (setResponseFile), sync",
     0.95, FILE_RSS_MARGIN_KIB),
    ("post-1m-c8", "curlxhr", "1 MiB POST, 8 in flight", 0.90, None, {"ahc": 1.0}),
    ("upload-multipart-2x50m", "curlxhr", "2 × 50 MiB multipart upload (addPostFile; raw libcurl: curl_mime), async", 0.95, None),
    ("upload-multipart-2x50m", "curlxhr-sync", "2 × 50 MiB multipart upload (addPostFile; raw libcurl: curl_mime), sync", 0.95, None),
    ("redirect-c16", "curlxhr", "GETs through a 302, 16 in flight (the library follows)", 0.90, None),
    ("json-1m", "curlxhr-client", "1 MiB JSON array decoded through the client (CurlXHRClient invoke)", None, None,
     {"ahc-json": 1.0}),
    # The OAuth2 executor's own cost is the ratio to the same client with the token as a
    # static default header (≥ 0.95: at most 5 %); raw libcurl's ratio is shown, not judged:
    # the client layer's price over libcurl (a task and a body collected into Data a call) is
    # what get-c16 (curlxhr) and get-c64 (curlxhr-await) already judge.
    # The client layer's own cost: HttpClient's invoke against the core's response() (a task
    # each, a request reused) on the same small GETs, without and with the bearer token.
    ("client-c16", "curlxhr-client", "small GETs through the client (HttpClient invoke into Data), 16 in flight",
     None, None, {"curlxhr-await": 0.95}),
    ("client-bearer-c16", "curlxhr-client", "small GETs through the client with the OAuth2 executor (a bearer token on every call), 16 in flight",
     None, None, {"curlxhr-client-header": 0.95, "curlxhr-await": 0.95, "ahc": 1.0}),
    # The HTTP cache: a fresh hit against the same GET from nginx by CurlXHR (raw libcurl's
    # ratio shown), and a 100 MiB body read from the cache against `cat` of the stored file.
    # The 100 MiB target is judged on the streaming consumer (async, the receive buffer
    # drained at each LOADING); the others are shown (a peer minimum of None: not judged).
    ("cache-hit-100b", "curlxhr-cache-sync", "100-byte GETs answered from the cache (fresh hit), sync, one at a time",
     None, None, {"curlxhr-sync": 10.0}),
    ("cache-hit-100m", "curlxhr-cache", "100 MiB answered from the cache, async, drained at each LOADING",
     None, None, {"cat": 0.9}),
    ("cache-hit-100m", "curlxhr-cache-await", "100 MiB answered from the cache, async/await body (not judged)",
     None, None, {"cat": None}),
    ("cache-hit-100m", "curlxhr-cache-sync", "100 MiB answered from the cache, sync, whole in the receive buffer (not judged)",
     None, None, {"cat": None}),
]
# The memory target: CurlXHR's growth over the small GETs from the `started` baseline.
MEMORY_TARGET_KIB = 1536
MEMORY_PROGRAMS = {"curlxhr": "CurlXHR (`curlxhr-memory`)", "libcurl": "raw libcurl (`memory-peer`)"}
MEMORY_BASELINES = {"started": "`started`", "cold": "`cold`"}


# Workloads measured in bytes per second: downloads, uploads and large cached bodies.
BYTE_WORKLOADS = ("download", "upload", "cache-hit-1m", "cache-hit-100m")


def metric(workload):
    # The multipart uploads count the files' bytes (plus the 3-byte answer) as bytes_per_s.
    return "bytes_per_s" if workload.startswith(BYTE_WORKLOADS) else "req_per_s"


def answered_by_cache(client):
    """Clients whose every timed response must come from a cache (cache-hit-*): nginx must
    serve none of their requests (run.sh's server_requests)."""
    return client.startswith("curlxhr-cache")


def fmt_rate(value, workload):
    if value is None:
        return "-"
    if metric(workload) == "bytes_per_s":
        return f"{value / 1048576:,.0f} MiB/s"
    # A decimal below 100 req/s (json-1m: a 1 MiB body decoded a request).
    return f"{value:,.1f} req/s" if value < 100 else f"{value:,.0f} req/s"


def fmt_cpu(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds * 1e6:,.1f} µs"


def result_lines(path):
    """The (repetition, result) of each "REP<TAB>JSON" line of a results file."""
    with open(path) as lines:
        for line in lines:
            if line.strip():
                rep, text = line.rstrip("\n").split("\t", 1)
                yield rep, json.loads(text)


def load(path):
    runs = {}  # (workload, client) -> {rep: result}
    workloads, clients = [], {}
    for rep, result in result_lines(path):
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
    for prefix, client, what, minimum, rss_margin, *versus_peers in TARGETS:
        workload = next((w for w in workloads if w == prefix), None)
        if workload is None:
            continue
        found = ratios(runs, workload, client)
        goal = "" if minimum is None else f"≥ {minimum:.2f}×"
        # A workload without raw libcurl (json-1m) is judged against its peers only.
        versus_libcurl = minimum is not None or (workload, BASELINE) in runs
        if not found and (versus_libcurl or median_of(runs, workload, client, "requests") is None):
            lines.append(f"| {what} | {client} | {goal} | no result | ✗ |")
            continue
        met = True
        detail = ""
        if found:
            ratio = statistics.median(found)
            met = minimum is None or ratio >= minimum
            detail = f"{ratio:.2f}×"
        if rss_margin is not None:
            rss, base = median_of(runs, workload, client, "peak_rss_kib"), median_of(runs, workload, BASELINE, "peak_rss_kib")
            goal += f", RSS ≤ +{rss_margin / 1024:.0f} MiB"
            # The gap a Swift program has over raw libcurl whatever it transfers (the Swift
            # runtime and FoundationEssentials, about 9.5 MiB): the small GETs one at a time of
            # the same run. The file downloads are judged on what they add beyond it.
            gap = None
            if workload.startswith("download-file"):
                own, theirs = median_of(runs, "get-c1", "curlxhr", "peak_rss_kib"), median_of(runs, "get-c1", BASELINE, "peak_rss_kib")
                gap = own - theirs if own is not None and theirs is not None else None
            if rss is not None and base is not None:
                detail += f", RSS {(rss - base) / 1024:+.1f} MiB"
                if gap is not None:
                    detail += f" ({gap / 1024:+.1f} MiB at get-c1: {(rss - base - gap) / 1024:+.1f} MiB for the download)"
                    met = met and rss - base - gap <= rss_margin
                else:
                    met = met and rss - base <= rss_margin
            else:
                detail += ", RSS: no result"
                met = False
        for peer, least in (versus_peers[0] if versus_peers else {}).items():
            if (workload, peer) not in runs:
                continue
            versus = ratios(runs, workload, client, against=peer)
            goal += f"{', ' if goal else ''}" + (f"≥ {least:.2f}× {peer}" if least is not None else f"shown: × {peer}")
            if versus:
                detail += f"{', ' if detail else ''}{statistics.median(versus):.2f}× {peer}"
                met = met and (least is None or statistics.median(versus) >= least)
            else:
                detail += f"{', ' if detail else ''}{peer}: no result"
                met = False
        if not detail:  # no raw libcurl, and none of the peers ran
            detail, met = "nothing to compare with", False
        peers = versus_peers[0] if versus_peers else {}
        judged = minimum is not None or rss_margin is not None or any(least is not None for least in peers.values())
        lines.append(f"| {what} | {client} | {goal} | {detail} | {('✓' if met else '✗') if judged else '–'} |")
    if not lines:
        return []
    return ["| target | client | goal | measured (median of per-repetition ratios) | met |",
            "| --- | --- | --- | --- | :---: |"] + lines


def protocol_lines(runs, workloads, clients):
    """For the workloads whose clients report "http_version" (get-h2-*): the protocols each
    client's responses came over, and, where reported, the connections each run opened."""
    lines = []
    for workload in workloads:
        parts = []
        for client in clients[workload]:
            reps = [r for r in runs[(workload, client)].values() if not r.get("failed")]
            versions = sorted({v for r in reps for v in r.get("http_version", "").split(",") if v})
            if not versions:
                continue
            part = f"{client} {', '.join(versions)}"
            connections = sorted({r["connections"] for r in reps if "connections" in r})
            if connections:
                spread = f"{connections[0]}" if len(connections) == 1 else f"{connections[0]}–{connections[-1]}"
                part += f" ({spread} connection{'s' if connections[-1] != 1 else ''} a run)"
            parts.append(part)
        if parts:
            lines.append(f"- {workload}: responses over {'; '.join(parts)}")
    return lines


def server_request_lines(runs, workloads, clients):
    """For the workloads whose runs carry "server_requests" (cache-hit-*): the requests nginx
    served during each client's runs (the median, and the most in one run)."""
    lines = []
    for workload in workloads:
        parts = []
        for client in clients[workload]:
            counts = [r["server_requests"] for r in runs[(workload, client)].values() if "server_requests" in r]
            if counts:
                parts.append(f"{client} {statistics.median(counts):,.0f}" + (f" (max {max(counts):,})" if max(counts) != min(counts) else ""))
        if parts:
            lines.append(f"- {workload}: requests nginx served during a run (median): {'; '.join(parts)}")
    return lines


def memory_report(path, require_clean, no_targets):
    """The table of the memory programs' lines (see the module's docstring)."""
    runs = {}  # (client, baseline) -> [result]
    order = []
    for _, result in result_lines(path):
        key = (result["client"], result.get("baseline", "?"))
        if key not in runs:
            runs[key] = []
            order.append(key)
        runs[key].append(result)
    rank = {name: index for index, name in enumerate(MEMORY_PROGRAMS)}
    order.sort(key=lambda key: (rank.get(key[0], len(rank)), list(MEMORY_BASELINES).index(key[1])
                                if key[1] in MEMORY_BASELINES else len(MEMORY_BASELINES)))

    def good(results):
        return [r for r in results if not r.get("failed") and r.get("errors", 1) == 0 and "growth_kib" in r]

    def median(results, field):
        values = [r[field] for r in results if field in r]
        return statistics.median(values) if values else None

    def kib(value):
        return "-" if value is None else f"{value:,.0f}"

    problems = []
    requests = sorted({r.get("requests") for results in runs.values() for r in good(results)})
    print("| program | baseline | growth KiB (median) | min–max | vs libcurl | baseline RSS KiB | peak KiB "
          "| RSS at end KiB | end − baseline: anon / file KiB | runs | errors |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for client, baseline in order:
        results = runs[(client, baseline)]
        usable_runs = good(results)
        growth = [r["growth_kib"] for r in usable_runs]
        errors = sum(max(r.get("errors", 0), 0) for r in results)
        failed = sum(1 for r in results if r.get("failed"))
        marks = str(errors) + (f" FAILED {failed}" if failed else "")
        if errors or failed or len(usable_runs) < len(results):
            firsts = {r.get("first_error") for r in results if r.get("first_error")}
            problems.append(f"{client} {baseline}: {errors} errors, {failed} failed"
                            + (f"; {'; '.join(sorted(firsts))}" if firsts else ""))
        versus = "-"
        peer = good(runs.get(("libcurl", baseline), []))
        if client != "libcurl" and growth and peer:
            versus = f"{statistics.median(growth) - statistics.median([r['growth_kib'] for r in peer]):+,.0f}"
        spread = f"{min(growth):,} – {max(growth):,}" if growth else "-"
        print(f"| {MEMORY_PROGRAMS.get(client, client)} | {MEMORY_BASELINES.get(baseline, baseline)} | "
              f"{kib(statistics.median(growth) if growth else None)} | {spread} | {versus} | "
              f"{kib(median(usable_runs, 'baseline_kib'))} | {kib(median(usable_runs, 'peak_kib'))} | "
              f"{kib(median(usable_runs, 'end_rss_kib'))} | {kib(median(usable_runs, 'anon_growth_kib'))} / "
              f"{kib(median(usable_runs, 'file_growth_kib'))} | {len(usable_runs)} | {marks} |")
    print()
    print(f"{'/'.join(str(n) for n in requests) or '?'} small synchronous GETs one at a time (a new request "
          "object each for CurlXHR). Baselines: `started`, VmRSS after the library started without sending "
          "(the comparable one); `cold`, VmRSS before anything of the library ran (libcurl's one-time start-up "
          "then counts as growth). growth: VmHWM after the requests − VmRSS at the baseline (the peak is "
          "reset at the baseline), median and range over the runs; vs libcurl: the difference of the medians "
          "to raw libcurl's with the same baseline (KiB). Baseline, peak and end: medians of VmRSS at the "
          "baseline, VmHWM at the end, VmRSS at the end; anon / file: medians of the change of RssAnon "
          "(heap, stacks) and RssFile (library code and data touched) from the baseline to the end.")
    if not no_targets:
        growth = [r["growth_kib"] for r in good(runs.get(("curlxhr", "started"), []))]
        print()
        print("| target | goal | measured (median) | met |")
        print("| --- | --- | ---: | :---: |")
        if growth:
            value = statistics.median(growth)
            met = "✓" if value <= MEMORY_TARGET_KIB else "✗"
            print(f"| CurlXHR's growth over the GETs from the `started` baseline | ≤ {MEMORY_TARGET_KIB} KiB | "
                  f"{value:,.0f} KiB (max {max(growth):,}) | {met} |")
        else:
            print(f"| CurlXHR's growth over the GETs from the `started` baseline | ≤ {MEMORY_TARGET_KIB} KiB | no result | ✗ |")
    if problems:
        print()
    for problem in problems:
        print(f"- {problem}")
    if require_clean and problems:
        print(f"report.py: {len(problems)} program/baseline pair(s) with errors or failed runs", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--require-clean", action="store_true")
    parser.add_argument("--no-targets", action="store_true", help="leave out the targets table (smoke runs)")
    parser.add_argument("--memory", action="store_true", help="the results of the memory programs")
    args = parser.parse_args()
    if args.memory:
        return memory_report(args.results, args.require_clean, args.no_targets)

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
            # A run answered by the cache that reached the server is an error for each request
            # it sent.
            reached = sum(max(r.get("server_requests", 0), 0) for r in reps.values() if answered_by_cache(client))
            failed = sum(1 for r in reps.values() if r.get("failed"))
            stopped = sum(1 for r in reps.values() if not r.get("failed") and (r.get("timed_out") or not r.get("requests")))
            marks = str(errors)
            if stopped:
                marks += f" !{stopped}"
            if failed:
                marks += f" FAILED {failed}"
            if reached:
                marks += f" +{reached} to the server"
            if errors or failed or stopped or reached:
                firsts = {r.get("first_error") for r in reps.values() if r.get("first_error")}
                problems.append(f"{workload} {client}: {errors} errors, {failed} failed, {stopped} stopped early"
                                + (f", {reached} requests reached the server" if reached else "")
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
    protocols = protocol_lines(runs, workloads, clients) + server_request_lines(runs, workloads, clients)
    if protocols:
        print()
        print("\n".join(protocols))
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
