#!/usr/bin/env bash
# Checks every endpoint of a running test environment with the curl tool: one line per
# check, exit status 1 if any failed.   selftest.sh DIR
set -uo pipefail
dir=${1:?usage: selftest.sh DIR}
# shellcheck disable=SC1091
source "$dir/testenv.env"
failed=0

check() {  # check NAME EXPECTED CURL-ARGS...: compares the HTTP status (or %{http_connect})
  local name=$1 expected=$2
  shift 2
  local got
  got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@")
  if [ "$got" = "$expected" ]; then echo "ok    $name"; else echo "FAIL  $name: got $got, expected $expected"; failed=1; fi
}

contains() {  # contains NAME TEXT CURL-ARGS...: the body contains TEXT
  local name=$1 text=$2
  shift 2
  if curl -s --max-time 10 "$@" | grep -qF -- "$text"; then echo "ok    $name"; else echo "FAIL  $name: no '$text'"; failed=1; fi
}

expect() {  # expect NAME GOT EXPECTED: compares two strings
  if [ "$2" = "$3" ]; then echo "ok    $1"; else echo "FAIL  $1: got '$2', expected '$3'"; failed=1; fi
}

H=$TESTENV_HTTP_URL
U=$TESTENV_USER P=$TESTENV_PASSWORD
check "plain echo" 200 "$H/echo"
check "https with the test CA" 200 --cacert "$TESTENV_CA_FILE" "$TESTENV_HTTPS_URL/echo"
check "basic right" 200 -u "$U:$P" "$TESTENV_BASIC_URL"
check "basic wrong" 401 -u "$U:wrong" "$TESTENV_BASIC_URL"
check "basic none" 401 "$TESTENV_BASIC_URL"
check "basic bob" 200 -u "$TESTENV_USER2:$TESTENV_PASSWORD2" "$TESTENV_BASIC_URL"
check "digest right" 200 --digest -u "$U:$P" "$TESTENV_DIGEST_URL"
check "digest wrong" 401 --digest -u "$U:wrong" "$TESTENV_DIGEST_URL"
check "digest bob" 200 --digest -u "$TESTENV_USER2:$TESTENV_PASSWORD2" "$TESTENV_DIGEST_URL"
check "digest file" 200 --digest -u "$U:$P" "$TESTENV_DIGEST_FILE_URL"
KRB5CCNAME=$TESTENV_KRB5CCNAME check "negotiate as alice" 200 --negotiate -u : "$TESTENV_NEGOTIATE_URL"
KRB5CCNAME=$TESTENV_KRB5CCNAME_EMPTY check "negotiate without a ticket" 401 --negotiate -u : "$TESTENV_NEGOTIATE_URL"
KRB5CCNAME=$TESTENV_KRB5CCNAME check "negotiate to the ALT service" 200 --negotiate -u : --service-name "$TESTENV_KRB5_ALT_SERVICE" "$TESTENV_NEGOTIATE_URL"
KRB5CCNAME=$TESTENV_KRB5CCNAME check "negotiate to an unknown service" 401 --negotiate -u : --service-name NOSUCH "$TESTENV_NEGOTIATE_URL"
check "fault server on its Unix socket" 200 --unix-socket "$TESTENV_FAULT_UNIX_SOCKET" http://socket.invalid/echo
check "fault server on its abstract socket" 200 --abstract-unix-socket "${TESTENV_FAULT_ABSTRACT_SOCKET#@}" http://socket.invalid/echo
check "ntlm right" 200 --ntlm -u "$U:$P" "$TESTENV_HTTP_NTLM_URL/echo"
check "ntlm with the domain" 200 --ntlm -u "$TESTENV_NTLM_DOMAIN\\$U:$P" "$TESTENV_HTTP_NTLM_URL/echo"
check "ntlm wrong" 401 --ntlm -u "$U:wrong" "$TESTENV_HTTP_NTLM_URL/echo"
check "ntlm none" 401 "$TESTENV_HTTP_NTLM_URL/echo"
if [ "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' --ntlm -u "$U:$P" "$TESTENV_HTTP_NTLM_URL/a" "$TESTENV_HTTP_NTLM_URL/b")" = "1 0 " ]; then
  echo "ok    ntlm keep-alive: the second request reuses the authenticated connection"
else
  echo "FAIL  ntlm keep-alive"; failed=1
