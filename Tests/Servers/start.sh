#!/usr/bin/env bash
# Starts the loopback test servers in DIR (default: a new temporary directory) and prints
# the path of DIR/testenv.env as the last line. Everything listens on 127.0.0.1 only.
#
#   Apache httpd  plain HTTP, HTTPS with a certificate from a private test CA (localhost and
#                 127.0.0.1), HTTPS whose certificate names another host, HTTPS with a
#                 self-signed certificate; all serve /echo (a JSON echo CGI) and /files/.
#                 /basic/, /digest/ (MD5, qop=auth) and /negotiate/ (Kerberos through
#                 mod_auth_gssapi) serve the echo CGI and /files/ behind each scheme.
#   krb5kdc       an MIT KDC for the realm EXAMPLE.TEST (alice, HTTP/localhost, HTTP/127.0.0.1,
#                 and ALT/localhost, a second service in Apache's keytab for --service-name).
#   ntlmserver    the echo behind NTLM, verified by pyspnego's acceptor.
#   squid         forward proxies: open, Basic, Digest and NTLM (pyspnego again), one port each.
#   faultserver   slow, drip-fed, reset, malformed, huge and redirecting answers; the same
#                 routes on a Unix socket (a path in DIR/run) and one in the abstract namespace.
#   nginx         HTTP/2 over TLS (ALPN) with the test CA's localhost certificate: /small (100
#                 bytes) and /echo-protocol; its access log names each request's connection.
#   hypercorn     h2app.py over TLS, HTTP/2 or HTTP/1.1: /slow answers after a delay and
#                 /stats tells how many requests were in flight at once, on which connections.
#   oauth2server  an OAuth2 token endpoint (django-oauth-toolkit under Django's runserver: the
#                 password, client-credentials and refresh grants, rotating refresh tokens,
#                 revocation), a bearer-token resource /api/me and /stats of what it answered.
#                 Access tokens live 2 s (TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS sets that).
#   socksgss      a SOCKS5 proxy with Kerberos (GSS-API, RFC 1961; socksgss.py): the service
#                 rcmd/127.0.0.1 and rcmd/localhost, alice allowed and carol (a principal of
#                 the realm too) refused; TESTENV_SOCKS_GSSAPI_PORT, and one port for each of
#                 its faults (TESTENV_SOCKS_GSSAPI_{CLOSE,GARBAGE,OVERSIZED,NOMETHOD,SILENT,
#                 PROTECT}_PORT); it logs whom it let through to where (TESTENV_SOCKS_GSSAPI_LOG).
#
# DIR/testenv.env (sourceable) and DIR/testenv.json describe ports, URLs and files.
# Ports are picked free; TESTENV_<NAME>_PORT pins one. Stop with stop.sh DIR.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/curlxhr-servers.XXXXXX")}
export PATH="/usr/sbin:/sbin:$PATH"
daemons=(krb5kdc apache faultserver ntlmserver squid nginx hypercorn oauth2 danted danted_login socksgss)

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
  echo "the test servers in $dir are already running" >&2
  echo "$dir/testenv.env"
  exit 0
fi
if [ -d "$dir/run" ]; then bash "$here/stop.sh" "$dir" >/dev/null 2>&1 || true; fi

require apache2 apache2
require openssl openssl
require /usr/bin/python3 python3
require krb5kdc krb5-kdc
require kadmin.local krb5-admin-server
require kinit krb5-user
require squid squid
require /usr/lib/squid/basic_ncsa_auth squid
require /usr/lib/squid/digest_file_auth squid
require htpasswd apache2-utils
require nginx nginx
require danted dante-server
/usr/bin/python3 -c "import gssapi" 2>/dev/null \
  || fail "python3-gssapi is missing: install the Debian package python3-gssapi (Tests/Servers/install-deps.sh)"
[ -e /usr/lib/apache2/modules/mod_ssl.so ] || fail "mod_ssl is missing: install the Debian package apache2"
[ -e /usr/lib/apache2/modules/mod_auth_gssapi.so ] || fail "mod_auth_gssapi is missing: install the Debian package libapache2-mod-auth-gssapi"
venv=$(bash "$here/install-deps.sh" --venv-path)
"$venv/bin/python" -c "import spnego" 2>/dev/null \
  || fail "pyspnego is missing from $venv: run Tests/Servers/install-deps.sh"
"$venv/bin/python" -c "import hypercorn" 2>/dev/null \
  || fail "hypercorn is missing from $venv: run Tests/Servers/install-deps.sh"
"$venv/bin/python" -c "import oauth2_provider" 2>/dev/null \
  || fail "django-oauth-toolkit is missing from $venv: run Tests/Servers/install-deps.sh"

rm -rf "$dir/krb5" "$dir/squid" "$dir/nginx" "$dir/oauth2"  # a fresh realm, proxy users and OAuth2 database on every start
mkdir -p "$dir"/{run,logs,tls,www/files,cgi,apache,krb5/db,krb5/rcache,squid,nginx/www,nginx/tmp,oauth2}
chmod 755 "$dir" "$dir"/{run,tls,www,www/files,cgi,apache,krb5,squid,nginx,nginx/www,nginx/tmp}
chmod 700 "$dir/krb5/db"
chmod 1777 "$dir/logs" "$dir/krb5/rcache"
# Privilege drop: Apache's and nginx's workers and squid's helpers must reach DIR.
if [ "$(id -u)" -eq 0 ]; then
  parent=$dir
  while [ "$parent" != / ]; do
    [ "$(( 0$(stat -c %a "$parent") & 1 ))" -eq 1 ] \
      || fail "$parent cannot be searched by other users, so Apache, nginx and squid could not read $dir"
    parent=$(dirname "$parent")
  done
