/*
 * SOCKS5 with Kerberos (GSS-API, RFC 1961), which libcurl 7.88 cannot do: it offers the
 * method and then ends the handshake ("SOCKS5 GSSAPI per-message authentication is not
 * supported"). The library runs the handshake itself, on a thread of each connection's own
 * (never the engine's), and hands libcurl a loopback connection that leads to the origin
 * once the handshake is done.
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
   told (its data, CURLOPT_OPENSOCKETDATA) to call cxhr_socks_gss_open. The caller points
   CURLOPT_CONNECT_TO at the proxy, so that libcurl resolves the proxy's name. */
CURLcode cxhr_easy_set_socks_gss(CURL *handle, cxhr_socks_gss *tunnel);

/* Starts a connection to the handle's origin through the proxy at `address` (else at the
   proxy name's other addresses) on a thread of its own, which runs the handshake within the
   tunnel's time with GSS-API pointed at the FILE cache `ccache` (NULL: the default one), and
   returns at once the socket libcurl is to connect to the address the call leaves in
   `address` (a loopback listener of that thread); -1 with the failure kept when that cannot
   be set up. A failed handshake keeps its failure, then closes libcurl's connection. Engine
   thread (it reads the handle's URL). */
int cxhr_socks_gss_open(cxhr_socks_gss *tunnel, struct curl_sockaddr *address, const char *ccache);

/* How the handle's last connection failed (a handshake's failure wins over an address of the
   proxy that cannot be reached), cleared by the call and by the next open:
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