fi
PU=$TESTENV_PROXY_USER PP=$TESTENV_PROXY_PASSWORD
check "open proxy" 200 -x "127.0.0.1:$TESTENV_PROXY_PORT" "$H/echo"
contains "open proxy adds Via" '"Via"' -x "127.0.0.1:$TESTENV_PROXY_PORT" "$H/echo"
check "open proxy CONNECT" 200 -x "127.0.0.1:$TESTENV_PROXY_PORT" --cacert "$TESTENV_CA_FILE" "$TESTENV_HTTPS_URL/echo"
for scheme in basic digest ntlm; do
  var="TESTENV_PROXY_${scheme^^}_PORT"
  proxy="127.0.0.1:${!var}"
  check "$scheme proxy right" 200 -x "$proxy" --proxy-"$scheme" -U "$PU:$PP" "$H/echo"
  contains "$scheme proxy names the user" "\"X-Squid-User\": \"" -x "$proxy" --proxy-"$scheme" -U "$PU:$PP" "$H/echo"
  check "$scheme proxy wrong" 407 -x "$proxy" --proxy-"$scheme" -U "$PU:wrong" "$H/echo"
  check "$scheme proxy none" 407 -x "$proxy" "$H/echo"
  check "$scheme proxy CONNECT" 200 -x "$proxy" --proxy-"$scheme" -U "$PU:$PP" --cacert "$TESTENV_CA_FILE" "$TESTENV_HTTPS_URL/echo"
done
check "ntlm proxy + digest server" 200 -x "127.0.0.1:$TESTENV_PROXY_NTLM_PORT" --proxy-ntlm -U "$PU:$PP" --digest -u "$U:$P" "$TESTENV_DIGEST_URL"
F=$TESTENV_FAULT_URL
key=selftest-$$-$RANDOM
check "fault bytes" 200 "$F/bytes?n=1000"
check "fault file" 200 "$F/file?size=1000&version=1&key=$key"
check "fault file range" 206 -r 10-19 "$F/file?size=1000&version=1&key=$key"
check "fault file range not satisfiable" 416 -r 1000- "$F/file?size=1000&version=1&key=$key"
check "fault file If-Range of another version" 200 -r 10-19 -H 'If-Range: "f0-1000"' "$F/file?size=1000&version=1&key=$key"
contains "fault file log" '"status": 416' "$F/file-log?key=$key&clear=1"
if [ "$(curl -s -o /dev/null -w '%{size_download}' --max-time 10 "$F/file?size=1000&cut=100")" = 100 ]; then
  echo "ok    fault file cut after 100 bytes"
else
  echo "FAIL  fault file cut"; failed=1
fi
check "fault retry fails first" 503 "$F/retry?key=$key&fail=1&after=1"
check "fault retry then succeeds" 200 "$F/retry?key=$key&fail=1&after=1"
contains "fault retry count" '"count": 2' "$F/retry-count?key=$key"
for coding in gzip deflate br zstd; do
  contains "fault encoded $coding" "Content-Encoding: $coding" -D - -o /dev/null -H "Accept-Encoding: $coding" "$F/encoded?enc=$coding&n=1000"
done
check "fault stall" 200 "$F/stall?n=100&head_ms=10&after_head_ms=10&mid_ms=10"
port=$(curl -s --max-time 10 "$F/blackhole" | sed -n 's/.*"port": *\([0-9]*\).*/\1/p')
curl -s -o /dev/null --connect-timeout 1 "http://127.0.0.1:${port:-1}/"
rc=$?
if [ -n "$port" ] && [ "$rc" = 28 ]; then
  echo "ok    fault blackhole: a connect times out"
else
  echo "FAIL  fault blackhole: port '$port', curl exit status $rc, expected 28"; failed=1
fi
contains "fault multipart" '"name": "c", "sha256": "cd42404d52ad55ccfa9aca4adc828aa5800ad9d385a0671fbcbf724118320619", "size": 5' -F c=value "$F/multipart"
# /cache: a resource with an ETag, a Last-Modified and the Cache-Control field given by h=.
ck=cache-$key
C="$F/cache?key=$ck&etag=%22v1%22&last_modified=offset:-3600&h=Cache-Control:max-age=60"
head=$(curl -s -D - -o /dev/null --max-time 10 "$C" | tr -d '\r')
lm=$(sed -n 's/^Last-Modified: //p' <<<"$head")
expect "fault cache 200 with h=Cache-Control:max-age=60, the ETag and Last-Modified" \
  "$(grep -cx 'HTTP/1.1 200 OK\|Cache-Control: max-age=60\|ETag: "v1"' <<<"$head") ${lm:+Last-Modified}" "3 Last-Modified"
