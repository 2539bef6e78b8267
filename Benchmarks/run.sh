#!/usr/bin/env bash
# Benchmarks CurlXHR against raw libcurl, URLSession and AsyncHTTPClient on loopback.
#
#   Benchmarks/run.sh [--smoke] [--reps N] [--workloads A,B] [--without-ahc] [--skip-build] [--skip-install]
#   Benchmarks/run.sh --instructions [--smoke] [--skip-build] [--skip-install]
#   Benchmarks/run.sh --profile [--skip-build] [--skip-install]
#   Benchmarks/run.sh --memory [--reps N] [--smoke] [--skip-build] [--skip-install]
#   Benchmarks/run.sh --startup [--runs N] [--skip-build]
#
#   (default)       every client on every workload, --reps times (default 5), then the table.
#   --smoke         a few hundred requests per client and workload (the 100 MiB downloads
#                   use the 1 MiB file: download-1m, download-file-1m; the multipart upload
#                   two 1 MiB files: upload-multipart-2x1m; the cached 100 MiB body the 1 MiB
#                   one: cache-hit-1m), 1 repetition; exits
#                   non-zero unless every client completes its count with 0 errors and the
#                   table prints; then runs each memory program (see --memory) once per
#                   baseline kind with 20 GETs and checks they complete with 0 errors (their
#                   numbers are not judged). For CI.
#   --reps N        repetitions of every client x workload (default 5).
#   --workloads A,B only these workloads (names as in the table, e.g. get-c1,get-t16;
#                   download-file-100m, or download-file-1m with --smoke;
#                   upload-multipart-2x50m, or upload-multipart-2x1m with --smoke;
#                   cache-hit-100m, or cache-hit-1m with --smoke). Only a run with an
#                   AsyncHTTPClient client (ahc, ahc-*) builds and needs Benchmarks/AHC.
#   --without-ahc   leave the AsyncHTTPClient clients out (and their release build, about
#                   ten minutes on two cores): CI's smoke run.
#   --instructions  instead of the timed runs: user-space instructions per small GET, one at
#                   a time, of raw libcurl, xhr-in-swift and CurlXHR (sync, async with callbacks,
#                   async/await, the client layer's invoke; and sync with five request headers,
#                   --headers 5), with callgrind; then the client layer against the core 16 in
#                   flight, with and without the OAuth2 bearer token (client-c16, client-bearer-c16);
#                   then CurlXHR async against xhr-in-swift at 16 and 64 in flight and over
#                   HTTP/2 (get-c16, get-c64, get-h2-c64), each the median of three runs.
#   --profile       instead of the timed runs: callgrind profiles of CurlXHR (2000 sync GETs
#                   one at a time; async with callbacks and with async/await, 64 in flight;
#                   2000 sync GETs answered from the HTTP cache, cache-hit-c1), annotated, in
#                   Benchmarks/results/.
#   --memory        instead of the timed runs: resident memory growth over 200 small
#                   synchronous GETs one at a time (a new HttpRequest each) of CurlXHR
#                   (curlxhr-memory) and raw libcurl with CurlXHR's engine thread (memory-peer),
#                   each from two baselines: `started` (VmRSS after the library started through
#                   a call that sends nothing: the comparable one) and `cold` (before anything
#                   of the library ran: libcurl's one-time start-up included); growth is VmHWM
#                   after the requests minus the baseline. --reps runs of each (default 5); the
#                   table (median, min-max; target: CurlXHR `started` <= 1536 KiB) goes to
#                   Benchmarks/results/<time>-memory.md. With --smoke: 20 GETs, 1 run, no target.
#   --startup       instead: the xhr tool's start-up against curl's, one small GET each run
#                   alternately (Benchmarks/startup.sh: median wall, CPU, peak RSS, ratios).
#   --skip-build    use the clients already built.
#   --skip-install  do not check for (or apt-get install) nginx and the build dependencies.
#
# Environment: BENCH_JOBS (swift build -j, default: all cores), BENCH_SERVER_CPU (default 0),
# BENCH_CLIENT_CPU (default 1), BENCH_MAX_SECONDS (time bound of one run, default 60),
# BENCH_PROFILE_PEERS=1 (--profile also profiles raw libcurl doing the same work),
# BENCH_PROFILE_REQUESTS (--profile: requests one at a time, default 2000; 10x that async).
#
# nginx (1 worker, pinned to BENCH_SERVER_CPU) serves /100b, /1m, /100m, /1m.json (a JSON
# array of exactly 1 MiB, application/json) and the POST sink /sink on a free 127.0.0.1
# port, and the same over HTTP/2 with TLS on a second one (https://localhost:PORT2; its
# certificate is signed by a CA made for the run, which the clients of the get-h2-* workloads
# trust through --cacert), from a temp dir that is removed on exit. Each client run is one
# process pinned to BENCH_CLIENT_CPU that prints one JSON line; the lines go to
# Benchmarks/results/<time>.jsonl and report.py turns them into a Markdown table
# (Benchmarks/results/<time>.md, which also names the machine). In the download-file
# workloads each client writes the bodies to its own file in that temp dir (curl-bench
# --output-file, curlxhr-bench --response-file), which it removes when it is done. For the
# upload-multipart workloads run.sh writes two files of random bytes there once, which every
# client POSTs as one multipart/form-data form to /sink (curl-bench --mime-file,
# curlxhr-bench --post-file). The json-* workloads decode the JSON array into [JSONItem]
# (BenchSupport) through CurlXHR's client layer (curlxhr-client-bench: HttpClient.invoke) and
# through AsyncHTTPClient + JSONDecoder (ahc-bench --json); both check the item count. The
# client-bearer-* workloads fetch /100b-bearer, which nginx serves only to a request carrying
# the run's bearer token: through the client layer with an OAuth2Authorizer that gets the token
# from nginx's /token (curlxhr-client-bench --oauth2), and with the token as a static header
# (curlxhr-client-bench, ahc-bench and curl-bench --header). The cache-hit-* workloads fetch
# /cached/… (the same files with `Cache-Control: max-age=86400`) through CurlXHR's HTTP cache
# in a folder warmed once a run (curlxhr-bench --cache-folder: fresh hits, and nginx must
# serve none of them, counted through its /nginx-status), against the same GET from nginx
# (cache-hit-100b) or `cat` of the stored body file (cache-hit-100m: cat-bench.py).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
smoke=0
reps=5
mode=timed
only=""
skip_build=0
skip_install=0
without_ahc=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --reps) reps="${2:?--reps needs a number}"; shift ;;
    --workloads) only="${2:?--workloads needs a list}"; shift ;;
    --instructions) mode=instructions ;;
    --profile) mode=profile ;;
    --memory) mode=memory ;;
    --startup) shift; exec "$here/startup.sh" "$@" ;;
    --skip-build) skip_build=1 ;;
    --skip-install) skip_install=1 ;;
    --without-ahc) without_ahc=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 64 ;;
  esac
  shift
done
[ $smoke -eq 1 ] && reps=1
case "$reps" in ''|*[!0-9]*|0) echo "--reps needs a positive number" >&2; exit 64 ;; esac
jobs=${BENCH_JOBS:-$(nproc)}
server_cpu=${BENCH_SERVER_CPU:-0}
client_cpu=${BENCH_CLIENT_CPU:-1}
max_seconds=${BENCH_MAX_SECONDS:-60}
log() { echo "[run.sh $(date +%H:%M:%S)] $*" >&2; }
started_at=$SECONDS

# ---- Workloads ----------------------------------------------------------------------------

