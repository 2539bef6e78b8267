#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine with Swift lacks to build CurlXHR and run its
# tests: libcurl, OpenSSL, MIT Kerberos, SQLite, libpsl, zlib, brotli, zstd and libpacparser
# headers (libpacparser-dev brings the library, loaded when the first PAC file is used), Node.js for the
# cache conformance suite, and the loopback test servers' packages (not with --build-only,
# which is all the demo needs).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libcurl4-openssl-dev libssl-dev libkrb5-dev libsqlite3-dev libpsl-dev zlib1g-dev libbrotli-dev libzstd-dev
          libpacparser-dev patchelf pkg-config)
# The tests also render the man page (man -l) and list the C library's symbols (nm), and
# scripts/cache-tests.sh runs the RFC 9111 conformance suite under Node.js; scripts/watch.sh
# prints a hung test run's stacks with gdb.
if [ "${1:-}" != --build-only ]; then packages+=(man-db groff-base binutils nodejs gdb); fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" != --build-only ]; then bash Tests/Servers/install-deps.sh; fi