fi

# Users: alice for every scheme, bob (a password with reserved characters) for Basic and
# Digest, proxyuser for the proxies.
user=alice password=alice-Secret-1
user2=bob password2='b0b p@ss:w%rd/ü'
# A principal of the realm the SOCKS5 GSS-API proxy refuses.
refused_user=carol refused_password=carol-Secret-1
proxy_user=proxyuser proxy_password=proxy-Secret-1
realm=EXAMPLE.TEST digest_realm=testenv-digest ntlm_domain=TESTDOM
# OAuth2 clients: one for the password grant, one for client credentials (both confidential).
oauth2_password_client=curlxhr-password oauth2_password_secret=password-client-Secret-1
oauth2_service_client=curlxhr-service oauth2_service_secret=service-client-Secret-1
oauth2_token_seconds=${TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS:-2}
[[ $oauth2_token_seconds =~ ^[1-9][0-9]*$ ]] \
  || fail "TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS is '$oauth2_token_seconds', not a number of seconds"

# -- ports ---------------------------------------------------------------------------------
port_names=(HTTP HTTPS HTTPS_H2 HTTPS_WRONGHOST HTTPS_SELFSIGNED FAULT KDC HTTP_NTLM PROXY PROXY_BASIC PROXY_DIGEST PROXY_NTLM
            H2 SLOW_H2 OAUTH2 MTLS PROXY_TLS PROXY_MTLS SOCKS SOCKS_AUTH SOCKS_GSSAPI SOCKS_GSSAPI_CLOSE
            SOCKS_GSSAPI_GARBAGE SOCKS_GSSAPI_OVERSIZED SOCKS_GSSAPI_NOMETHOD SOCKS_GSSAPI_SILENT SOCKS_GSSAPI_PROTECT)