# name path mode concurrency requests(full) requests(smoke) expected-bytes post-bytes clients...
# curlxhr-sync and ahc-wait always run in threads mode (blocking calls); libcurl runs in the
# workload's mode; libcurl-handoff (raw libcurl with CurlXHR's engine and callback threads)
# in handoff mode; xhr-in-c (those threads, plus an XHR-style request's least duties in
# plain C) in xhr mode; xhr-in-swift (the same in lean Swift) and the others are async.
# download-file-*: the body written to a file, one request at a time (see file_options).
# upload-multipart-*: a form of two files of upload_file_bytes each POSTed to the sink, one
# request at a time (see upload_options); post-bytes 0, the clients count the files' bytes.
# json-*: the clients decode each body, a JSON array, into [JSONItem] and check its count
# (see json_options); only clients that decode (curlxhr-client, ahc-json) run them.
# client-bearer-*: every request carries the run's bearer token, which the path demands
# (see bearer_options): curlxhr-client gets it through its OAuth2Authorizer, the others send
# it as a static header.
# cache-hit-*: GETs of cached/… (nginx adds `Cache-Control: max-age=86400` there), which the
# curlxhr-cache* clients answer from a cache folder run.sh warmed (see cache_options); their
# peers fetch the same URL from nginx (cache-hit-100b) or read the stored body file with cat
# (cache-hit-100m: cat-bench.py).
# A path starting with h2/ is fetched from the TLS listener, https://localhost:TLS_PORT/REST
# (see tls_options): every client trusts the run's CA and must get each response over HTTP/2.
json_bytes=1048576  # /1m.json's size (run.sh writes it below)
if [ $smoke -eq 1 ]; then
  download="download-1m 1m async 1 3 3 1048576 0"
  download_file="download-file-1m 1m async 1 20 20 1048576 0"
  upload="upload-multipart-2x1m sink async 1 10 10 3 0"
  upload_file_bytes=1048576
  cache_big="cache-hit-1m cached/1m async 1 20 20 1048576 0"
else
  download="download-100m 100m async 1 20 3 104857600 0"
  download_file="download-file-100m 100m async 1 20 3 104857600 0"
  upload="upload-multipart-2x50m sink async 1 50 10 3 0"
  upload_file_bytes=52428800
  cache_big="cache-hit-100m cached/100m async 1 50 20 104857600 0"
fi
workloads=(
  "get-c64 100b async 64 50000 300 100 0 libcurl libcurl-handoff xhr-in-c xhr-in-swift curlxhr curlxhr-await urlsession ahc"
  "get-c16 100b async 16 50000 300 100 0 libcurl libcurl-handoff xhr-in-c xhr-in-swift curlxhr urlsession ahc"
  "get-c1 100b async 1 20000 200 100 0 libcurl libcurl-handoff curlxhr urlsession ahc"
  "get-h2-c64 h2/100b async 64 50000 300 100 0 libcurl libcurl-handoff xhr-in-c xhr-in-swift curlxhr ahc"
  "get-t16 100b threads 16 50000 300 100 0 libcurl curlxhr-sync ahc-wait"
  "get-t64 100b threads 64 50000 300 100 0 libcurl curlxhr-sync ahc-wait"
  "$download libcurl curlxhr curlxhr-sync urlsession ahc ahc-collect"
  "$download_file libcurl curlxhr curlxhr-sync"
  "post-1m-c8 sink async 8 2000 50 3 1048576 libcurl curlxhr urlsession ahc"
  "$upload libcurl curlxhr curlxhr-sync"
  "redirect-c16 redirect async 16 20000 300 100 0 libcurl curlxhr urlsession ahc"
  "json-1m 1m.json async 1 200 20 $json_bytes 0 curlxhr-client ahc-json"
  "client-c16 100b async 16 50000 300 100 0 libcurl curlxhr-await curlxhr-client"
  "client-bearer-c16 100b-bearer async 16 50000 300 100 0 libcurl curlxhr-await curlxhr-client curlxhr-client-header ahc"
  "cache-hit-100b cached/100b threads 1 50000 200 100 0 libcurl curlxhr-sync curlxhr-cache-sync"
  "$cache_big cat curlxhr-cache curlxhr-cache-await curlxhr-cache-sync"
)
if [ -n "$only" ]; then
  chosen=()
  for workload in "${workloads[@]}"; do
    case ",$only," in *",${workload%% *},"*) chosen+=("$workload") ;; esac
  done
  [ ${#chosen[@]} -gt 0 ] || { echo "run.sh: no workload named in '$only'" >&2; exit 64; }
  workloads=("${chosen[@]}")
fi
# --without-ahc: the AsyncHTTPClient clients (ahc, ahc-*) left out of every workload, and a
# workload left with none dropped.
if [ $without_ahc -eq 1 ]; then
  kept=()
  for workload in "${workloads[@]}"; do
    read -r -a words <<< "$workload"
    line=("${words[@]:0:8}")
    for client in "${words[@]:8}"; do
      case $client in ahc|ahc-*) ;; *) line+=("$client") ;; esac
    done
    [ ${#line[@]} -gt 8 ] && kept+=("${line[*]}")
  done
  workloads=("${kept[@]}")
fi
# Whether a timed run has an AsyncHTTPClient client (ahc, ahc-*) to build and run.
uses_ahc=0
if [ $mode = timed ]; then
  for workload in "${workloads[@]}"; do
    case " $workload " in *" ahc "*|*" ahc-"*) uses_ahc=1 ;; esac
  done
fi

# ---- Dependencies -------------------------------------------------------------------------

install_packages() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || { echo "run.sh: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  log "installing ${missing[*]}"
  # Wait for any other apt/dpkg run rather than fail on its lock.
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -y -qq)
  if ! "${apt[@]}" install "${missing[@]}" > /dev/null 2>&1; then
    "${apt[@]}" update > /dev/null
    "${apt[@]}" install "${missing[@]}" > /dev/null
  fi
}

if [ $skip_install -eq 0 ]; then
  # libcurl, MIT Kerberos, SQLite, libpsl, zlib, brotli and zstd headers to build CurlXHR; nginx for the server; gcc for
  # the raw libcurl client; curl to check the server; valgrind for the callgrind modes.
  # openssl makes the TLS listener's certificates.
  packages=(nginx libcurl4-openssl-dev libkrb5-dev libsqlite3-dev libpsl-dev zlib1g-dev libbrotli-dev libzstd-dev gcc binutils python3 curl util-linux coreutils openssl)
  case $mode in instructions|profile) packages+=(valgrind) ;; esac
  install_packages "${packages[@]}"
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "run.sh: nginx is not installed (run without --skip-install)" >&2; exit 1; }

# ---- Build ------------------------------------------------------------------------------

curl_bin=$here/.build/curl-bench
peer_bin=$here/.build/memory-peer
clients_bin=$here/Clients/.build/release
ahc_bin=$here/AHC/.build/release

build_swift_package() {  # label directory
  local build_log=$here/.build/build-$1.log started=$SECONDS
  # No cached build manifest: a file added to the root package (which the clients use by
  # path) is otherwise left out of the plan until the manifest changes.
  if ! swift build -c release -j "$jobs" --disable-build-manifest-caching --package-path "$2" > "$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    echo "run.sh: building $1 failed (full log: $build_log)" >&2
    exit 1
  fi
  log "built $1 in $((SECONDS - started)) s"
}

