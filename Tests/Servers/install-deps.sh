#!/usr/bin/env bash
# Installs what the loopback test servers need: Debian packages (Apache with mod_auth_gssapi,
# an MIT KDC, squid, nginx for HTTP/2 over TLS, brotli and zstd for the fault server's /encoded,
# libpacparser for the PAC tests, python3-gssapi for the SOCKS5 GSS-API proxy, …) and a Python virtual environment with PyPI's pyspnego, the NTLM acceptor of the NTLM server
# and of squid's NTLM helper, hypercorn, the HTTP/2 server of the slow app (h2app.py), and
# django-oauth-toolkit (with Django 5.2 and oauthlib), the OAuth2 server (oauth2server.py).
#
#   install-deps.sh               install what is missing (quick when nothing is)
#   install-deps.sh --venv-path   print where the virtual environment lives
#
# The virtual environment is /opt/curlxhr-testenv for root (so squid's and Apache's
# unprivileged users can run it), else ~/.cache/curlxhr-testenv; CURLXHR_TESTENV_VENV
# overrides both.
set -euo pipefail

if [ -n "${CURLXHR_TESTENV_VENV:-}" ]; then
  venv=$CURLXHR_TESTENV_VENV
elif [ "$(id -u)" -eq 0 ]; then
  venv=/opt/curlxhr-testenv
else
  venv=${XDG_CACHE_HOME:-$HOME/.cache}/curlxhr-testenv
fi
if [ "${1:-}" = --venv-path ]; then
  echo "$venv"
  exit 0
fi

packages=(apache2 apache2-utils libapache2-mod-auth-gssapi openssl python3 python3-venv python3-cryptography curl
          krb5-kdc krb5-admin-server krb5-user squid nginx python3-brotli python3-zstandard dante-server
          libpacparser1 libpacparser-dev python3-gssapi)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # The packages' own services are not wanted: the tests start their own instances.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  for service in apache2 squid nginx krb5-kdc krb5-admin-server danted; do
    $sudo service "$service" stop >/dev/null 2>&1 || true
  done
fi

if ! "$venv/bin/python" -c "import spnego" 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check pyspnego
fi
hypercorn_version=0.18.0  # needs Python 3.10 or later
if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("hypercorn"))' 2>/dev/null)" \
     != "$hypercorn_version" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "hypercorn==$hypercorn_version"
fi
oauth2_toolkit_version=3.4.1 django_series=5.2  # the toolkit brings oauthlib too
if [ "$("$venv/bin/python" -c 'import importlib.metadata as m
print(m.version("django-oauth-toolkit"), ".".join(m.version("django").split(".")[:2]))' 2>/dev/null)" \
     != "$oauth2_toolkit_version $django_series" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "django-oauth-toolkit==$oauth2_toolkit_version" \
    "django~=$django_series.0"
fi