# Free on TCP, and on UDP too (the KDC listens on both).
read -r -a picked <<<"$(/usr/bin/python3 - "${#port_names[@]}" <<'EOF'
import socket, sys
sockets, ports = [], []
while len(ports) < int(sys.argv[1]):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", s.getsockname()[1]))
    except OSError:
        continue
    sockets += [s, u]
    ports.append(s.getsockname()[1])
print(" ".join(map(str, ports)))
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

# -- OAuth2: the database, alice and the two clients ------------------------------------------
# Django takes a few seconds for this, so it runs in the background while the other servers
# are prepared; the daemon starts once it is done.
oauth2_manage() {  # oauth2_manage COMMAND...: oauth2server.py as Django's manage.py, on DIR's database
  OAUTH2_DB="$dir/oauth2/db.sqlite3" "$venv/bin/python" "$here/oauth2server.py" "$@"
}
oauth2_setup() {
  oauth2_manage migrate --no-input -v 0 || return 1
  local jobs=() job status=0
  OAUTH2_USER=$user OAUTH2_PASSWORD=$password oauth2_manage shell -v 0 -c 'import os
from django.contrib.auth.models import User
User.objects.create_user(os.environ["OAUTH2_USER"], password=os.environ["OAUTH2_PASSWORD"])' & jobs+=($!)
  # The secrets are stored hashed (django-oauth-toolkit's default); clients send them plain.
  oauth2_manage createapplication --client-id "$oauth2_password_client" --client-secret "$oauth2_password_secret" \
    --name password confidential password >"$dir/logs/oauth2-app-password.log" & jobs+=($!)
  oauth2_manage createapplication --client-id "$oauth2_service_client" --client-secret "$oauth2_service_secret" \
    --name service confidential client-credentials >"$dir/logs/oauth2-app-service.log" & jobs+=($!)
  for job in "${jobs[@]}"; do wait "$job" || status=1; done
  # createapplication reports an application it refused on stdout, and exits 0 all the same.
  cat "$dir/logs/oauth2-app-password.log" "$dir/logs/oauth2-app-service.log"
  grep -q "created successfully" "$dir/logs/oauth2-app-password.log" || status=1
  grep -q "created successfully" "$dir/logs/oauth2-app-service.log" || status=1
  return $status
}
oauth2_setup >"$dir/logs/oauth2-setup.log" 2>&1 &
oauth2_setup_job=$!

# -- TLS: a private CA, its certificates, a self-signed one, and an unrelated CA -------------
make_ca() {  # make_ca NAME SUBJECT
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=$2" -keyout "$dir/tls/$1.key" -out "$dir/tls/$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
make_signed() {  # make_signed NAME CA EXTENSIONS: a key and a certificate for CN=NAME signed by CA
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$dir/tls/$1.key" -out "$dir/tls/$1.csr" 2>/dev/null
  printf '%s\nbasicConstraints=CA:FALSE\n' "$3" >"$dir/tls/$1.ext"
  openssl x509 -req -in "$dir/tls/$1.csr" -CA "$dir/tls/$2.pem" -CAkey "$dir/tls/$2.key" -CAcreateserial \
    -days 30 -extfile "$dir/tls/$1.ext" -out "$dir/tls/$1.pem" 2>/dev/null
}
make_leaf() {  # make_leaf NAME SUBJECT-ALT-NAMES: a server's, signed by the test CA
  make_signed "$1" ca "$(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth' "$2")"
}
make_ca ca "CurlXHR Test CA"
make_ca other-ca "CurlXHR Unrelated CA"
make_leaf localhost "DNS:localhost,IP:127.0.0.1"
make_leaf wronghost "DNS:wronghost.invalid"
# The TLS proxies' own key, so that a pin tells the proxy from the server behind it.
make_leaf proxy "DNS:localhost,IP:127.0.0.1"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=selfsigned.invalid" \
  -addext subjectAltName=DNS:selfsigned.invalid,DNS:localhost,IP:127.0.0.1 \
  -keyout "$dir/tls/selfsigned.key" -out "$dir/tls/selfsigned.pem" 2>/dev/null
# Client identities: one from the test CA (its key as PEM, encrypted PEM, DER, and the pair
# as PKCS#12 with a password), one from the unrelated CA; the localhost key's pin.
client_password="client-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
make_signed xhr-client ca extendedKeyUsage=clientAuth
make_signed other-client other-ca extendedKeyUsage=clientAuth
openssl pkey -in "$dir/tls/xhr-client.key" -aes-256-cbc -passout "pass:$client_password" \
  -out "$dir/tls/xhr-client-encrypted.key"
openssl x509 -in "$dir/tls/xhr-client.pem" -outform DER -out "$dir/tls/xhr-client.der"
openssl pkey -in "$dir/tls/xhr-client.key" -outform DER -out "$dir/tls/xhr-client-key.der"
openssl pkcs12 -export -in "$dir/tls/xhr-client.pem" -inkey "$dir/tls/xhr-client.key" \
  -passout "pass:$client_password" -out "$dir/tls/xhr-client.p12"
openssl x509 -in "$dir/tls/localhost.pem" -pubkey -noout >"$dir/tls/localhost-pubkey.pem"
openssl pkey -pubin -in "$dir/tls/localhost-pubkey.pem" -outform DER -out "$dir/tls/localhost-pubkey.der"
localhost_pin="sha256//$(openssl dgst -sha256 -binary "$dir/tls/localhost-pubkey.der" | base64)"
openssl x509 -in "$dir/tls/proxy.pem" -pubkey -noout >"$dir/tls/proxy-pubkey.pem"
proxy_pin="sha256//$(openssl pkey -pubin -in "$dir/tls/proxy-pubkey.pem" -outform DER | openssl dgst -sha256 -binary | base64)"
for file in xhr-client.p12 xhr-client-encrypted.key xhr-client.key xhr-client-key.der xhr-client.der localhost-pubkey.der \
            proxy-pubkey.pem; do
  [ -s "$dir/tls/$file" ] || fail "openssl did not make the client identity file $file"
done
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
cp "$dir/www/files/100b" "$dir/nginx/www/small"
chmod 644 "$dir/nginx/www/small"

# -- Kerberos: a KDC for EXAMPLE.TEST, the HTTP services' keytab, a ticket for alice --------
export KRB5_CONFIG="$dir/krb5/krb5.conf" KRB5_KDC_PROFILE="$dir/krb5/kdc.conf"
cat >"$KRB5_CONFIG" <<EOF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  default_ccache_name = FILE:$dir/krb5/ccache_default
[realms]
  $realm = {
    kdc = 127.0.0.1:${port[KDC]}
  }
[domain_realm]
  localhost = $realm
  127.0.0.1 = $realm
  .localhost = $realm
EOF
cat >"$KRB5_KDC_PROFILE" <<EOF
[kdcdefaults]
  kdc_listen = 127.0.0.1:${port[KDC]}
  kdc_tcp_listen = 127.0.0.1:${port[KDC]}
[realms]
  $realm = {
    kdc_listen = 127.0.0.1:${port[KDC]}
    kdc_tcp_listen = 127.0.0.1:${port[KDC]}
    database_name = $dir/krb5/db/principal
    key_stash_file = $dir/krb5/db/stash
    acl_file = $dir/krb5/db/kadm5.acl
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$dir/logs/krb5kdc.log
EOF
chmod 644 "$KRB5_CONFIG" "$KRB5_KDC_PROFILE"
: >"$dir/krb5/db/kadm5.acl"
kdb5_util create -s -r "$realm" -P "$(head -c 24 /dev/urandom | base64)" >"$dir/logs/kdb5_util.log" 2>&1 \
  || { cat "$dir/logs/kdb5_util.log" >&2; fail "the Kerberos database could not be created"; }
kadmin.local -r "$realm" >"$dir/logs/kadmin.log" 2>&1 <<EOF || { cat "$dir/logs/kadmin.log" >&2; fail "kadmin.local failed"; }
addprinc -pw $password $user@$realm
addprinc -randkey HTTP/localhost@$realm
addprinc -randkey HTTP/127.0.0.1@$realm
addprinc -randkey ALT/localhost@$realm
ktadd -k $dir/krb5/http.keytab HTTP/localhost@$realm HTTP/127.0.0.1@$realm ALT/localhost@$realm
addprinc -pw $refused_password $refused_user@$realm
addprinc -randkey rcmd/localhost@$realm
addprinc -randkey rcmd/127.0.0.1@$realm
ktadd -k $dir/krb5/socks.keytab rcmd/localhost@$realm rcmd/127.0.0.1@$realm
EOF
chmod 644 "$dir/krb5/http.keytab"  # a throwaway realm: Apache's workers must read it

# -- users and passwords for Apache, the NTLM acceptors and squid -----------------------------
htpasswd -cbB "$dir/apache/htpasswd" "$user" "$password" 2>/dev/null
htpasswd -bB "$dir/apache/htpasswd" "$user2" "$password2" 2>/dev/null
/usr/bin/python3 - "$dir" "$digest_realm" "$user" "$password" "$user2" "$password2" "$proxy_user" "$proxy_password" "$ntlm_domain" <<'EOF'
import hashlib, sys
dir, realm, user, password, user2, password2, proxy_user, proxy_password, domain = sys.argv[1:]
def ha1(u, p):
    return hashlib.md5(f"{u}:{realm}:{p}".encode()).hexdigest()
with open(f"{dir}/apache/htdigest", "w") as f:
    f.write(f"{user}:{realm}:{ha1(user, password)}\n{user2}:{realm}:{ha1(user2, password2)}\n")
with open(f"{dir}/squid/ntlm_users", "w") as f:  # pyspnego: DOMAIN:USER:PASSWORD; an empty domain too
    for u, p in ((user, password), (proxy_user, proxy_password)):
        f.write(f"{domain}:{u}:{p}\n:{u}:{p}\n")
with open(f"{dir}/squid/digest_passwd", "w") as f:
    f.write(f"{proxy_user}:{proxy_password}\n")
EOF
htpasswd -cbm "$dir/squid/passwd" "$proxy_user" "$proxy_password" 2>/dev/null
cp "$here/ntlm_auth_helper.py" "$dir/squid/"
chmod 644 "$dir"/apache/htpasswd "$dir"/apache/htdigest "$dir"/squid/*

# -- Apache --------------------------------------------------------------------------------
user_lines=""
if [ "$(id -u)" -eq 0 ]; then user_lines=$'User www-data\nGroup www-data'; fi
modules=(mpm_event authz_core authz_user authn_core authn_file auth_basic auth_digest auth_gssapi mime alias cgid
         headers ssl socache_shmcb env setenvif http2)
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
ScriptAlias /basic/echo $dir/cgi/echo.py
ScriptAlias /digest/echo $dir/cgi/echo.py
ScriptAlias /negotiate/echo $dir/cgi/echo.py
Alias /basic/files $dir/www/files
Alias /digest/files $dir/www/files
Alias /negotiate/files $dir/www/files
<Location /basic/>
  AuthType Basic
  AuthName testenv-basic
  AuthBasicProvider file
  AuthUserFile $dir/apache/htpasswd
  Require valid-user
</Location>
<Location /digest/>
  AuthType Digest
  AuthName $digest_realm
  AuthDigestDomain /digest/
  AuthDigestProvider file
  AuthUserFile $dir/apache/htdigest
  Require valid-user
</Location>
<Location /negotiate/>
  AuthType GSSAPI
  AuthName testenv-negotiate
  GssapiCredStore keytab:$dir/krb5/http.keytab
  GssapiAllowedMech krb5
  GssapiBasicAuth Off
  GssapiPublishMech On
  Require valid-user
</Location>
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
Listen 127.0.0.1:${port[HTTPS_H2]}
Listen 127.0.0.1:${port[HTTPS_WRONGHOST]}
Listen 127.0.0.1:${port[HTTPS_SELFSIGNED]}
<VirtualHost 127.0.0.1:${port[HTTPS]}>
  SSLEngine on
  SSLCertificateFile $dir/tls/localhost.pem
  SSLCertificateKeyFile $dir/tls/localhost.key
</VirtualHost>
<VirtualHost 127.0.0.1:${port[HTTPS_H2]}>
  # HTTP/2 through ALPN, as on the HTTPS port otherwise.
  Protocols h2 http/1.1
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

start_daemon() {  # start_daemon NAME LOG COMMAND...: detached (daemon.py), pid recorded
  local name=$1 log=$2
  shift 2
  /usr/bin/python3 "$here/daemon.py" "$log" "$@" >"$dir/run/$name.pid"
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

# -- squid: forward proxies, one port per scheme ----------------------------------------------
squid_user_lines=""
if [ "$(id -u)" -eq 0 ]; then squid_user_lines="cache_effective_user proxy"; fi
cat >"$dir/squid/squid.conf" <<EOF
http_port 127.0.0.1:${port[PROXY]} name=open
http_port 127.0.0.1:${port[PROXY_BASIC]} name=basic
http_port 127.0.0.1:${port[PROXY_DIGEST]} name=digest
http_port 127.0.0.1:${port[PROXY_NTLM]} name=ntlm
https_port 127.0.0.1:${port[PROXY_TLS]} tls-cert=$dir/tls/proxy.pem tls-key=$dir/tls/proxy.key name=tls
auth_param basic program /usr/lib/squid/basic_ncsa_auth $dir/squid/passwd
auth_param basic realm testenv-proxy-basic
auth_param digest program /usr/lib/squid/digest_file_auth $dir/squid/digest_passwd
auth_param digest realm testenv-proxy-digest
auth_param ntlm program /usr/bin/env NTLM_USER_FILE=$dir/squid/ntlm_users $venv/bin/python $dir/squid/ntlm_auth_helper.py
auth_param ntlm children 4
acl port_open myportname open
acl port_basic myportname basic
acl port_digest myportname digest
acl port_ntlm myportname ntlm
acl port_tls myportname tls
acl loopback_dst dst 127.0.0.1
acl authenticated proxy_auth REQUIRED
auth_schemes basic port_basic
auth_schemes digest port_digest
auth_schemes ntlm port_ntlm
http_access deny !loopback_dst
http_access allow port_open
http_access allow port_tls
http_access allow authenticated
http_access deny all
request_header_add X-Squid-User "%ul" all
cache deny all
pid_filename $dir/run/squid-own.pid
access_log stdio:$dir/logs/squid-access.log
logformat headers %rm %ru %>h
access_log stdio:$dir/logs/squid-headers.log headers
buffered_logs off
cache_log $dir/logs/squid-cache.log
netdb_filename none
pinger_enable off
shutdown_lifetime 0 seconds
coredump_dir $dir/squid
$squid_user_lines
EOF
squid_name="testenv$(printf '%s' "$dir" | md5sum | cut -c1-12)"
rm -f /dev/shm/"$squid_name"-*.shm
touch "$dir/logs/squid-access.log" "$dir/logs/squid-cache.log" "$dir/logs/squid-headers.log"
chmod 666 "$dir/logs/squid-access.log" "$dir/logs/squid-cache.log" "$dir/logs/squid-headers.log"
squid -k parse -f "$dir/squid/squid.conf" >"$dir/logs/squid-configtest.log" 2>&1 \
  || { tail -n 20 "$dir/logs/squid-configtest.log" >&2; fail "the squid configuration does not load"; }

# -- dante: SOCKS4 and SOCKS5, open on one port, with a user name login (RFC 1929) on another --
# Dante checks a SOCKS5 login against the system's password database: as root, a system user
# of its own (made once, no home, no shell) with a password made once too and kept (0600) in
# the test environment's virtual environment, so that server sets running side by side (their
# dante servers share the user) all know it.
socks_user=curlxhr-socks
socks_password_file=$venv/socks-password
if [ ! -s "$socks_password_file" ]; then
  (umask 077; printf 'socks-%s\n' "$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$socks_password_file") \
    || fail "could not write $socks_password_file"
fi
socks_password=$(<"$socks_password_file")
mkdir -p "$dir/dante"
dante_user_lines=""
if [ "$(id -u)" -eq 0 ]; then
  id "$socks_user" >/dev/null 2>&1 \
    || useradd --system --no-create-home --shell /usr/sbin/nologin "$socks_user" >"$dir/logs/dante-useradd.log" 2>&1 \
    || fail "could not make the SOCKS login user $socks_user (see $dir/logs/dante-useradd.log)"
  printf '%s:%s\n' "$socks_user" "$socks_password" | chpasswd \
    || fail "could not set the password of the SOCKS login user $socks_user"
  dante_user_lines=$'user.privileged: root\nuser.unprivileged: nobody'
fi
dante_conf() {  # dante_conf PORT METHOD: a server on 127.0.0.1:PORT asking for METHOD
  cat <<EOF
logoutput: $dir/logs/danted.log
internal.protocol: ipv4
internal: 127.0.0.1 port = $1
external: 127.0.0.1
clientmethod: none
socksmethod: $2
$dante_user_lines
client pass {
  from: 127.0.0.0/8 to: 127.0.0.0/8
}
socks pass {
  from: 127.0.0.0/8 to: 127.0.0.0/8
  command: connect
  log: connect error
}
EOF
}
dante_conf "${port[SOCKS]}" none >"$dir/dante/open.conf"
dante_conf "${port[SOCKS_AUTH]}" username >"$dir/dante/login.conf"
: >"$dir/logs/danted.log"

# -- nginx: HTTP/2 over TLS -------------------------------------------------------------------
nginx_user_line=""
if [ "$(id -u)" -eq 0 ]; then nginx_user_line="user www-data www-data;"; fi
nginx_conf=$(<"$here/nginx-h2.conf.in")
nginx_conf=${nginx_conf//@DIR@/"$dir"}
nginx_conf=${nginx_conf//@PORT@/"${port[H2]}"}
nginx_conf=${nginx_conf//@MTLS_PORT@/"${port[MTLS]}"}
nginx_conf=${nginx_conf//@PROXY_MTLS_PORT@/"${port[PROXY_MTLS]}"}
nginx_conf=${nginx_conf//@HTTP_PORT@/"${port[HTTP]}"}
nginx_conf=${nginx_conf//@USER_LINE@/"$nginx_user_line"}
printf '%s\n' "$nginx_conf" >"$dir/nginx/nginx.conf"
: >"$dir/logs/h2-access.log"  # a fresh access log on every start
touch "$dir/logs/nginx-error.log"
h2_log_format=$(sed -n "s/^ *log_format h2 '\(.*\)';\$/\1/p" "$here/nginx-h2.conf.in")
nginx_args=(-p "$dir/nginx/" -c "$dir/nginx/nginx.conf" -e "$dir/logs/nginx-error.log")
nginx_test=0
nginx -t "${nginx_args[@]}" >"$dir/logs/nginx-configtest.log" 2>&1 || nginx_test=$?
rm -f "$dir/run/nginx-own.pid"  # the test leaves an empty one
[ "$nginx_test" -eq 0 ] \
  || { tail -n 20 "$dir/logs/nginx-configtest.log" >&2; fail "the nginx configuration does not load"; }

start_daemon krb5kdc "$dir/logs/krb5kdc-stdout.log" env KRB5_CONFIG="$KRB5_CONFIG" KRB5_KDC_PROFILE="$KRB5_KDC_PROFILE" \
  krb5kdc -n -r "$realm"
wait_for_port krb5kdc "${port[KDC]}" "$dir/logs/krb5kdc.log"
printf '%s\n' "$password" | KRB5CCNAME="FILE:$dir/krb5/ccache_test" kinit "$user@$realm" >"$dir/logs/kinit.log" 2>&1 \
  || { cat "$dir/logs/kinit.log" >&2; bash "$here/stop.sh" "$dir" >/dev/null 2>&1; fail "kinit against the test KDC failed"; }

apache2 -t -f "$dir/apache/httpd.conf" >"$dir/logs/apache-configtest.log" 2>&1 \
  || { cat "$dir/logs/apache-configtest.log" >&2; fail "the Apache configuration does not load"; }
start_daemon apache "$dir/logs/apache-stdout.log" env KRB5_CONFIG="$KRB5_CONFIG" \
  KRB5_KTNAME="FILE:$dir/krb5/http.keytab" KRB5RCACHEDIR="$dir/krb5/rcache" apache2 -f "$dir/apache/httpd.conf" -DFOREGROUND
fault_socket="$dir/run/fault.sock"
fault_abstract="curlxhr-fault-$(printf '%s' "$dir" | md5sum | cut -c1-12)"
[ "${#fault_socket}" -le 107 ] || fail "the Unix socket path $fault_socket is longer than 107 bytes: use a shorter DIR"
start_daemon faultserver "$dir/logs/faultserver.log" /usr/bin/python3 "$here/faultserver.py" "${port[FAULT]}" \
  "$fault_socket" "$fault_abstract"
start_daemon ntlmserver "$dir/logs/ntlmserver.log" env NTLM_USER_FILE="$dir/squid/ntlm_users" \
  "$venv/bin/python" "$here/ntlmserver.py" "${port[HTTP_NTLM]}"
start_daemon squid "$dir/logs/squid-stdout.log" squid -N -n "$squid_name" -f "$dir/squid/squid.conf"
start_daemon nginx "$dir/logs/nginx-stdout.log" nginx "${nginx_args[@]}"
start_daemon danted "$dir/logs/danted-stdout.log" danted -f "$dir/dante/open.conf" -p "$dir/run/danted-own.pid"
start_daemon danted_login "$dir/logs/danted-login-stdout.log" danted -f "$dir/dante/login.conf" -p "$dir/run/danted-login-own.pid"
socks_gssapi_modes=()
for mode in CLOSE GARBAGE OVERSIZED NOMETHOD SILENT PROTECT; do
  socks_gssapi_modes+=("${mode,,}=${port[SOCKS_GSSAPI_$mode]}")
done
: >"$dir/logs/socksgss.log"
start_daemon socksgss "$dir/logs/socksgss.log" env KRB5_CONFIG="$KRB5_CONFIG" KRB5_KTNAME="FILE:$dir/krb5/socks.keytab" \
  KRB5RCACHEDIR="$dir/krb5/rcache" /usr/bin/python3 "$here/socksgss.py" --allow "$user@$realm" \
  "normal=${port[SOCKS_GSSAPI]}" "${socks_gssapi_modes[@]}"
start_daemon hypercorn "$dir/logs/hypercorn.log" "$venv/bin/python" "$here/h2app.py" "${port[SLOW_H2]}" \
  "$dir/tls/localhost.pem" "$dir/tls/localhost.key"
wait_for_port apache "${port[HTTP]}" "$dir/logs/apache-error.log"
wait_for_port apache "${port[HTTPS_SELFSIGNED]}" "$dir/logs/apache-error.log"
wait_for_port faultserver "${port[FAULT]}" "$dir/logs/faultserver.log"
# The Unix sockets are bound before the port listens: both must answer now.
for address in "$fault_socket" "@$fault_abstract"; do
  /usr/bin/python3 -c "import socket,sys; a=sys.argv[1]; s=socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect('\0'+a[1:] if a[0]=='@' else a)" \
    "$address" 2>/dev/null || { tail -n 20 "$dir/logs/faultserver.log" >&2; bash "$here/stop.sh" "$dir" >/dev/null 2>&1
                               fail "the fault server does not answer on the Unix socket $address"; }
done
wait_for_port ntlmserver "${port[HTTP_NTLM]}" "$dir/logs/ntlmserver.log"
wait_for_port squid "${port[PROXY_NTLM]}" "$dir/logs/squid-cache.log"
wait_for_port nginx "${port[H2]}" "$dir/logs/nginx-error.log"
wait_for_port nginx "${port[MTLS]}" "$dir/logs/nginx-error.log"
wait_for_port nginx "${port[PROXY_MTLS]}" "$dir/logs/nginx-error.log"
wait_for_port squid "${port[PROXY_TLS]}" "$dir/logs/squid-cache.log"
wait_for_port danted "${port[SOCKS]}" "$dir/logs/danted.log"
wait_for_port danted_login "${port[SOCKS_AUTH]}" "$dir/logs/danted.log"
wait_for_port hypercorn "${port[SLOW_H2]}" "$dir/logs/hypercorn.log"
wait_for_port socksgss "${port[SOCKS_GSSAPI]}" "$dir/logs/socksgss.log"
wait_for_port socksgss "${port[SOCKS_GSSAPI_PROTECT]}" "$dir/logs/socksgss.log"
wait "$oauth2_setup_job" \
  || { tail -n 20 "$dir/logs/oauth2-setup.log" >&2; bash "$here/stop.sh" "$dir" >/dev/null 2>&1
       fail "the OAuth2 server's database, user or clients could not be set up (see $dir/logs/oauth2-setup.log)"; }
start_daemon oauth2 "$dir/logs/oauth2.log" env OAUTH2_DB="$dir/oauth2/db.sqlite3" \
  OAUTH2_ACCESS_TOKEN_SECONDS="$oauth2_token_seconds" \
  "$venv/bin/python" "$here/oauth2server.py" runserver "127.0.0.1:${port[OAUTH2]}" --noreload --skip-checks
wait_for_port oauth2 "${port[OAUTH2]}" "$dir/logs/oauth2.log"

# -- the description -------------------------------------------------------------------------
declare -A values=(
  [TESTENV_DIR]="$dir"
  [TESTENV_HOST]=127.0.0.1
  [TESTENV_HTTP_PORT]=${port[HTTP]}
  [TESTENV_HTTP_URL]="http://127.0.0.1:${port[HTTP]}"
  [TESTENV_HTTPS_PORT]=${port[HTTPS]}
  [TESTENV_HTTPS_URL]="https://localhost:${port[HTTPS]}"
  [TESTENV_HTTPS_H2_URL]="https://localhost:${port[HTTPS_H2]}"
  [TESTENV_HTTPS_WRONGHOST_PORT]=${port[HTTPS_WRONGHOST]}
  [TESTENV_HTTPS_SELFSIGNED_PORT]=${port[HTTPS_SELFSIGNED]}
  [TESTENV_CA_FILE]="$dir/tls/ca.pem"
  [TESTENV_OTHER_CA_FILE]="$dir/tls/other-ca.pem"
  [TESTENV_SELFSIGNED_CERT]="$dir/tls/selfsigned.pem"
  [TESTENV_MTLS_URL]="https://localhost:${port[MTLS]}"
  [TESTENV_CLIENT_CERT]="$dir/tls/xhr-client.pem"
  [TESTENV_CLIENT_KEY]="$dir/tls/xhr-client.key"
  [TESTENV_CLIENT_KEY_ENCRYPTED]="$dir/tls/xhr-client-encrypted.key"
  [TESTENV_CLIENT_CERT_DER]="$dir/tls/xhr-client.der"
  [TESTENV_CLIENT_KEY_DER]="$dir/tls/xhr-client-key.der"
  [TESTENV_CLIENT_P12]="$dir/tls/xhr-client.p12"
  [TESTENV_CLIENT_PASSWORD]=$client_password
  [TESTENV_OTHER_CLIENT_CERT]="$dir/tls/other-client.pem"
  [TESTENV_OTHER_CLIENT_KEY]="$dir/tls/other-client.key"
  [TESTENV_LOCALHOST_PIN]=$localhost_pin
  [TESTENV_LOCALHOST_PUBKEY]="$dir/tls/localhost-pubkey.pem"
  [TESTENV_LOCALHOST_PUBKEY_DER]="$dir/tls/localhost-pubkey.der"
  [TESTENV_FAULT_PORT]=${port[FAULT]}
  [TESTENV_FAULT_URL]="http://127.0.0.1:${port[FAULT]}"
  [TESTENV_FAULT_UNIX_SOCKET]=$fault_socket
  [TESTENV_FAULT_ABSTRACT_SOCKET]="@$fault_abstract"
  [TESTENV_KRB5_ALT_SERVICE]=ALT
  [TESTENV_FILES_PATTERN]="byte i of /files/* and of the fault server's /bytes and /drip is i % 251"
  [TESTENV_USER]=$user
  [TESTENV_PASSWORD]=$password
  [TESTENV_USER2]=$user2
  [TESTENV_PASSWORD2]=$password2
  [TESTENV_BASIC_URL]="http://127.0.0.1:${port[HTTP]}/basic/echo"
  [TESTENV_DIGEST_URL]="http://127.0.0.1:${port[HTTP]}/digest/echo"
  [TESTENV_DIGEST_FILE_URL]="http://127.0.0.1:${port[HTTP]}/digest/files/10k"
  [TESTENV_DIGEST_REALM]=$digest_realm
  [TESTENV_NEGOTIATE_URL]="http://localhost:${port[HTTP]}/negotiate/echo"
  [TESTENV_KRB_HOST]=localhost
  [TESTENV_KRB5_REALM]=$realm
  [TESTENV_KDC_PORT]=${port[KDC]}
  [TESTENV_KRB5_PRINCIPAL]="$user@$realm"
  [TESTENV_KRB5_PASSWORD]=$password
  [TESTENV_KEYTAB]="$dir/krb5/http.keytab"
  [TESTENV_KRB5_CONFIG]=$KRB5_CONFIG
  [KRB5_CONFIG]=$KRB5_CONFIG
  [TESTENV_KRB5CCNAME]="FILE:$dir/krb5/ccache_test"
  [TESTENV_KRB5CCNAME_EMPTY]="FILE:$dir/krb5/ccache_empty"
  [TESTENV_NTLM_DOMAIN]=$ntlm_domain
  [TESTENV_HTTP_NTLM_PORT]=${port[HTTP_NTLM]}
  [TESTENV_HTTP_NTLM_URL]="http://127.0.0.1:${port[HTTP_NTLM]}"
  [TESTENV_PROXY_PORT]=${port[PROXY]}
  [TESTENV_PROXY_BASIC_PORT]=${port[PROXY_BASIC]}
  [TESTENV_PROXY_DIGEST_PORT]=${port[PROXY_DIGEST]}
  [TESTENV_PROXY_NTLM_PORT]=${port[PROXY_NTLM]}
  [TESTENV_PROXY_USER]=$proxy_user
  [TESTENV_PROXY_PASSWORD]=$proxy_password
  [TESTENV_PROXY_NTLM_VERIFIES_PASSWORD]=1
  [TESTENV_SQUID_ACCESS_LOG]="$dir/logs/squid-access.log"
  [TESTENV_SQUID_HEADERS_LOG]="$dir/logs/squid-headers.log"
  [TESTENV_PROXY_TLS_PORT]=${port[PROXY_TLS]}
  [TESTENV_PROXY_TLS_PIN]=$proxy_pin
  [TESTENV_PROXY_TLS_PUBKEY]="$dir/tls/proxy-pubkey.pem"
  [TESTENV_PROXY_MTLS_PORT]=${port[PROXY_MTLS]}
  [TESTENV_SOCKS_PORT]=${port[SOCKS]}
  [TESTENV_SOCKS_AUTH_PORT]=${port[SOCKS_AUTH]}
  [TESTENV_SOCKS_USER]=$socks_user
  [TESTENV_SOCKS_PASSWORD]=$socks_password
  [TESTENV_SOCKS_GSSAPI_PORT]=${port[SOCKS_GSSAPI]}
  [TESTENV_SOCKS_GSSAPI_CLOSE_PORT]=${port[SOCKS_GSSAPI_CLOSE]}
  [TESTENV_SOCKS_GSSAPI_GARBAGE_PORT]=${port[SOCKS_GSSAPI_GARBAGE]}
  [TESTENV_SOCKS_GSSAPI_OVERSIZED_PORT]=${port[SOCKS_GSSAPI_OVERSIZED]}
  [TESTENV_SOCKS_GSSAPI_NOMETHOD_PORT]=${port[SOCKS_GSSAPI_NOMETHOD]}
  [TESTENV_SOCKS_GSSAPI_SILENT_PORT]=${port[SOCKS_GSSAPI_SILENT]}
  [TESTENV_SOCKS_GSSAPI_PROTECT_PORT]=${port[SOCKS_GSSAPI_PROTECT]}
  [TESTENV_SOCKS_GSSAPI_LOG]="$dir/logs/socksgss.log"
  [TESTENV_SOCKS_GSSAPI_SERVICE]=rcmd
  [TESTENV_KRB5_REFUSED_PRINCIPAL]="$refused_user@$realm"
  [TESTENV_KRB5_REFUSED_PASSWORD]=$refused_password
  [TESTENV_H2_PORT]=${port[H2]}
  [TESTENV_H2_URL]="https://localhost:${port[H2]}"
  [TESTENV_H2_LOG]="$dir/logs/h2-access.log"
  [TESTENV_H2_LOG_FORMAT]=$h2_log_format
  [TESTENV_SLOW_H2_PORT]=${port[SLOW_H2]}
  [TESTENV_SLOW_H2_URL]="https://localhost:${port[SLOW_H2]}"
  [TESTENV_OAUTH2_PORT]=${port[OAUTH2]}
  [TESTENV_OAUTH2_URL]="http://127.0.0.1:${port[OAUTH2]}"
  [TESTENV_OAUTH2_TOKEN_URL]="http://127.0.0.1:${port[OAUTH2]}/o/token/"
  [TESTENV_OAUTH2_REVOKE_URL]="http://127.0.0.1:${port[OAUTH2]}/o/revoke_token/"
  [TESTENV_OAUTH2_RESOURCE_URL]="http://127.0.0.1:${port[OAUTH2]}/api/me"
  [TESTENV_OAUTH2_STATS_URL]="http://127.0.0.1:${port[OAUTH2]}/stats"
  [TESTENV_OAUTH2_STATS_RESET_URL]="http://127.0.0.1:${port[OAUTH2]}/stats/reset"
  [TESTENV_OAUTH2_PASSWORD_CLIENT_ID]=$oauth2_password_client
  [TESTENV_OAUTH2_PASSWORD_CLIENT_SECRET]=$oauth2_password_secret
  [TESTENV_OAUTH2_SERVICE_CLIENT_ID]=$oauth2_service_client
  [TESTENV_OAUTH2_SERVICE_CLIENT_SECRET]=$oauth2_service_secret
  [TESTENV_OAUTH2_ACCESS_TOKEN_SECONDS]=$oauth2_token_seconds
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