if [ $skip_build -eq 0 ]; then
  mkdir -p "$here/.build"
  build_started=$SECONDS
  gcc -O2 -Wall -o "$curl_bin" "$here/curl-bench.c" -lcurl -lpthread
  gcc -O2 -Wall -o "$peer_bin" "$here/memory-peer.c" -lcurl -lpthread
  build_swift_package "the CurlXHR and URLSession clients" "$here/Clients"
  # The instruction counts, profiles and memory runs need only the C clients and this package,
  # and so do timed runs of workloads without an AsyncHTTPClient client.
  [ $uses_ahc -eq 1 ] && build_swift_package "the AsyncHTTPClient client" "$here/AHC"
  log "all builds took $((SECONDS - build_started)) s (swift build -j $jobs)"
fi
needed=("$curl_bin" "$clients_bin/curlxhr-bench")
[ $mode = timed ] && needed+=("$clients_bin/urlsession-bench" "$clients_bin/curlxhr-client-bench" "$clients_bin/xhr-in-swift")
[ $uses_ahc -eq 1 ] && needed+=("$ahc_bin/ahc-bench")
# The memory programs: --memory, and the smoke run's check that they complete.
if [ $mode = memory ] || { [ $mode = timed ] && [ $smoke -eq 1 ]; }; then
  needed+=("$peer_bin" "$clients_bin/curlxhr-memory")
fi
for binary in "${needed[@]}"; do
  [ -x "$binary" ] || { echo "run.sh: missing $binary (run without --skip-build)" >&2; exit 1; }
done

# ---- The load server ----------------------------------------------------------------------