expect "fault cache If-None-Match with the ETag: 304 without a body" \
  "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' --max-time 10 -H 'If-None-Match: "v1"' "$C")" "304 0"
expect "fault cache If-Modified-Since the Last-Modified: 304" \
  "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' --max-time 10 -H "If-Modified-Since: $lm" "$C")" "304 0"
contains "fault cache bump=1: a new ETag" 'ETag: "v1-v1"' -D - -o /dev/null "$C&bump=1"
check "fault cache the old ETag after the bump: 200" 200 -H 'If-None-Match: "v1"' "$C"
# HEAD: the GET's Content-Length (curl), and no byte after the head (a raw connection read to its end).
after=$(/usr/bin/python3 - "$TESTENV_FAULT_PORT" "${C#"$F"}" <<'EOF'
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as s:
    s.sendall(f"HEAD {sys.argv[2]} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    s.shutdown(socket.SHUT_WR)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
print(data.split(b" ")[1].decode(), len(data) - data.index(b"\r\n\r\n") - 4)
EOF
)
body="body of $ck, version 1"
expect "fault cache HEAD: the GET's Content-Length, no body" \
  "$(curl -s -I --max-time 10 "$C" | tr -d '\r' | sed -n 's/^Content-Length: //p') $after" "${#body} 200 0"
check "fault cache POST" 200 -d x "$C"
check "fault cache PURGE" 200 -X PURGE "$C"
log=$(curl -s --max-time 10 "$F/cache-log?key=$ck&clear=1")
expect "fault cache-log: the requests by method and status" \
  "$(grep -o '"count": [0-9]*\|"method": "[A-Z]*"\|"status": [0-9]*' <<<"$log" | sed 's/.*: //; s/"//g' | tr '\n' ' ')" \
  "9 GET 200 GET 304 GET 304 GET 200 GET 200 HEAD 200 HEAD 200 POST 200 PURGE 200 "
expect "fault cache-log: the conditional fields" \
  "$(grep -oF -e '["If-None-Match", "\"v1\""]' -e "[\"If-Modified-Since\", \"$lm\"]" <<<"$log" | sort -u | wc -l)" 2
contains "fault cache-log after clear=1" '{"count": 0, "requests": []}' "$F/cache-log?key=$ck"
contains "fault cache-bump: version 2" '{"version": 2}' "$F/cache-bump?key=$ck"
contains "fault cache after cache-bump: its ETag" 'ETag: "v1-v2"' -D - -o /dev/null "$C"
got=$(curl -s --max-time 10 "$F/cache?key=$ck-size&size=1000000" | sha256sum | cut -d ' ' -f 1)
expect "fault cache size=1000000: 1,000,000 pattern bytes" "$got" \
  "$(/usr/bin/python3 -c 'import hashlib; print(hashlib.sha256(bytes(i % 251 for i in range(1000000))).hexdigest())')"
head=$(curl -s -D - -o /dev/null --max-time 10 "$F/cache?key=$ck-dates&date=none&expires=offset:-10" | tr -d '\r')
expires=$(sed -n 's/^Expires: //p' <<<"$head")
ago=$(( $(date +%s) - $(date -d "${expires:-now}" +%s) ))
expect "fault cache date=none: no Date; expires=offset:-10: 10 s ago" \
  "$(grep -ci '^date:' <<<"$head") ${expires:+Expires} $(( ago >= 9 && ago <= 12 ))" "0 Expires 1"
check "fault cache CR LF in a field: 400" 400 "$F/cache?key=$ck-bad&h=X-A:a%0D%0AX-B:b"
check "fault cache without a key: 400" 400 "$F/cache?status=200"
CA=$TESTENV_CA_FILE
H2=$TESTENV_H2_URL
got=$(curl -s -o /dev/null -w '%{http_version} %{http_code} %{size_download}' --max-time 10 --http2 --cacert "$CA" "$H2/small")
if [ "$got" = "2 200 100" ]; then
  echo "ok    h2 nginx /small: HTTP/2 200, 100 bytes"
else
  echo "FAIL  h2 nginx /small: got '$got', expected '2 200 100'"; failed=1
