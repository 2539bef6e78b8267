/*
 * SOCKS5 with Kerberos (GSS-API, RFC 1961), which libcurl 7.88 cannot do: it offers the
 * method and then ends the handshake ("SOCKS5 GSSAPI per-message authentication is not
 * supported"). The library runs the handshake itself, in libcurl's open-socket callback, and
 * hands libcurl a connection that already leads to the origin.
 */
#ifndef CSOCKSGSS_H
#define CSOCKSGSS_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* A handle's way through one SOCKS5 proxy with GSS-API: the proxy's host (its name as given,
   for the service principal SERVICE@HOST), the service ("rcmd" when NULL; a name with a '/'
   is a whole principal, as curl takes it), whether the proxy resolves the origin's name
   (socks5h) and the time one connection's handshake may take. The origin is read from the
   handle's URL as each connection opens. NULL when out of memory. */
typedef struct cxhr_socks_gss cxhr_socks_gss;
cxhr_socks_gss *cxhr_socks_gss_new(CURL *handle, const char *proxy_host, const char *service, bool remote_resolve,
                                   long timeout_ms);
void cxhr_socks_gss_free(cxhr_socks_gss *tunnel);

/* Makes the handle's connections go through the tunnel: libcurl's open-socket callback is
   told (its data, CURLOPT_OPENSOCKETDATA) to call cxhr_socks_gss_open, and the socket it is
   handed is already connected (CURLOPT_SOCKOPTFUNCTION). The caller points CURLOPT_CONNECT_TO
   at the proxy, so that libcurl resolves the proxy's name and offers each of its addresses. */
CURLcode cxhr_easy_set_socks_gss(CURL *handle, cxhr_socks_gss *tunnel);

/* Connects to the proxy at `address`, runs the handshake to the handle's origin within the
   tunnel's time, and returns the socket libcurl is to use (connected, or to connect to the
   address the call leaves in `address`), or -1 with the failure kept. Engine thread. */
int cxhr_socks_gss_open(cxhr_socks_gss *tunnel, struct curl_sockaddr *address);

/* How opening failed since the last call or successful open (a handshake's failure wins
   over an address of the proxy that cannot be reached), cleared by the call:
   CXHR_SOCKS_GSS_NONE, or the kind with its text in `text`. */
enum {
  CXHR_SOCKS_GSS_NONE = 0,
  CXHR_SOCKS_GSS_UNREACHABLE = 1, /* the proxy could not be connected to */
  CXHR_SOCKS_GSS_HANDSHAKE = 2,   /* the proxy refused, broke or garbled the handshake */
  CXHR_SOCKS_GSS_TIMEOUT = 3,     /* the proxy did not answer in time */
};
int cxhr_socks_gss_take_failure(cxhr_socks_gss *tunnel, char *text, size_t size);

#pragma GCC visibility pop

#endif