server_dir=$(mktemp -d /tmp/curlxhr-bench.XXXXXX)
stop_server() {
  if [ -s "$server_dir/nginx.pid" ]; then
    kill "$(cat "$server_dir/nginx.pid")" 2>/dev/null || true
    for _ in $(seq 25); do
      [ -e "$server_dir/nginx.pid" ] || break
      sleep 0.2
    done
  fi
  rm -rf "$server_dir"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

mkdir -p "$server_dir/www"
head -c 100 /dev/urandom > "$server_dir/www/100b"
head -c 1048576 /dev/urandom > "$server_dir/www/1m"
[ $smoke -eq 1 ] || [ $mode != timed ] || head -c 104857600 /dev/urandom > "$server_dir/www/100m"
: > "$server_dir/www/sink"
# /1m.json, the json-* workloads' body: a JSON array of objects such as
# {"id":7,"name":"item-7","price":3.09,"tags":["a","b","c"],"active":false} (ids 0, 1, …; the
# other fields follow from the id), compact, as many as fit in 1 MiB, then spaces before the
# closing bracket to make it exactly json_bytes long. The same bytes every run; json_items is
# the number of objects, which the decoding clients check (--json-items).
json_items=$(python3 - "$server_dir/www/1m.json" "$json_bytes" <<'PYTHON'
import json, sys
path, size = sys.argv[1], int(sys.argv[2])
items, length = [], 2  # the brackets
while True:
    i = len(items)
    item = json.dumps({"id": i, "name": f"item-{i}", "price": (i * 37 % 10000 + 50) / 100,
                       "tags": [["a", "b"], ["c"], [], ["a", "b", "c"]][i % 4], "active": i % 3 != 0},
                      separators=(",", ":"))
    if length + len(item) + (1 if items else 0) > size:
        break
    length += len(item) + (1 if items else 0)
    items.append(item)
data = ("[" + ",".join(items) + " " * (size - length) + "]").encode()
assert len(data) == size and len(json.loads(data)) == len(items)
with open(path, "wb") as file:
    file.write(data)
print(len(items))
PYTHON
)
chmod 755 "$server_dir" "$server_dir/www"   # nginx's worker runs as an unprivileged user
chmod 644 "$server_dir"/www/*
# The TLS listener's certificates, new for each run: a private CA (EC P-256) and a server
# certificate for localhost and 127.0.0.1 signed by it. The clients trust tls/ca.pem only
# (--cacert), so they verify the server as they would any other.
tls_dir=$server_dir/tls
ca_file=$tls_dir/ca.pem
mkdir -p "$tls_dir"
make_certificates() {
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc)
  openssl req -x509 "${ec[@]}" -keyout "$tls_dir/ca.key" -out "$ca_file" -days 2 -subj /CN=bench-ca
  openssl req "${ec[@]}" -keyout "$tls_dir/server.key" -out "$tls_dir/server.csr" -subj /CN=localhost
  printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" > "$tls_dir/server.ext"
  openssl x509 -req -in "$tls_dir/server.csr" -CA "$ca_file" -CAkey "$tls_dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$tls_dir/server.ext" -out "$tls_dir/server.pem"
  # The client certificate of the get-mtls-100b rows, and the server key's pin.
  openssl req "${ec[@]}" -keyout "$tls_dir/client.key" -out "$tls_dir/client.csr" -subj /CN=bench-client
  printf '%s\n' "basicConstraints=CA:FALSE" "extendedKeyUsage=clientAuth" > "$tls_dir/client.ext"
  openssl x509 -req -in "$tls_dir/client.csr" -CA "$ca_file" -CAkey "$tls_dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$tls_dir/client.ext" -out "$tls_dir/client.pem"
  openssl x509 -in "$tls_dir/server.pem" -pubkey -noout | openssl pkey -pubin -outform DER \
    | openssl dgst -sha256 -binary | base64 > "$tls_dir/server.pin"
}
if ! make_certificates > "$tls_dir/openssl.log" 2>&1; then
  cat "$tls_dir/openssl.log" >&2
  echo "run.sh: making the TLS certificates failed" >&2
  exit 1
fi
# (nginx's master process reads the certificate and key, as root: they stay private.)
# Three free ports, held together while picked so they differ.
read -r port tls_port mtls_port < <(python3 -c 'import socket
sockets = [socket.socket() for _ in range(3)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
# The access token nginx's /token gives and /100b-bearer wants (the client-bearer-* workloads).
bearer_token=bench-token-7f3c9a1e5b2d48c6a0e4f1b9d3c7a5e2
sed -e "s#@DIR@#$server_dir#g" -e "s#@PORT@#$port#g" -e "s#@TLS_PORT@#$tls_port#g" -e "s#@MTLS_PORT@#$mtls_port#g" \
  -e "s#@BEARER_TOKEN@#$bearer_token#g" "$here/nginx.conf.in" > "$server_dir/nginx.conf"
taskset -c "$server_cpu" "$nginx_bin" -c "$server_dir/nginx.conf" -e "$server_dir/error.log"
base=http://127.0.0.1:$port
tls_base=https://localhost:$tls_port
mtls_base=https://localhost:$mtls_port
# What a client of the get-mtls-100b rows adds: trust, its certificate, the server's key pinned.
mtls_options=(--cacert "$ca_file" --cert "$tls_dir/client.pem" --key "$tls_dir/client.key"
              --pinnedpubkey "sha256//$(cat "$tls_dir/server.pin")")
for _ in $(seq 50); do
  curl -fs --noproxy '*' -o /dev/null "$base/100b" && break
  sleep 0.1
done
check() {  # what, expected "status bytes", curl arguments...
  local what=$1 expected=$2
  shift 2
  local got
  got=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{size_download}' "$@")
  [ "$got" = "$expected" ] || { echo "run.sh: server check failed: $what gave '$got', expected '$expected'" >&2; exit 1; }
}
check "GET /100b" "200 100" "$base/100b"
check "GET /100b over TLS with the client certificate, the key pinned" "200 100" "${mtls_options[@]}" "$mtls_base/100b"
check "POST 1 MiB to /sink" "200 3" --data-binary "@$server_dir/www/1m" "$base/sink"
[ -e "$server_dir/www/100m" ] && check "GET /100m" "200 104857600" "$base/100m"
# The JSON file must come as application/json: CurlXHRClient decodes a body by its type.
got=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{size_download} %{content_type}' "$base/1m.json" || true)
[ "$got" = "200 $json_bytes application/json" ] || { echo "run.sh: server check failed: GET /1m.json gave '$got', expected '200 $json_bytes application/json'" >&2; exit 1; }
# The TLS listener: the certificate verifies against the run's CA, and h2 is negotiated.
got=$(curl -s --noproxy '*' --cacert "$ca_file" --http2 -o /dev/null -w '%{http_code} %{size_download} HTTP/%{http_version}' "$tls_base/100b" || true)
[ "$got" = "200 100 HTTP/2" ] || { echo "run.sh: server check failed: GET $tls_base/100b gave '$got', expected '200 100 HTTP/2'" >&2; exit 1; }
# The bearer workloads: /token answers a token request (a POSTed form) with the token as
# JSON, and /100b-bearer serves the 100 bytes with that token only.
token_answer="{\"access_token\":\"$bearer_token\",\"token_type\":\"Bearer\",\"expires_in\":3600}"
got=$(curl -s --noproxy '*' -w ' %{http_code} %{content_type}' -d grant_type=client_credentials "$base/token" || true)
[ "$got" = "$token_answer 200 application/json" ] || { echo "run.sh: server check failed: POST $base/token gave '$got', expected '$token_answer 200 application/json'" >&2; exit 1; }
check "GET /100b-bearer with the token" "200 100" -H "Authorization: Bearer $bearer_token" "$base/100b-bearer"
for header in "X-None: no token" "Authorization: Bearer bench-token-0" "Authorization: Basic YmVuY2g6cw=="; do
  got=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -H "$header" "$base/100b-bearer" || true)
  [ "$got" = 401 ] || { echo "run.sh: server check failed: GET /100b-bearer with '$header' gave '$got', expected '401'" >&2; exit 1; }
done
# The cache workloads: /cached/… is the same file with `Cache-Control: max-age=86400` (and
# nginx's Last-Modified and ETag, the validators), which no other path carries; /nginx-status
# counts the requests nginx served (server_requests).
response_field() {  # field url -> the field's value in the response (empty: none)
  curl -s --noproxy '*' -o /dev/null -D - "$2" | tr -d '\r' | sed -n "s/^$1: //Ip"
}
check "GET /cached/100b" "200 100" "$base/cached/100b"
for path in cached/100b 100b; do
  expected=""
  [ $path = cached/100b ] && expected="max-age=86400"
  got=$(response_field Cache-Control "$base/$path")
  [ "$got" = "$expected" ] || { echo "run.sh: server check failed: GET /$path has Cache-Control '$got', expected '$expected'" >&2; exit 1; }
done
[ -n "$(response_field ETag "$base/cached/100b")" ] || { echo "run.sh: server check failed: GET /cached/100b has no ETag" >&2; exit 1; }
server_requests() { curl -s --noproxy '*' "$base/nginx-status" | awk 'NR == 3 { print $3 }'; }
case "$(server_requests)" in ''|*[!0-9]*) echo "run.sh: server check failed: /nginx-status gave no request count" >&2; exit 1 ;; esac
: > "$server_dir/token.log"   # the runs' token requests only (nginx appends)
nginx_version=$("$nginx_bin" -v 2>&1 | sed 's#.*/##')
log "nginx $nginx_version on $base and $tls_base (HTTP/2, TLS) (cpu $server_cpu), clients on cpu $client_cpu"

mkdir -p "$here/results"
stamp=$(date +%Y%m%d-%H%M%S)

# The machine, for the report: what it is and how busy it was.
machine() {
  local cpu
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  echo "- machine: $(nproc) cores ($cpu), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
  echo "- software: $(curl-config --version 2>/dev/null || echo libcurl), nginx $nginx_version, $(swift --version 2>/dev/null | head -n 1 | sed 's/ (.*//')"
  echo "- server on CPU $server_cpu, each client on CPU $client_cpu (taskset)"
}
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# ---- Instructions per request, and profiles (callgrind) ----------------------------------

client_command() {  # client workload-mode -> the command, one word a line
  local mode=$2
  case "$1" in
    libcurl) printf '%s\n' "$curl_bin" --mode "$mode" ;;
    libcurl-handoff) printf '%s\n' "$curl_bin" --mode handoff ;;
    xhr-in-c) printf '%s\n' "$curl_bin" --mode xhr ;;
    xhr-in-swift) printf '%s\n' "$clients_bin/xhr-in-swift" --mode async ;;
    curlxhr) printf '%s\n' "$clients_bin/curlxhr-bench" --mode async ;;
    curlxhr-sync) printf '%s\n' "$clients_bin/curlxhr-bench" --mode threads --client curlxhr-sync ;;
    curlxhr-await) printf '%s\n' "$clients_bin/curlxhr-bench" --mode async --await ;;
    curlxhr-client) printf '%s\n' "$clients_bin/curlxhr-client-bench" --mode async ;;
    curlxhr-client-header) printf '%s\n' "$clients_bin/curlxhr-client-bench" --mode async --client curlxhr-client-header ;;
    urlsession) printf '%s\n' "$clients_bin/urlsession-bench" --mode async ;;
    ahc) printf '%s\n' "$ahc_bin/ahc-bench" --mode async ;;
    ahc-collect) printf '%s\n' "$ahc_bin/ahc-bench" --mode async --collect --client ahc-collect ;;
    ahc-json) printf '%s\n' "$ahc_bin/ahc-bench" --mode async --json --client ahc-json ;;
    ahc-wait) printf '%s\n' "$ahc_bin/ahc-bench" --mode threads --client ahc-wait ;;
    curlxhr-cache) printf '%s\n' "$clients_bin/curlxhr-bench" --mode async --client curlxhr-cache ;;
    curlxhr-cache-await) printf '%s\n' "$clients_bin/curlxhr-bench" --mode async --await --client curlxhr-cache-await ;;
    curlxhr-cache-sync) printf '%s\n' "$clients_bin/curlxhr-bench" --mode threads --client curlxhr-cache-sync ;;
    cat) printf '%s\n' python3 "$here/cat-bench.py" ;;
    *) echo "unknown client $1" >&2; exit 1 ;;
  esac
}

# Runs one client under callgrind: client mode concurrency requests output-file [valgrind args];
# the client also gets the arguments in the array client_extra (if any), and fetches the path
# callgrind_path (default 100b) from callgrind_base (default the plain listener).
# Prints the total instruction count; fails unless every request succeeded.
client_extra=()
callgrind_path=100b
callgrind_base=
callgrind_run() {
  local client=$1 mode=$2 concurrency=$3 requests=$4 out=$5
  shift 5
  local command
  mapfile -t command < <(client_command "$client" "$mode")
  # valgrind 3.19 cannot read the DWARF 5 that Swift's toolchain emits: run a copy without
  # debug information (the symbol table stays, so functions keep their names).
  local copy
  copy=$server_dir/$(basename "${command[0]}")
  [ -x "$copy" ] || strip --strip-debug -o "$copy" "${command[0]}"
  command[0]=$copy
  if ! taskset -c "$client_cpu" valgrind --tool=callgrind --callgrind-out-file="$out" "$@" \
      "${command[@]}" --workload callgrind --url "${callgrind_base:-$base}/$callgrind_path" --concurrency "$concurrency" \
      --requests "$requests" --expect-bytes 100 --max-seconds 900 ${client_extra[@]+"${client_extra[@]}"} \
      > "$server_dir/callgrind.json" 2> "$server_dir/callgrind.err" \
    || ! grep -q "\"requests\":$requests,.*\"errors\":0" "$server_dir/callgrind.json"; then
    echo "run.sh: callgrind run of $client ($mode, $requests requests) failed:" >&2
    cat "$server_dir/callgrind.json" >&2
    tail -n 20 "$server_dir/callgrind.err" >&2
    return 1
  fi
  sed -n 's/^summary: //p' "$out"
}