fi
contains "h2 nginx echo-protocol" "HTTP/2.0" --http2 --cacert "$CA" "$H2/echo-protocol"
contains "h2 nginx echo-protocol over HTTP/1.1" "HTTP/1.1" --http1.1 --cacert "$CA" "$H2/echo-protocol"
check "h2 nginx 404" 404 --http2 --cacert "$CA" "$H2/missing"
# Two requests of one curl run: one connection, and the access log says so.
tag=selftest-$$-$RANDOM
got=$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' --max-time 10 --http2 --cacert "$CA" \
  "$H2/small?$tag" "$H2/echo-protocol?$tag")
lines=""
for _ in $(seq 1 20); do  # nginx writes the line just after the last byte went out
  lines=$(grep -F "?$tag " "$TESTENV_H2_LOG")
  [ "$(printf '%s\n' "$lines" | grep -c .)" -ge 2 ] && break
  sleep 0.05
done
if [ "$got" = "1 0 " ] && [ "$(printf '%s\n' "$lines" | awk '{print $1}' | sort -u | wc -l)" = 1 ] \
    && [ "$(printf '%s\n' "$lines" | awk '$3 == "HTTP/2.0"' | wc -l)" = 2 ]; then
  echo "ok    h2 nginx: two requests share one connection"
else
  echo "FAIL  h2 nginx connection sharing: connects '$got', log: $lines"; failed=1
fi
S=$TESTENV_SLOW_H2_URL
contains "h2 hypercorn reset" '"reset": true' -X POST --cacert "$CA" "$S/reset"
slow_urls=()
for i in $(seq 1 10); do slow_urls+=(-o /dev/null "$S/slow?ms=1000&tag=t$i"); done
start=$EPOCHREALTIME
codes=$(curl -s -Z --parallel-max 10 -w '%{http_version}/%{http_code} ' --max-time 10 --http2 --cacert "$CA" "${slow_urls[@]}" 2>/dev/null)
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
stats=$(curl -s --max-time 10 --cacert "$CA" "$S/stats")
max=$(printf '%s' "$stats" | sed -n 's/.*"max_in_flight": *\([0-9]*\).*/\1/p')
ports=$(printf '%s' "$stats" | sed -n 's/.*"client_ports": *\[\([^]]*\)\].*/\1/p')
if [ "$(printf '%s' "$codes" | grep -o '2/200' | wc -l)" = 10 ] && awk -v e="$elapsed" 'BEGIN { exit !(e < 2) }' \
    && [ "${max:-0}" -ge 10 ] && [[ $ports =~ ^[0-9]+$ ]]; then
  echo "ok    h2 hypercorn: ten 1 s requests in ${elapsed} s on one HTTP/2 connection (max_in_flight $max)"
else
  echo "FAIL  h2 hypercorn parallel: ${elapsed} s, codes '$codes', stats $stats"; failed=1
fi
curl -s -o /dev/null --max-time 10 --cacert "$CA" "$S/reset"
contains "h2 hypercorn stats after reset" '"max_in_flight": 0, "started": []' --cacert "$CA" "$S/stats"
check "h2 hypercorn 404" 404 --cacert "$CA" "$S/missing"

json_string() {  # json_string KEY JSON: the string value of KEY (flat JSON, as the OAuth2 server answers)
  printf '%s' "$2" | sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p"
}
O=$TESTENV_OAUTH2_URL T=$TESTENV_OAUTH2_TOKEN_URL R=$TESTENV_OAUTH2_RESOURCE_URL
PC="$TESTENV_OAUTH2_PASSWORD_CLIENT_ID:$TESTENV_OAUTH2_PASSWORD_CLIENT_SECRET"
contains "oauth2 stats reset" '"reset": true' -X POST "$TESTENV_OAUTH2_STATS_RESET_URL"
answer=$(curl -s --max-time 10 -w ' %{http_code}' -u "$PC" -d grant_type=password -d "username=$U" --data-urlencode "password=$P" "$T")
access=$(json_string access_token "$answer") refresh=$(json_string refresh_token "$answer")
expect "oauth2 password grant, Basic client auth: a token and a refresh token" \
  "${answer##* } ${#access} ${#refresh}" "200 30 30"
answer=$(curl -s --max-time 10 -w ' %{http_code}' -d grant_type=client_credentials \
  -d "client_id=$TESTENV_OAUTH2_SERVICE_CLIENT_ID" --data-urlencode "client_secret=$TESTENV_OAUTH2_SERVICE_CLIENT_SECRET" "$T")
service_access=$(json_string access_token "$answer")
service_issued=$EPOCHREALTIME
expect "oauth2 client credentials, client auth in form fields: a token, no refresh token" \
  "${answer##* } ${#service_access} $(json_string refresh_token "$answer")" "200 30 "
