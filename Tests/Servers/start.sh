#!/usr/bin/env bash
# Starts the loopback test servers in DIR (default: a new temporary directory) and prints
# the path of DIR/testenv.env as the last line. Everything listens on 127.0.0.1 only.
#
#   Apache httpd  plain HTTP, HTTPS with a certificate from a private test CA (localhost and
#                 127.0.0.1), HTTPS whose certificate names another host, HTTPS with a
#                 self-signed certificate; all serve /echo (a JSON echo CGI) and /files/.
#   faultserver   slow, drip-fed, reset, malformed, huge and redirecting answers.
#
# DIR/testenv.env (sourceable) and DIR/testenv.json describe ports, URLs and files.
# Ports are picked free; TESTENV_<NAME>_PORT pins one. Stop with stop.sh DIR.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/curlxhr-servers.XXXXXX")}
export PATH="/usr/sbin:/sbin:$PATH"
daemons=(apache faultserver)

fail() { echo "ERROR: $*" >&2; exit 1; }

require() {  # require BINARY DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || fail "$1 is missing: install the Debian package $2 (Tests/Servers/install-deps.sh)"
}

alive() {  # alive PIDFILE: the recorded process exists and is not a zombie
  [ -s "$1" ] || return 1
  local pid state
  pid=$(cat "$1")
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

already_running() {
  [ -s "$dir/testenv.env" ] || return 1
  for daemon in "${daemons[@]}"; do alive "$dir/run/$daemon.pid" || return 1; done
}

if already_running; then
  echo "$dir/testenv.env"
  exit 0
fi
if [ -d "$dir/run" ]; then bash "$here/stop.sh" "$dir" >/dev/null 2>&1 || true; fi

require apache2 apache2
require openssl openssl
require /usr/bin/python3 python3
[ -e /usr/lib/apache2/modules/mod_ssl.so ] || fail "mod_ssl is missing: install the Debian package apache2"

mkdir -p "$dir"/{run,logs,tls,www/files,cgi,apache}
chmod 755 "$dir" "$dir"/{run,tls,www,www/files,cgi,apache}
chmod 1777 "$dir/logs"

# -- ports ---------------------------------------------------------------------------------
port_names=(HTTP HTTPS HTTPS_WRONGHOST HTTPS_SELFSIGNED FAULT)
read -r -a picked <<<"$(/usr/bin/python3 - "${#port_names[@]}" <<'EOF'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
)"
declare -A port
for i in "${!port_names[@]}"; do
  name=${port_names[$i]}
  pinned_var="TESTENV_${name}_PORT"
  port[$name]=${!pinned_var:-${picked[$i]}}
  if [ -n "${!pinned_var:-}" ] && ! /usr/bin/python3 -c \
      "import socket,sys; socket.socket().bind(('127.0.0.1', int(sys.argv[1])))" "${port[$name]}" 2>/dev/null; then
    fail "port ${port[$name]} for ${name}_PORT is in use"
  fi
done

# -- TLS: a private CA, its certificates, a self-signed one, and an unrelated CA -------------
make_ca() {  # make_ca NAME SUBJECT
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=$2" -keyout "$dir/tls/$1.key" -out "$dir/tls/$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
make_leaf() {  # make_leaf NAME SUBJECT-ALT-NAMES: signed by the test CA
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$dir/tls/$1.key" -out "$dir/tls/$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$2" >"$dir/tls/$1.ext"
  openssl x509 -req -in "$dir/tls/$1.csr" -CA "$dir/tls/ca.pem" -CAkey "$dir/tls/ca.key" -CAcreateserial \
    -days 30 -extfile "$dir/tls/$1.ext" -out "$dir/tls/$1.pem" 2>/dev/null
}
make_ca ca "CurlXHR Test CA"
make_ca other-ca "CurlXHR Unrelated CA"
make_leaf localhost "DNS:localhost,IP:127.0.0.1"
make_leaf wronghost "DNS:wronghost.invalid"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=selfsigned.invalid" \
  -addext subjectAltName=DNS:selfsigned.invalid,DNS:localhost,IP:127.0.0.1 \
  -keyout "$dir/tls/selfsigned.key" -out "$dir/tls/selfsigned.pem" 2>/dev/null
chmod 644 "$dir"/tls/*

# -- content: files with byte i = i % 251, and the echo CGI --------------------------------
/usr/bin/python3 - "$dir/www/files" <<'EOF'
import sys
for name, size in (("100b", 100), ("10k", 10 * 1024), ("1m", 1024 * 1024)):
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(bytes(i % 251 for i in range(size)))
EOF
cp "$here/echo.py" "$dir/cgi/echo.py"
chmod 755 "$dir/cgi/echo.py"
chmod 644 "$dir"/www/files/*

# -- Apache --------------------------------------------------------------------------------
user_lines=""
if [ "$(id -u)" -eq 0 ]; then user_lines=$'User www-data\nGroup www-data'; fi
modules=(mpm_event authz_core mime alias cgid headers ssl socache_shmcb env setenvif)
{
  echo "ServerRoot $dir/apache"
  echo "ServerName 127.0.0.1"
  echo "PidFile $dir/run/httpd-own.pid"
  echo "DefaultRuntimeDir $dir/run"
  echo "Mutex file:$dir/run default"
  echo "ScriptSock $dir/run/cgid.sock"
  echo "ErrorLog $dir/logs/apache-error.log"
  echo "LogFormat \"%h %m %U%q %>s %b\" brief"
  echo "CustomLog $dir/logs/apache-access.log brief"
  echo "$user_lines"
  for module in "${modules[@]}"; do echo "LoadModule ${module}_module /usr/lib/apache2/modules/mod_${module}.so"; done
  cat <<EOF
StartServers 2
ServerLimit 16
ThreadsPerChild 64
MaxRequestWorkers 1024
MinSpareThreads 64
MaxSpareThreads 1024
ListenBacklog 1024
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
TypesConfig /etc/mime.types
DocumentRoot $dir/www
SSLSessionCache shmcb:$dir/run/ssl_scache(512000)
ScriptAlias /echo $dir/cgi/echo.py
<Directory $dir/cgi>
  Require all granted
  CGIPassAuth On
</Directory>
<Directory $dir/www>
  Require all granted
  Options None
</Directory>
Listen 127.0.0.1:${port[HTTP]}
Listen 127.0.0.1:${port[HTTPS]}
Listen 127.0.0.1:${port[HTTPS_WRONGHOST]}
Listen 127.0.0.1:${port[HTTPS_SELFSIGNED]}
<VirtualHost 127.0.0.1:${port[HTTPS]}>
  SSLEngine on
  SSLCertificateFile $dir/tls/localhost.pem
  SSLCertificateKeyFile $dir/tls/localhost.key
</VirtualHost>
<VirtualHost 127.0.0.1:${port[HTTPS_WRONGHOST]}>
  SSLEngine on
  SSLCertificateFile $dir/tls/wronghost.pem
  SSLCertificateKeyFile $dir/tls/wronghost.key
</VirtualHost>
<VirtualHost 127.0.0.1:${port[HTTPS_SELFSIGNED]}>
  SSLEngine on
  SSLCertificateFile $dir/tls/selfsigned.pem
  SSLCertificateKeyFile $dir/tls/selfsigned.key
</VirtualHost>
EOF
} >"$dir/apache/httpd.conf"

start_daemon() {  # start_daemon NAME LOG COMMAND...: in its own session, pid recorded
  local name=$1 log=$2
  shift 2
  setsid "$@" </dev/null >>"$log" 2>&1 &
  echo $! >"$dir/run/$name.pid"
}

wait_for_port() {  # wait_for_port NAME PORT LOG
  for _ in $(seq 1 100); do
    if /usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.2)" "$2" 2>/dev/null; then
      return 0
    fi
    alive "$dir/run/$1.pid" || break
    sleep 0.05
  done
  echo "ERROR: $1 did not start listening on 127.0.0.1:$2; the end of $3:" >&2
  tail -n 20 "$3" >&2 || true
  bash "$here/stop.sh" "$dir" >/dev/null 2>&1 || true
  exit 1
}

apache2 -t -f "$dir/apache/httpd.conf" >"$dir/logs/apache-configtest.log" 2>&1 \
  || { cat "$dir/logs/apache-configtest.log" >&2; fail "the Apache configuration does not load"; }
start_daemon apache "$dir/logs/apache-stdout.log" apache2 -f "$dir/apache/httpd.conf" -DFOREGROUND
start_daemon faultserver "$dir/logs/faultserver.log" /usr/bin/python3 "$here/faultserver.py" "${port[FAULT]}"
wait_for_port apache "${port[HTTP]}" "$dir/logs/apache-error.log"
wait_for_port apache "${port[HTTPS_SELFSIGNED]}" "$dir/logs/apache-error.log"
wait_for_port faultserver "${port[FAULT]}" "$dir/logs/faultserver.log"

# -- the description -------------------------------------------------------------------------
declare -A values=(
  [TESTENV_DIR]="$dir"
  [TESTENV_HOST]=127.0.0.1
  [TESTENV_HTTP_PORT]=${port[HTTP]}
  [TESTENV_HTTP_URL]="http://127.0.0.1:${port[HTTP]}"
  [TESTENV_HTTPS_PORT]=${port[HTTPS]}
  [TESTENV_HTTPS_URL]="https://localhost:${port[HTTPS]}"
  [TESTENV_HTTPS_WRONGHOST_PORT]=${port[HTTPS_WRONGHOST]}
  [TESTENV_HTTPS_SELFSIGNED_PORT]=${port[HTTPS_SELFSIGNED]}
  [TESTENV_CA_FILE]="$dir/tls/ca.pem"
  [TESTENV_OTHER_CA_FILE]="$dir/tls/other-ca.pem"
  [TESTENV_SELFSIGNED_CERT]="$dir/tls/selfsigned.pem"
  [TESTENV_FAULT_PORT]=${port[FAULT]}
  [TESTENV_FAULT_URL]="http://127.0.0.1:${port[FAULT]}"
  [TESTENV_FILES_PATTERN]="byte i of /files/* and of the fault server's /bytes and /drip is i % 251"
)
: >"$dir/testenv.env"
for key in $(printf '%s\n' "${!values[@]}" | sort); do
  printf "export %s='%s'\n" "$key" "${values[$key]//\'/\'\\\'\'}" >>"$dir/testenv.env"
done
/usr/bin/python3 - "$dir/testenv.json" <<EOF
import json, shlex, sys
values = {}
for line in open("$dir/testenv.env"):
    key, _, value = line.removeprefix("export ").rstrip("\n").partition("=")
    values[key] = shlex.split(value)[0]
json.dump(values, open(sys.argv[1], "w"), indent=2, sort_keys=True)
EOF
echo "$dir/testenv.env"