# The bearer workloads: curlxhr-client's HttpClient has an OAuth2Authorizer for the client
# credentials grant at nginx's /token (one token request a run; its calls then carry the
# token); curlxhr-client-header's has the same `Authorization` field as a default header, and
# raw libcurl and AsyncHTTPClient set it on every request. /100b-bearer answers 401 to any
# request without it, so a row with 0 errors sent it every time.
bearer_options() {  # workload client -> sets bearer_option (empty outside client-bearer-*)
  bearer_option=()
  case $1 in client-bearer-*) ;; *) return 0 ;; esac
  case $2 in
    curlxhr-client) bearer_option=(--oauth2 "$base/token") ;;
    curlxhr-client-header|curlxhr-await|ahc|libcurl) bearer_option=(--header "Authorization: Bearer $bearer_token") ;;
    *) echo "run.sh: $2 cannot send a bearer token" >&2; exit 1 ;;
  esac
}

if [ $mode = instructions ]; then
  # Instructions of the whole client process (every thread, user space: the client, the
  # library, libcurl, libc, the Swift runtime) for n1 and for n2 small GETs one at a time;
  # (I(n2) - I(n1)) / (n2 - n1) is the cost of one request after n1 requests of warm-up,
  # without start-up and shut-down. Instruction counts do not depend on the machine's load.
  n1=500
  n2=2500
  [ $smoke -eq 1 ] && { n1=50; n2=250; }
  output=$here/results/$stamp-instructions.md
  {
    echo "# Instructions per small GET (callgrind)"
    echo
    machine
    echo "- one request at a time, 100-byte GET; (instructions of $n2 requests − of $n1) ÷ $((n2 - n1))"
    echo
    echo "| client | instructions per request | vs libcurl |"
    echo "| --- | ---: | ---: |"
  } > "$output"
  declare -A per_request
  for row in "libcurl threads libcurl-easy 0" "curlxhr-sync threads curlxhr-sync 0" "libcurl async libcurl-multi 0" \
             "xhr-in-swift async xhr-in-swift 0" "curlxhr async curlxhr 0" "curlxhr-await async curlxhr-await 0" \
             "curlxhr-client async curlxhr-client 0" "libcurl threads libcurl-easy-headers 5" "curlxhr-sync threads curlxhr-sync-headers 5" \
             "libcurl threads libcurl-easy-mtls 0" "curlxhr-sync threads curlxhr-sync-mtls 0"; do
    read -r client client_mode label headers <<< "$row"
    client_extra=(--headers "$headers")
    callgrind_base=
    case $label in *-mtls) client_extra+=("${mtls_options[@]}"); callgrind_base=$mtls_base ;; esac
    a=$(callgrind_run "$client" "$client_mode" 1 "$n1" "$server_dir/cg.out")
    b=$(callgrind_run "$client" "$client_mode" 1 "$n2" "$server_dir/cg.out")
    per_request[$label]=$(( (b - a) / (n2 - n1) ))
    case $label in
      libcurl-easy) text="raw libcurl, curl_easy_perform (reused handle)"; versus="1.00" ;;
      libcurl-multi) text="raw libcurl, multi handle"; versus="1.00" ;;
      curlxhr-sync) text="CurlXHR sync (send() blocks)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-easy]}:.2f}')") ;;
      curlxhr) text="CurlXHR async (callbacks on the default queue)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-multi]}:.2f}')") ;;
      xhr-in-swift) text="xhr-in-swift: an XHR-style request's least duties over a multi handle, in Swift (the floor)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-multi]}:.2f}')") ;;
      curlxhr-await) text="CurlXHR async/await (\`response()\`, the body read as it arrives)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-multi]}:.2f}')") ;;
      curlxhr-client) text="CurlXHRClient, \`invoke(… as: Data.self)\` (the core's \`response()\` under it)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-multi]}:.2f} ({${per_request[curlxhr-await]} / ${per_request[$label]}:.3f}× curlxhr-await)')") ;;
      libcurl-easy-headers) text="raw libcurl, curl_easy_perform, 5 request headers (one list, set once)"; versus="1.00" ;;
      curlxhr-sync-headers) text="CurlXHR sync, 5 request headers (\`setRequestHeader\` after each \`open\`)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-easy-headers]}:.2f}')") ;;
      libcurl-easy-mtls) text="raw libcurl, curl_easy_perform, TLS with a client certificate and the server's key pinned"; versus="1.00" ;;
      curlxhr-sync-mtls) text="CurlXHR sync, the same (\`setClientCertificate\`, \`setPinnedPublicKeys\`)"
        versus=$(python3 -c "print(f'{${per_request[$label]} / ${per_request[libcurl-easy-mtls]}:.2f}')") ;;
    esac
    echo "| $text | ${per_request[$label]} | $versus |" >> "$output"
    log "$label: ${per_request[$label]} instructions per request"
  done
  # The client layer against the core's response(), 16 in flight, as the client-c16 and
  # client-bearer-c16 workloads run them (the bearer one: the OAuth2 executor's token, and the
  # same token as a static field of the client).
  m1=1000
  m2=3000
  [ $smoke -eq 1 ] && { m1=100; m2=300; }
  {
    echo
    echo "The client layer against the core it is built on, 16 in flight (the client-c16 and"
    echo "client-bearer-c16 workloads; (instructions of $m2 requests − of $m1) ÷ $((m2 - m1))):"
    echo
    echo "| workload | curlxhr-await | curlxhr-client | await ÷ client | curlxhr-client-header | await ÷ client-header |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  } >> "$output"
  callgrind_base=
  for workload in client-c16 client-bearer-c16; do
    callgrind_path=100b
    [ $workload = client-bearer-c16 ] && callgrind_path=100b-bearer
    declare -A c16=()
    for label in curlxhr-await curlxhr-client curlxhr-client-header; do
      [ $workload = client-c16 ] && [ $label = curlxhr-client-header ] && continue
      bearer_options "$workload" "$label"
      client_extra=(--headers 0 ${bearer_option[@]+"${bearer_option[@]}"})
      a=$(callgrind_run "$label" async 16 "$m1" "$server_dir/cg.out")
      b=$(callgrind_run "$label" async 16 "$m2" "$server_dir/cg.out")
      c16[$label]=$(( (b - a) / (m2 - m1) ))
      log "$workload $label: ${c16[$label]} instructions per request"
    done
    ratio=$(python3 -c "print(f'{${c16[curlxhr-await]} / ${c16[curlxhr-client]}:.3f}')")
    header="–"
    header_ratio="–"
    if [ -n "${c16[curlxhr-client-header]:-}" ]; then
      header=${c16[curlxhr-client-header]}
      header_ratio=$(python3 -c "print(f'{${c16[curlxhr-await]} / $header:.3f}')")
    fi
    echo "| $workload | ${c16[curlxhr-await]} | ${c16[curlxhr-client]} | $ratio | $header | $header_ratio |" >> "$output"
    unset c16
  done
  callgrind_path=100b
  client_extra=()
  # CurlXHR async against the floor (xhr-in-swift) in flight, as get-c16, get-c64 and
  # get-h2-c64 run them. How many requests share an engine round moves both counts by up to
  # ±1,000 from run to run, so each is the median of three runs (fewer with --reps 1 or 2, or
  # --smoke).
  floor_runs=$(( reps < 3 ? reps : 3 ))
  {
    echo
    echo "CurlXHR async (callbacks on the default queue) against the floor, \`xhr-in-swift\`, in flight"
    echo "((instructions of $m2 requests − of $m1) ÷ $((m2 - m1)), the median of $floor_runs run(s) each):"
    echo
    echo "| workload | xhr-in-swift | curlxhr | xhr-in-swift ÷ curlxhr | the runs' ratios |"
    echo "| --- | ---: | ---: | ---: | --- |"
  } >> "$output"
  for row in "get-c16 16 100b" "get-c64 64 100b" "get-h2-c64 64 h2/100b"; do
    read -r workload concurrency path <<< "$row"
    client_extra=()
    callgrind_base=
    callgrind_path=$path
    if [ "${path#h2/}" != "$path" ]; then
      callgrind_base=$tls_base
      callgrind_path=${path#h2/}
      client_extra=(--cacert "$ca_file" --expect-http-version 2)
    fi
    floor=() lib=() ratios=()
    for ((run = 1; run <= floor_runs; run++)); do
      for label in xhr-in-swift curlxhr; do
        a=$(callgrind_run "$label" async "$concurrency" "$m1" "$server_dir/cg.out")
        b=$(callgrind_run "$label" async "$concurrency" "$m2" "$server_dir/cg.out")
        if [ $label = xhr-in-swift ]; then floor+=($(( (b - a) / (m2 - m1) ))); else lib+=($(( (b - a) / (m2 - m1) ))); fi
      done
      ratios+=("$(python3 -c "print(f'{${floor[-1]} / ${lib[-1]}:.3f}')")")
      log "$workload run $run: xhr-in-swift ${floor[-1]}, curlxhr ${lib[-1]} instructions per request"
    done
    python3 - "$workload" "${#floor[@]}" "${floor[@]}" "${lib[@]}" "${ratios[@]}" >> "$output" <<'PY'
import statistics, sys
workload, n = sys.argv[1], int(sys.argv[2])
floor, lib, ratios = sys.argv[3:3 + n], sys.argv[3 + n:3 + 2 * n], sys.argv[3 + 2 * n:]
f, c = statistics.median(map(int, floor)), statistics.median(map(int, lib))
print(f"| {workload} | {f:,.0f} | {c:,.0f} | {f / c:.3f} | {', '.join(ratios)} |")
PY
  done
  callgrind_base=
  callgrind_path=100b
  client_extra=()
  {
    echo
    echo "Targets: CurlXHR sync ≤ 1.30 × raw libcurl's curl_easy_perform. The client layer"
    echo "(≥ 0.95× curlxhr-await) and CurlXHR async (≥ 0.97× xhr-in-swift), timed in the full"
    echo "run, read here in instructions too, which no load on the machine moves."
  } >> "$output"
  cat "$output"
  log "written to $output ($((SECONDS - started_at)) s in all)"
  exit 0
fi

if [ $mode = profile ]; then
  command -v callgrind_annotate > /dev/null || { echo "run.sh: callgrind_annotate is missing (valgrind)" >&2; exit 1; }
  demangle() { if command -v swift-demangle > /dev/null; then swift-demangle --simplified; else cat; fi; }
  n=${BENCH_PROFILE_REQUESTS:-2000}
  # cache-hit-c1: sync GETs of /cached/100b answered from the cache (a new cache folder; the
  # client's untimed first request stores the response, every later one is a fresh hit).
  rows=("curlxhr-sync threads 1 $n sync-c1" "curlxhr async 64 $((n * 10)) async-c64"
        "curlxhr-await async 64 $((n * 10)) await-c64" "curlxhr-cache-sync threads 1 $n cache-hit-c1")
  # The same work by raw libcurl, to compare with: BENCH_PROFILE_PEERS=1.
  [ "${BENCH_PROFILE_PEERS:-0}" = 1 ] && rows+=("libcurl threads 1 $n libcurl-easy-c1" "libcurl async 64 $((n * 10)) libcurl-multi-c64")
  for row in "${rows[@]}"; do
    read -r client client_mode concurrency requests label <<< "$row"
    client_extra=()
    callgrind_path=100b
    if [ $label = cache-hit-c1 ]; then
      rm -rf "$server_dir/cache/profile"
      client_extra=(--cache-folder "$server_dir/cache/profile")
      callgrind_path=cached/100b
    fi
    out=$here/results/$stamp-profile-$label.callgrind.out
    log "profiling $client ($client_mode, $concurrency in flight, $requests requests)"
    total=$(callgrind_run "$client" "$client_mode" "$concurrency" "$requests" "$out")
    for kind in inclusive self; do
      flag=no
      [ $kind = inclusive ] && flag=yes
      callgrind_annotate --inclusive=$flag --threshold=99 "$out" 2> /dev/null | demangle \
        > "$here/results/$stamp-profile-$label-$kind.txt"
    done
    log "$label: $total instructions, $((total / requests)) per request (start-up included):" \
        "results/$stamp-profile-$label-{inclusive,self}.txt"
  done
  exit 0
fi

# ---- Running one client ------------------------------------------------------------------

# Runs one client process pinned to the client CPU and bounded by `seconds`, with its standard
# error in `errfile`, and sets `line` to the JSON line it printed last, or to `fallback` when it
# printed none. Returns 1 when the run failed (no JSON line, or a non-zero exit); standard error
# output is logged either way.
line=""
run_client() {  # label seconds errfile fallback command...
  local label=$1 seconds=$2 errfile=$3 fallback=$4 output status
  shift 4
  set +e
  output=$(taskset -c "$client_cpu" timeout -k 5 "$seconds" "$@" 2> "$errfile")
  status=$?
  set -e
  line=$(printf '%s\n' "$output" | tail -n 1)
  if [ "${line:0:1}" != "{" ]; then
    log "$label: no result (exit $status): $(tail -c 300 "$errfile")"
    line=$fallback
    return 1
  fi
  if [ $status -ne 0 ] || [ -s "$errfile" ]; then
    log "$label (exit $status): $(tail -c 300 "$errfile")"
    [ $status -eq 0 ] || return 1
  fi
  return 0
}

# ---- Memory: resident memory growth over small synchronous GETs ---------------------------

# Runs each memory program once per baseline kind, `repetitions` times, with `requests` GETs of
# /100b each, and appends "REP<TAB>JSON" lines to the results file; counts the runs that
# failed (no JSON line, or a non-zero exit: an error) in memory_failures. The order of the four
# runs rotates with the repetition. The programs bound themselves (alarm: 60 s + 0.1 s a
# request; each GET 30 s); timeout is the last resort.
memory_failures=0
memory_runs() {  # results-file repetitions requests
  local results=$1 repetitions=$2 requests=$3
  local configurations=("curlxhr started" "curlxhr cold" "libcurl started" "libcurl cold")
  local rep shift_by order configuration program kind binary line
  # CurlXHR reads its cookie jar when its engine starts (and creates the jar's folder and lock
  # file): an empty one in the server's temp dir, not the user's, so every run starts alike.
  mkdir -p "$server_dir/xdg"
  for rep in $(seq "$repetitions"); do
    shift_by=$(( (rep - 1) % ${#configurations[@]} ))
    order=("${configurations[@]:$shift_by}" "${configurations[@]:0:$shift_by}")
    for configuration in "${order[@]}"; do
      read -r program kind <<< "$configuration"
      binary=$peer_bin
      [ "$program" = curlxhr ] && binary=$clients_bin/curlxhr-memory
      run_client "memory rep $rep $program $kind" $((requests / 10 + 90)) "$server_dir/memory.err" \
        "{\"client\":\"$program\",\"workload\":\"memory\",\"baseline\":\"$kind\",\"requests\":0,\"errors\":-1,\"failed\":true}" \
        env XDG_DATA_HOME="$server_dir/xdg" "$binary" "$base/100b" "$requests" "$kind" \
        || memory_failures=$((memory_failures + 1))
      printf '%s\t%s\n' "$rep" "$line" >> "$results"
    done
  done
}

if [ $mode = memory ]; then
  requests=200
  report_args=(--memory --require-clean)
  if [ $smoke -eq 1 ]; then
    requests=20
    stamp=$stamp-smoke
    report_args+=(--no-targets)
  fi
  results=$here/results/$stamp-memory.jsonl
  output=${results%.jsonl}.md
  : > "$results"
  load_before=$(load_average)
  run_started=$SECONDS
  memory_runs "$results" "$reps" "$requests"
  load_after=$(load_average)
  {
    echo "# Memory: resident memory growth over small synchronous GETs, $(date -u '+%Y-%m-%d %H:%M UTC')$([ $smoke -eq 1 ] && echo ' (smoke)')"
    echo
    machine
    echo "- load average (1, 5, 15 min): $load_before before, $load_after after the runs"
    echo "- $requests GETs of 100 bytes one at a time (synchronous); $reps run(s) of each program and baseline, which took $((SECONDS - run_started)) s"
    echo "- baselines: \`started\`: VmRSS after the library started (CurlXHR: \`CookieStore.shared.allCookies()\`," \
         "which starts its engine and sends nothing; raw libcurl: curl_global_init, the multi and share handles, the engine thread);" \
         "\`cold\`: VmRSS before anything of the library ran (the growth includes libcurl's one-time start-up)"
    echo
  } > "$output"
  set +e
  python3 "$here/report.py" "${report_args[@]}" "$results" >> "$output"
  report_status=$?
  set -e
  cat "$output"
  log "results in ${results%.jsonl}.{jsonl,md}; $((SECONDS - started_at)) s in all"
  if [ $report_status -ne 0 ] || [ $memory_failures -ne 0 ]; then
    echo "run.sh: FAILED: $memory_failures memory run(s) exited with an error; report.py exit $report_status" >&2
    exit 1
  fi
  exit 0
fi

# ---- Timed runs ---------------------------------------------------------------------------

# The HTTP/2 workloads (path h2/…): the URL on the TLS listener, and for every client the
# run's CA (--cacert) and the check that each response came over HTTP/2.
tls_options() {  # path -> sets url and tls_option
  tls_option=()
  case $1 in
    h2/*) url=$tls_base/${1#h2/}; tls_option=(--cacert "$ca_file" --expect-http-version 2) ;;
    *) url=$base/$1 ;;
  esac
}

# The download-file workloads: each client writes the bodies to its own file in the server's
# temp dir (so on one filesystem for all), which it removes at its end (and run.sh after it,
# should it not have). curl-bench truncates the file at the start of each request (O_TRUNC);
# CurlXHR writes `FILE.part` and renames it over FILE when the response completes (README.md:
# why truncate, and what ext4 does with either).
files_dir=$server_dir/files
mkdir -p "$files_dir"
file_options() {  # workload client -> sets file_option (empty outside download-file-*) and file
  file_option=()
  file=""
  case $1 in download-file-*) ;; *) return 0 ;; esac
  file=$files_dir/$2.body
  case $2 in
    libcurl) file_option=(--output-file "$file") ;;
    curlxhr|curlxhr-sync) file_option=(--response-file "$file") ;;
    *) echo "run.sh: $2 has no option to write the body to a file" >&2; exit 1 ;;
  esac
}

# The json workloads: every client decodes each body into [JSONItem] and checks that it holds
# the json_items objects of /1m.json (and counts the file's bytes a response).
json_options() {  # workload client -> sets json_option (empty outside json-*)
  json_option=()
  case $1 in json-*) ;; *) return 0 ;; esac
  case $2 in
    curlxhr-client|ahc-json) json_option=(--json-items "$json_items") ;;
    *) echo "run.sh: $2 does not decode JSON" >&2; exit 1 ;;
  esac
}

# The upload-multipart workloads: two files of random bytes, written once for the run in the
# server's temp dir, which every client sends as one multipart/form-data form (parts "file0"
# and "file1", each streamed from disk by libcurl's MIME API): curl-bench --mime-file,
# curlxhr-bench --post-file (addPostFile). A check first: curl -F POSTs the same form to the
# sink and must get 200 with 3 bytes; its size_upload is the form's body size (the files and
# the multipart framing) for the table's header.
upload_dir=$server_dir/upload
upload_files=()
upload_form_bytes=""
for workload in "${workloads[@]}"; do
  case $workload in upload-multipart-*) ;; *) continue ;; esac
  mkdir -p "$upload_dir"
  for part in 0 1; do
    head -c "$upload_file_bytes" /dev/urandom > "$upload_dir/file$part.bin"
    upload_files+=("$upload_dir/file$part.bin")
  done
  got=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{size_download} %{size_upload}' \
          -F "file0=@${upload_files[0]}" -F "file1=@${upload_files[1]}" "$base/sink")
  if [ "${got% *}" != "200 3" ]; then
    echo "run.sh: server check failed: a multipart POST of 2 × $upload_file_bytes bytes to /sink gave" \
         "'${got% *}', expected '200 3' (413: the form is larger than the sink's client_max_body_size" \
         "in nginx.conf.in)" >&2
    exit 1
  fi
  upload_form_bytes=${got##* }
  break
done
upload_options() {  # workload client -> sets upload_option (empty outside upload-multipart-*)
  upload_option=()
  case $1 in upload-multipart-*) ;; *) return 0 ;; esac
  local flag upload_file
  case $2 in
    libcurl) flag=--mime-file ;;
    curlxhr|curlxhr-sync) flag=--post-file ;;
    *) echo "run.sh: $2 has no option to send a multipart form of files" >&2; exit 1 ;;
  esac
  for upload_file in "${upload_files[@]}"; do upload_option+=("$flag" "$upload_file"); done
}

# The cache-hit workloads: one cache folder a workload, new for the run (cache/NAME in the
# server's temp dir), warmed before the repetitions by one network GET that stores the response
# (curlxhr-bench --cache-folder with --requests 0: its untimed warm-up request only). The
# curlxhr-cache* clients then use that folder (each sends one more untimed request first, a
# hit); cat-bench.py reads the body file stored in it. run.sh also counts the requests nginx
# served during each run of these workloads (server_requests, in the JSON line): none for a
# client answered by the cache.
cache_dir=$server_dir/cache
declare -A cache_body=()  # workload -> the stored body file
for workload in "${workloads[@]}"; do
  read -r name path _ _ _ _ expect _ <<< "$workload"
  case $name in cache-hit-*) ;; *) continue ;; esac
  folder=$cache_dir/$name
  rm -rf "$folder"
  mkdir -p "$cache_dir"
  if ! taskset -c "$client_cpu" "$clients_bin/curlxhr-bench" --mode threads --client cache-warm --workload "$name" \
      --url "$base/$path" --requests 0 --expect-bytes "$expect" --cache-folder "$folder" > /dev/null 2> "$server_dir/warm.err"; then
    echo "run.sh: warming the cache for $name failed: $(tail -c 300 "$server_dir/warm.err")" >&2
    exit 1
  fi
  mapfile -t bodies < <(find "$folder/bodies" -type f ! -name '*.part')
  if [ ${#bodies[@]} -ne 1 ] || [ "$(stat -c %s "${bodies[0]}")" != "$expect" ]; then
    echo "run.sh: the cache for $name holds ${#bodies[@]} body file(s) after its warm-up, expected one of $expect bytes" >&2
    exit 1
  fi
  cache_body[$name]=${bodies[0]}
done
cache_options() {  # workload client -> sets cache_option (empty outside cache-hit-*)
  cache_option=()
  case $1 in cache-hit-*) ;; *) return 0 ;; esac
  case $2 in
    curlxhr-cache|curlxhr-cache-await|curlxhr-cache-sync) cache_option=(--cache-folder "$cache_dir/$1") ;;
    cat) cache_option=(--file "${cache_body[$1]}") ;;
  esac
}

[ $smoke -eq 1 ] && stamp=$stamp-smoke
results=$here/results/$stamp.jsonl
: > "$results"
log "writing $results"
load_before=$(load_average)

# Within a repetition each workload's clients run back to back (A, B, C, A, B, C… over the
# repetitions), so a slow period of the machine hits the clients of one repetition alike
# and the ratios to libcurl are taken within a repetition. The order rotates with the
# repetition, so no client always runs first (right after another workload) or last.
failures=0
run_started=$SECONDS
for rep in $(seq "$reps"); do
  for workload in "${workloads[@]}"; do
    read -r name path workload_mode concurrency full smoke_count expect post clients <<< "$workload"
    count=$full
    [ $smoke -eq 1 ] && count=$smoke_count
    read -r -a order <<< "$clients"
    shift_by=$(( (rep - 1) % ${#order[@]} ))
    order=("${order[@]:$shift_by}" "${order[@]:0:$shift_by}")
    for client in "${order[@]}"; do
      mapfile -t command < <(client_command "$client" "$workload_mode")
      file_options "$name" "$client"
      upload_options "$name" "$client"
      json_options "$name" "$client"
      bearer_options "$name" "$client"
      cache_options "$name" "$client"
      tls_options "$path"
      command+=(--workload "$name" --url "$url" --concurrency "$concurrency"
                --requests "$count" --expect-bytes "$expect" --post-bytes "$post"
                --max-seconds "$max_seconds" ${file_option[@]+"${file_option[@]}"}
                ${upload_option[@]+"${upload_option[@]}"} ${json_option[@]+"${json_option[@]}"}
                ${bearer_option[@]+"${bearer_option[@]}"} ${cache_option[@]+"${cache_option[@]}"}
                ${tls_option[@]+"${tls_option[@]}"})
      # Writing files: no earlier run's dirty pages still to be written back when this one
      # starts (its own, written during the run, are its cost).
      [ -z "$file" ] || sync -f "$files_dir"
      served_before=""
      case $name in cache-hit-*) served_before=$(server_requests) ;; esac
      run_client "rep $rep $name $client" $((max_seconds + 60)) "$server_dir/client.err" \
        "{\"client\":\"$client\",\"workload\":\"$name\",\"requests\":0,\"errors\":-1,\"failed\":true}" \
        "${command[@]}" || failures=$((failures + 1))
      # The requests nginx served during the run (the status request itself counts once).
      [ -z "$served_before" ] || line="${line%\}},\"server_requests\":$(( $(server_requests) - served_before - 1 ))}"
      if [ -n "$file" ]; then
        [ ! -e "$file" ] || log "rep $rep $name $client: left $file behind"
        rm -f "$file" "$file.part" "$file.part.validator"
      fi
      printf '%s\t%s\n' "$rep" "$line" >> "$results"
    done
  done
  log "repetition $rep of $reps done ($((SECONDS - run_started)) s)"
done
# The smoke run also checks that the memory programs complete (20 GETs, each baseline once);
# their numbers are not judged.
if [ $smoke -eq 1 ]; then
  memory_results=${results%.jsonl}-memory.jsonl
  : > "$memory_results"
  memory_started=$SECONDS
  memory_runs "$memory_results" 1 20
  log "memory programs done ($((SECONDS - memory_started)) s)"
fi
load_after=$(load_average)

report_args=()
[ $smoke -eq 1 ] && report_args+=(--require-clean --no-targets)
table=${results%.jsonl}.md
{
  echo "# CurlXHR benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')$([ $smoke -eq 1 ] && echo ' (smoke)')"
  echo
  machine
  echo "- load average (1, 5, 15 min): $load_before before, $load_after after the runs"
  echo "- $reps repetition(s); the runs took $((SECONDS - run_started)) s"
  for workload in "${workloads[@]}"; do
    case $workload in download-file-*)
      echo "- ${workload%% *}: each client writes its own file in $files_dir ($(findmnt -n -o FSTYPE,SOURCE --target "$files_dir" | tr -s ' ' | sed 's/ / on /'))" ;;
      upload-multipart-*)
        echo "- ${workload%% *}: two files of $upload_file_bytes random bytes in $upload_dir, one multipart/form-data body of $upload_form_bytes bytes (curl -F's size_upload); MiB/s counts the files' $((2 * upload_file_bytes)) bytes a request (and the 3-byte answer)" ;;
      cache-hit-*)
        echo "- ${workload%% *}: the curlxhr-cache* clients use one cache folder, $cache_dir/${workload%% *} ($(findmnt -n -o FSTYPE,SOURCE --target "$cache_dir" | tr -s ' ' | sed 's/ / on /')), warmed before the repetitions by one GET that stored the response; each client run sends one more request (a hit) before the timed ones$(case $workload in *" cat "*) echo "; cat reads the stored body file, ${cache_body[${workload%% *}]#"$cache_dir/"}" ;; esac)" ;;
      client-bearer-*)
        echo "- ${workload%% *}: every request carries \`Authorization: Bearer $bearer_token\` (/100b-bearer answers 401 without it); the token endpoint /token was asked $(wc -l < "$server_dir/token.log") time(s) for $(grep -c "\"client\":\"curlxhr-client\",\"workload\":\"${workload%% *}\"" "$results") curlxhr-client run(s) (the OAuth2Authorizer's)" ;;
    esac
  done
  echo
} > "$table"
set +e
python3 "$here/report.py" "${report_args[@]}" "$results" >> "$table"
report_status=$?
memory_status=0
if [ $smoke -eq 1 ]; then
  {
    echo
    echo "## Memory programs (20 GETs each; checked to complete, numbers not judged)"
    echo
    python3 "$here/report.py" --memory --require-clean --no-targets "$memory_results"
  } >> "$table"
  memory_status=$?
fi
set -e
cat "$table"
log "results in ${results%.jsonl}.{jsonl,md}; $((SECONDS - started_at)) s in all"
if [ $report_status -ne 0 ] || [ $failures -ne 0 ] || [ $memory_status -ne 0 ] || [ $memory_failures -ne 0 ]; then
  echo "run.sh: FAILED: $failures client run(s) and $memory_failures memory run(s) exited with an error;" \
       "report.py exit $report_status (memory: $memory_status)" >&2
  exit 1
fi
