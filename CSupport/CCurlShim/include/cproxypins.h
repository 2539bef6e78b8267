/*
 * The check of an HTTPS proxy's public key against pins. libcurl 7.88 takes
 * CURLOPT_PROXY_PINNEDPUBLICKEY but never checks it (a wrong pin passes), so the library
 * checks the key itself, in OpenSSL's certificate verification of the proxy's handshake.
 */
#ifndef CPROXYPINS_H
#define CPROXYPINS_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* The public keys a proxy may have: SHA-256 hashes of DER SubjectPublicKeyInfos (32 bytes
   each, back to back) and whole DER SubjectPublicKeyInfos (a key file's), either may be
   empty. Whether the last handshake met another key is kept for the failure's text. */
typedef struct cxhr_proxy_pins cxhr_proxy_pins;

/* A copy of the hashes and key; NULL when out of memory. */
cxhr_proxy_pins *cxhr_proxy_pins_new(const uint8_t *hashes, size_t hash_count, const uint8_t *key, size_t key_length);
void cxhr_proxy_pins_free(cxhr_proxy_pins *pins);

/* Whether a handshake since the last call met a proxy key that is none of the pins; clears it. */
bool cxhr_proxy_pins_take_mismatch(cxhr_proxy_pins *pins);

/* Makes the handle check its HTTPS proxy's key against `pins` (kept by the caller while the
   handle carries them). The proxy's TLS context is told from the server's by a mark libcurl
   sets on the proxy's alone: CURLSSLOPT_ALLOW_BEAST in CURLOPT_PROXY_SSL_OPTIONS, which
   leaves OpenSSL's SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS set (it matters only to TLS 1.0 CBC
   ciphers, which OpenSSL 3 no longer offers by default). TLS session reuse is turned off, as
   a resumed handshake shows no certificate to check. */
CURLcode cxhr_easy_set_proxy_pins(CURL *handle, cxhr_proxy_pins *pins);

#pragma GCC visibility pop

#endif