check "oauth2 wrong client secret" 401 -u "$TESTENV_OAUTH2_PASSWORD_CLIENT_ID:wrong" -d grant_type=password -d "username=$U" \
  --data-urlencode "password=$P" "$T"
contains "oauth2 wrong user password: invalid_grant" '"invalid_grant"' -u "$PC" -d grant_type=password -d "username=$U" -d password=wrong "$T"
contains "oauth2 resource with the token" "{\"user\": \"$U\", \"client_id\": \"$TESTENV_OAUTH2_PASSWORD_CLIENT_ID\", \"token_suffix\": \"${access: -6}\"}" \
  -H "Authorization: Bearer $access" "$R"
check "oauth2 resource by POST" 200 -X POST -H "Authorization: Bearer $access" "$R?delay_ms=10"
contains "oauth2 resource with a client-credentials token: no user" "{\"user\": null, \"client_id\": \"$TESTENV_OAUTH2_SERVICE_CLIENT_ID\"" \
  -H "Authorization: Bearer $service_access" "$R"
check "oauth2 resource without a token" 401 "$R"
contains "oauth2 resource without a token: the Bearer challenge" 'WWW-Authenticate: Bearer error="invalid_token"' -D - -o /dev/null "$R"
check "oauth2 resource with an unknown token" 401 -H "Authorization: Bearer not-a-token" "$R"
answer=$(curl -s --max-time 10 -w ' %{http_code}' -u "$PC" -d grant_type=refresh_token -d "refresh_token=$refresh" "$T")
access2=$(json_string access_token "$answer") refresh2=$(json_string refresh_token "$answer")
expect "oauth2 refresh: a new token and a new refresh token" \
  "${answer##* } ${#access2} ${#refresh2} $([ "$refresh2" != "$refresh" ] && echo new)" "200 30 30 new"
check "oauth2 resource with the refreshed token" 200 -H "Authorization: Bearer $access2" "$R"
check "oauth2 resource with the token the refresh replaced" 401 -H "Authorization: Bearer $access" "$R"
contains "oauth2 reusing the rotated refresh token: 400 invalid_grant" '"invalid_grant"} 400' -w ' %{http_code}' \
  -u "$PC" -d grant_type=refresh_token -d "refresh_token=$refresh" "$T"
check "oauth2 revoke the new refresh token" 200 -u "$PC" -d "token=$refresh2" -d token_type_hint=refresh_token \
  "$TESTENV_OAUTH2_REVOKE_URL"
contains "oauth2 refresh with the revoked refresh token: 400 invalid_grant" '"invalid_grant"} 400' -w ' %{http_code}' \
  -u "$PC" -d grant_type=refresh_token -d "refresh_token=$refresh2" "$T"
check "oauth2 resource with the revoked refresh token's access token" 401 -H "Authorization: Bearer $access2" "$R"
# The client-credentials token, once its lifetime (and a second more) has passed.
wait_s=$(awk -v a="$service_issued" -v b="$EPOCHREALTIME" -v l="$TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS" \
  'BEGIN { w = a + l + 1 - b; printf "%.2f", (w > 0 ? w : 0) }')
sleep "$wait_s"
check "oauth2 resource with an expired token" 401 -H "Authorization: Bearer $service_access" "$R"
expect "oauth2 stats count the token POSTs by grant and the resource's answers" "$(curl -s --max-time 10 "$TESTENV_OAUTH2_STATS_URL")" \
  '{"token_posts": 7, "grants": {"password": 3, "client_credentials": 1, "refresh_token": 3}, "token_errors": 4, "resource_401": 6, "resource_200": 4}'
# A token endpoint whose refreshed tokens live longer: the grant's token as usual, the refresh's 60 s.
answer=$(curl -s --max-time 10 -u "$PC" -d grant_type=password -d "username=$U" --data-urlencode "password=$P" \
  "$O/o/token-refreshed/60/")
expect "oauth2 token-refreshed/60: the grant's token lives as usual" \
  "$(grep -o '"expires_in": [0-9]*' <<<"$answer")" "\"expires_in\": $TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS"
contains "oauth2 token-refreshed/60: the refreshed token lives 60 s" '"expires_in": 60,' \
  -u "$PC" -d grant_type=refresh_token -d "refresh_token=$(json_string refresh_token "$answer")" "$O/o/token-refreshed/60/"
check "oauth2 404" 404 "$O/missing"
exit $failed
