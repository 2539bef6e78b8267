/*
 * curlxhr.h — the C interface of CurlXHR, an XHR-style HTTP request object over libcurl,
 * modelled on BlackBerry Dynamics' GDHttpRequest.
 *
 * Link with -lcurlxhr (see curlxhr.pc). Every function may be called from any thread; a
 * synchronous cxhr_send blocks only its caller. Handles are opaque tokens: a NULL or
 * destroyed handle is refused (false / NULL / 0), never dereferenced.
 *
 * Memory: strings returned by the library belong to the request and stay valid until the
 * request is re-opened or destroyed; the receive buffer stays valid until the next call that
 * reads it (cxhr_get_receive_buffer again, cxhr_open, cxhr_request_destroy). Never free them.
 * The exceptions are cxhr_cookies_list, whose copies are the caller's, freed with
 * cxhr_cookies_free, and cxhr_curl_command, whose string the caller frees with free().
 */
#ifndef CURLXHR_H
#define CURLXHR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CURLXHR_VERSION_MAJOR 0
#define CURLXHR_VERSION_MINOR 2
#define CURLXHR_VERSION_PATCH 0
#define CURLXHR_VERSION "0.2.0"
/* The version as one number, 0xXXYYZZ, for comparisons. */
#define CURLXHR_VERSION_NUM \
  ((CURLXHR_VERSION_MAJOR << 16) | (CURLXHR_VERSION_MINOR << 8) | CURLXHR_VERSION_PATCH)
/* True when the header is at least version x.y.z. */
#define CURLXHR_AT_LEAST_VERSION(x, y, z) (CURLXHR_VERSION_NUM >= (((x) << 16) | ((y) << 8) | (z)))

#if defined(__GNUC__) || defined(__clang__)
#define CXHR_EXTERN __attribute__((visibility("default")))
#else
#define CXHR_EXTERN
#endif

#if !defined(__clang__) && !defined(_Nullable)
#define _Nullable
#define _Nonnull
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A request object. Opaque. */
typedef struct cxhr_request cxhr_request;

/* Ready states, numbered as GDHttpRequest_state_t. */
typedef enum {
  CXHR_UNSENT = 0,           /* created, never opened */
  CXHR_OPENED = 1,           /* cxhr_open succeeded */
  CXHR_SENT = 2,             /* cxhr_send handed the request to the engine */
  CXHR_HEADERS_RECEIVED = 3, /* the final response's headers are in */
  CXHR_LOADING = 4,          /* body bytes are arriving (reported again per chunk) */
  CXHR_DONE = 5              /* complete, failed or aborted */
} cxhr_state;

/* Authentication schemes for cxhr_open's auth argument, as strings. */
#define CXHR_AUTH_BASIC "BASIC"
#define CXHR_AUTH_DIGEST "DIGEST"
#define CXHR_AUTH_NTLM "NTLM"
#define CXHR_AUTH_NEGOTIATE "NEGOTIATE"
/* The strongest of NTLM, Digest and Basic the server's 401 offers (curl's --anyauth). */
#define CXHR_AUTH_ANY "ANY"

/*
 * Called for every ready-state change of an asynchronous request, on the library's callback
 * queue; inside it cxhr_get_state returns the state being reported. The request may be
 * re-opened, aborted or destroyed from inside the callback.
 */
typedef void (*cxhr_status_callback)(cxhr_request *_Nonnull request, void *_Nullable user_data);

/* Creates a request in CXHR_UNSENT. Returns NULL only when out of memory. */
CXHR_EXTERN cxhr_request *_Nullable cxhr_request_create(void);

/*
 * Destroys a request: aborts it if in flight (no callback runs after this returns, unless
 * called from inside that request's own callback, which then finishes normally) and releases
 * everything it owns. NULL and destroyed handles are ignored.
 */
CXHR_EXTERN void cxhr_request_destroy(cxhr_request *_Nullable request);

/*
 * Sets the callback for asynchronous requests (NULL removes it). user_data is passed back
 * untouched. Returns false for a NULL or destroyed handle.
 */
CXHR_EXTERN bool cxhr_set_status_callback(cxhr_request *_Nullable request,
                                          cxhr_status_callback _Nullable callback,
                                          void *_Nullable user_data);

/*
 * Prepares a request; allowed in every state (a request in flight is aborted first).
 * method: "GET", "POST", … or any token; url: absolute http or https; async: report states to
 * the callback and return from cxhr_send at once; user/password: server credentials or NULL;
 * auth: one of CXHR_AUTH_* (case-insensitive) or NULL for Basic.
 * Returns false (see cxhr_get_last_error) for a malformed method or URL or unknown scheme.
 */
CXHR_EXTERN bool cxhr_open(cxhr_request *_Nullable request, const char *_Nullable method,
                           const char *_Nullable url, bool async, const char *_Nullable user,
                           const char *_Nullable password, const char *_Nullable auth);

/* ---- pre-send switches: CXHR_UNSENT, CXHR_OPENED and CXHR_DONE; they apply to the next
 *      send and stay with the request across cxhr_open. Each returns false (with a reason
 *      in cxhr_get_last_error) in the other states and for a NULL or destroyed handle. ---- */

/* Accepts a certificate whose name does not match the host; the chain is still verified. */
CXHR_EXTERN bool cxhr_disable_host_verification(cxhr_request *_Nullable request);

/* Accepts any certificate and any host name. */
CXHR_EXTERN bool cxhr_disable_peer_verification(cxhr_request *_Nullable request);

/* Returns 3xx responses instead of following them. */
CXHR_EXTERN bool cxhr_disable_follow_location(cxhr_request *_Nullable request);

/* The addresses a request connects to: any (the default), IPv4 only (curl's -4), IPv6 only (-6). */
typedef enum { CXHR_IP_ANY = 0, CXHR_IP_V4 = 4, CXHR_IP_V6 = 6 } cxhr_ip_version;

/*
 * Connects only to the host's addresses of that version (CURLOPT_IPRESOLVE): a name without
 * one fails to resolve, a literal address of the other version fails to connect. False for a
 * value that is no cxhr_ip_version, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_ip_version(cxhr_request *_Nullable request, cxhr_ip_version version);

/* TLS protocol versions for cxhr_set_tls_version; CXHR_TLS_DEFAULT leaves the bound to libcurl. */
typedef enum { CXHR_TLS_DEFAULT = 0, CXHR_TLS_1_0 = 10, CXHR_TLS_1_1 = 11, CXHR_TLS_1_2 = 12,
               CXHR_TLS_1_3 = 13 } cxhr_tls_version;

/*
 * The lowest and highest TLS versions the request's https connections may use
 * (CURLOPT_SSLVERSION; curl's --tlsv1.2, --tlsv1.3, --tls-max). A server that cannot meet them
 * fails the handshake (CXHR_FAILURE_TLS). False for a value that is no cxhr_tls_version, a
 * minimum above the maximum, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_tls_version(cxhr_request *_Nullable request, cxhr_tls_version minimum,
                                      cxhr_tls_version maximum);

/*
 * Sends the credentials of cxhr_open, and Authorization and Cookie fields set by the caller,
 * on to redirect targets of other origins too (curl's --location-trusted).
 */
CXHR_EXTERN bool cxhr_enable_location_trusted(cxhr_request *_Nullable request);

/*
 * The schemes the request may use and those a redirect may lead to, each a comma-separated
 * list of "http" and "https" (curl's --proto and --proto-redir); redirect_schemes NULL: both,
 * "": none. Another scheme fails the send (status text 'Protocol "http" not supported or
 * disabled in libcurl'). False for NULL or empty schemes, another name, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_allowed_schemes(cxhr_request *_Nullable request, const char *_Nullable schemes,
                                          const char *_Nullable redirect_schemes);

/* Sends no cookies and stores none for this request. */
CXHR_EXTERN bool cxhr_disable_cookie_handling(cxhr_request *_Nullable request);

/*
 * Sends the request through the HTTP proxy at host:port (HTTPS through a CONNECT tunnel,
 * the origin still verified). user NULL sends no proxy credentials; auth: one of
 * CXHR_AUTH_* or NULL for Basic (CXHR_AUTH_NEGOTIATE uses Kerberos tickets). False for a
 * bad host or port, an unknown scheme, or a request in flight.
 */
CXHR_EXTERN bool cxhr_enable_http_proxy(cxhr_request *_Nullable request, const char *_Nullable host,
                                        int port, const char *_Nullable user,
                                        const char *_Nullable password, const char *_Nullable auth);

/* Sends the request directly again. */
CXHR_EXTERN bool cxhr_disable_http_proxy(cxhr_request *_Nullable request);

/*
 * Sends the request through the proxy at url (curl's -x): http:// (the default), https:// (TLS
 * to the proxy), socks4://, socks4a://, socks5:// or socks5h:// (names resolved by the proxy);
 * port 1080 (443 for https) unless given. user and password (NULL: none, or those in the URL)
 * log in to an HTTP proxy with auth as cxhr_enable_http_proxy, to SOCKS5 with RFC 1929; SOCKS4
 * sends the user as its user id. auth "NEGOTIATE" with socks5:// or socks5h:// is Kerberos
 * (GSS-API, RFC 1961), which the library runs itself (libcurl 7.88 cannot): the credential
 * cache's tickets when user is NULL, else tickets obtained for the principal user with
 * password; no per-message protection; the service is rcmd/proxyhost unless
 * cxhr_set_proxy_service_name names another. A proxy that cannot be reached or refuses the
 * login (or breaks the GSS-API handshake) ends the send with CXHR_FAILURE_PROXY. False for
 * NULL, a URL that is not a proxy's, CR, LF, a SOCKS4 password, an auth SOCKS does not have,
 * or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy(cxhr_request *_Nullable request, const char *_Nullable url, const char *_Nullable user,
                                const char *_Nullable password, const char *_Nullable auth);

/*
 * Reaches these hosts without the proxy (NO_PROXY syntax: names or addresses separated by
 * commas, each with its subdomains; "*" all; "" none). False for NULL, CR, LF, or a request
 * in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy_bypass(cxhr_request *_Nullable request, const char *_Nullable hosts);

/*
 * Sends "name: value" to the proxy only (in the CONNECT of an https request); the request then
 * has a proxy connection of its own. False for NULLs, a name that is no token, CR, LF, or a
 * request in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy_header(cxhr_request *_Nullable request, const char *_Nullable name,
                                       const char *_Nullable value);

/*
 * Trusts only the CAs in this PEM file for an https:// proxy's certificate (else the system
 * store). False for NULL, an unreadable file, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy_ca_certificate_file(cxhr_request *_Nullable request, const char *_Nullable path);

/* Accepts any certificate from an https:// proxy; the origin's is verified as before. */
CXHR_EXTERN bool cxhr_disable_proxy_peer_verification(cxhr_request *_Nullable request);

/*
 * Chooses each hop's proxy with the proxy auto-config (PAC) file at location: a path or
 * file:// URL of a readable regular file, or an http:// or https:// URL (fetched directly,
 * kept for its max-age, five minutes without one). FindProxyForURL's answer is followed in
 * order (DIRECT, PROXY, HTTPS, SOCKS/SOCKS4, SOCKS5 host:port), the next entry tried when a
 * proxy cannot be reached. A PAC file that cannot be read or fetched, does not run or throws
 * ends the send with CXHR_FAILURE_PROXY and a text naming it. Replaces cxhr_set_proxy's proxy.
 * False for NULL, an empty location, CR, LF, an unreadable or missing file, another scheme,
 * or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy_auto_config(cxhr_request *_Nullable request, const char *_Nullable location);

/*
 * Process-wide: the PAC file of requests that make no proxy choice of their own (no
 * cxhr_set_proxy, cxhr_enable_http_proxy, cxhr_disable_http_proxy or
 * cxhr_set_proxy_auto_config). NULL clears it. False, changing nothing, for a location
 * cxhr_set_proxy_auto_config would refuse.
 */
CXHR_EXTERN bool cxhr_set_default_proxy_auto_config(const char *_Nullable location);

/*
 * Process-wide: whether requests without a proxy of their own use http_proxy, https_proxy,
 * all_proxy and no_proxy from the environment, as the curl tool does. Default false.
 */
CXHR_EXTERN void cxhr_set_use_environment_proxy(bool use);
CXHR_EXTERN bool cxhr_get_use_environment_proxy(void);

/*
 * Limits each phase of the request, in seconds (0: no limit). connect_s: until the connection
 * (and for https its TLS handshake) is up; headers_s: from the request sent (head and whole
 * body) to the response's head; idle_s: the longest time without a byte sent or received;
 * total_s: the whole request (a timeout_s given to cxhr_send replaces it for that send). A limit
 * that runs out ends the request in CXHR_DONE, status 0, CXHR_FAILURE_TIMEOUT and a status text
 * naming the phase ("connect", "header", "idle" or "total"). False for a negative or
 * non-finite value.
 */
CXHR_EXTERN bool cxhr_set_timeouts(cxhr_request *_Nullable request, double connect_s, double headers_s,
                                   double idle_s, double total_s);

/*
 * Asks for bytes start to end of the body (both included; end < 0: to its end) with a Range
 * header: 206 with those bytes where the server honours it, 200 with the whole body where it
 * does not, 416 for a range beyond the end. False for a negative start or an end before it;
 * a send with a body then refuses it (libcurl would send it as the body's Content-Range).
 */
CXHR_EXTERN bool cxhr_set_range(cxhr_request *_Nullable request, int64_t start, int64_t end);

/*
 * Streams the body of a 2xx response into the file at path instead of the receive buffer:
 * written as path.part, renamed over path when the response completes (a failure leaves the
 * .part, a response other than 2xx leaves path alone and its body goes to the receive buffer).
 * CXHR_LOADING is still reported; the receive buffer stays empty. resume: a send that finds a
 * .part and its validator (path.part.validator) asks for the rest with Range and If-Range,
 * appends a 206 from that byte, starts over on a 200, and fails on any other range. NULL path:
 * bodies go to the receive buffer again. False (CXHR_ERROR_FILE_UNWRITABLE) when the folder is
 * missing or not writable or path is a folder.
 */
CXHR_EXTERN bool cxhr_set_response_file(cxhr_request *_Nullable request, const char *_Nullable path, bool resume);

/* How far a send has come: body bytes sent and to send, received and to receive (-1: unknown). */
typedef struct {
  int64_t bytes_sent, bytes_to_send, bytes_received, bytes_to_receive;
} cxhr_progress;

typedef void (*cxhr_progress_callback)(cxhr_request *_Nonnull request, void *_Nullable user_data);

/*
 * Calls callback on the library's callback thread as an asynchronous request's body goes out
 * and comes in (coalesced; the last call, just before CXHR_DONE, sees the final counts); read
 * cxhr_get_progress inside it. NULL stops the calls. Not called for synchronous sends.
 */
CXHR_EXTERN bool cxhr_set_progress_callback(cxhr_request *_Nullable request, cxhr_progress_callback _Nullable callback,
                                            void *_Nullable user_data);

/*
 * Fills *progress (Swift's getProgress()): bytes_to_send is 0 without a body and -1 until
 * known (a multipart form); bytes_received counts the body after decoding; bytes_to_receive
 * is -1 before the head, without Content-Length, or for a compressed body (unless a
 * Content-Size header gives it). False for a NULL or destroyed request or progress.
 */
CXHR_EXTERN bool cxhr_get_progress(cxhr_request *_Nullable request, cxhr_progress *_Nullable progress);

/*
 * Tries the request again up to count times after the first attempt when it got no response
 * (connection failed or broke, connect/headers/idle limit before the head) or a 429 or 503;
 * GET, HEAD, PUT, DELETE and OPTIONS only. Retry-After up to 60 s is honoured, else the n-th
 * retry waits backoff_s * 2^(n-1) with a jitter of +-50 %. Invisible to the ready states.
 * False for a negative count or backoff.
 */
CXHR_EXTERN bool cxhr_set_retries(cxhr_request *_Nullable request, int count, double backoff_s);

/*
 * Receives the body as the server encoded it: no Accept-Encoding of the library's own and no
 * decoding. (By default a request asks for gzip, deflate, br and zstd and decodes them.)
 */
CXHR_EXTERN bool cxhr_disable_content_decoding(cxhr_request *_Nullable request);

/*
 * Limits the response body to bytes (after decoding; 0: none). A body past it ends in DONE,
 * status 0, CXHR_FAILURE_RESPONSE and a status text naming the limit; in memory and into a
 * response file alike. False for a negative limit or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_max_response_size(cxhr_request *_Nullable request, int64_t bytes);

/*
 * Limits how fast the response body comes in (download_bps) and the request body goes out
 * (upload_bps), in bytes per second; 0: no limit (the default), as curl's --limit-rate. The
 * library holds the rate itself: from the first body bytes on, a body never moves faster than
 * the limit on average, whatever the size of the pieces the network delivers; a rate pause is
 * no stall for the idle limit, the total timeout still applies, and cxhr_abort ends it at once.
 * A multipart form's upload gets libcurl's own limit. False for a negative rate or a request
 * in flight.
 */
CXHR_EXTERN bool cxhr_set_rate_limits(cxhr_request *_Nullable request, int64_t download_bps, int64_t upload_bps);

/*
 * Follows at most count redirects in one send (default 20; -1: no limit; 0: the first redirect
 * fails). One more ends in DONE, status 0, CXHR_FAILURE_REDIRECTS and the status text
 * "Maximum (N) redirects followed". False for a count below -1 or above 10000, or a request in
 * flight.
 */
CXHR_EXTERN bool cxhr_set_max_redirects(cxhr_request *_Nullable request, int count);

/* Routing: where the connections go, and whether they are the request's own. */

/*
 * Connects to given addresses instead of those a host resolves to, as curl's --resolve: count
 * entries "HOST:PORT:ADDRESS[,ADDRESS]" (HOST a host name or "*", PORT 1-65535, each ADDRESS a
 * numerical IPv4 or IPv6 address, brackets allowed; "+" before HOST is accepted, "-HOST:PORT"
 * takes an earlier entry out). The URL's host still gives the Host field and the name TLS
 * checks; the entries hold for this request only. count 0 removes them. False for NULL entries
 * with a count, a NULL entry, CR, LF or NUL, a bad host, port or address, no address, more
 * than 1000 entries or one over 4096 bytes, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_resolve(cxhr_request *_Nullable request,
                                  const char *_Nullable const *_Nullable entries, size_t count);

/*
 * Connects to another host and port than the URL's, as curl's --connect-to: count entries
 * "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT" (empty HOST or PORT: any; empty CONNECT-TO parts:
 * the request's own; IPv6 addresses in brackets; the first match is used). The URL's host still
 * gives the Host field and the name TLS checks. count 0 removes them. False as
 * cxhr_set_resolve for a list it cannot read or a bad entry, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_connect_to(cxhr_request *_Nullable request,
                                     const char *_Nullable const *_Nullable entries, size_t count);

/*
 * Connects through a Unix domain socket instead of TCP (curl's --unix-socket): a path, or
 * "@NAME" for NAME in the abstract namespace (--abstract-unix-socket); NULL goes back to TCP.
 * A missing or refusing socket ends the send in DONE, status 0, CXHR_FAILURE_CONNECTION. False
 * for an empty path or name, CR or LF, one over 107 bytes, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_unix_socket(cxhr_request *_Nullable request, const char *_Nullable path);

/*
 * Sends from a network interface ("lo", "if!lo") or a local numerical address (curl's
 * --interface); NULL lets the system choose. One that cannot be used ends the send in DONE,
 * status 0, CXHR_FAILURE_CONNECTION and a text naming it. False for an empty name, one of 16 bytes
 * or more, one with '/', ':', a space, CR or LF (not an address), curl's "host!NAME" (a name is
 * always an interface's), or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_interface(cxhr_request *_Nullable request, const char *_Nullable name);

/*
 * The Kerberos service Negotiate asks a ticket for (curl's --service-name; "HTTP" by default,
 * which NULL restores). False for an empty name, one with a space, '/', '@', CR or LF, one over
 * 255 bytes, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_service_name(cxhr_request *_Nullable request, const char *_Nullable name);

/*
 * The Kerberos service of the proxy (curl's --proxy-service-name, --socks5-gssapi-service):
 * "rcmd" for a SOCKS5 proxy's GSS-API and "HTTP" for an HTTP proxy's Negotiate by default,
 * which NULL restores. False for an empty name, one with a space, '/', '@', CR or LF, one over
 * 255 bytes, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_proxy_service_name(cxhr_request *_Nullable request, const char *_Nullable name);

/*
 * Every send of the request opens a connection of its own and closes it when it ends (mesibo's
 * persistent = false). False for a request in flight.
 */
CXHR_EXTERN bool cxhr_disable_connection_reuse(cxhr_request *_Nullable request);

/* Trusts only the CAs in the PEM file at path for this request. False if unreadable. */
CXHR_EXTERN bool cxhr_set_ca_certificate_file(cxhr_request *_Nullable request,
                                              const char *_Nullable path);

/*
 * Trusts only the CAs in the folder at path (named by subject hash, as openssl rehash makes
 * them; CURLOPT_CAPATH), with those of cxhr_set_ca_certificate_file if set too. False for NULL,
 * a path that is not a readable folder (a symbolic link to one included), or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_ca_certificate_path(cxhr_request *_Nullable request,
                                              const char *_Nullable path);

/* How a client certificate (and its key) is stored, for cxhr_set_client_certificate. */
typedef enum { CXHR_CERT_PEM = 0, CXHR_CERT_DER, CXHR_CERT_P12 } cxhr_cert_format;

/*
 * Shows the certificate at path to a server that asks for one (TLS client authentication;
 * curl's --cert, --cert-type, --key, --pass). key_path (NULL: in the certificate's file, or
 * a PKCS#12 file's own) has the certificate's format; password (NULL: none) unlocks an
 * encrypted key or a PKCS#12 file. An encrypted key without its password is refused, never
 * asked for on a terminal. A wrong password or format ends the send in DONE, status 0,
 * CXHR_FAILURE_TLS, a text naming the file (curl's exit 58). False for a NULL or unreadable
 * path or key path, CR, LF in a path, a key path with a PKCS#12 file, a value that is no
 * cxhr_cert_format, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_client_certificate(cxhr_request *_Nullable request, const char *_Nullable path,
                                             cxhr_cert_format format, const char *_Nullable key_path,
                                             const char *_Nullable password);

/*
 * As cxhr_set_client_certificate, for a PKCS#12 bundle of length bytes in memory (copied).
 * False for NULL or empty data, data that is not DER, or a request in flight.
 */
CXHR_EXTERN bool cxhr_set_client_certificate_p12(cxhr_request *_Nullable request, const void *_Nullable data,
                                                 size_t length, const char *_Nullable password);

/*
 * Accepts a server only if its certificate's public key is one of pins (curl's --pinnedpubkey,
 * CURLOPT_PINNEDPUBLICKEY): "sha256//BASE64[;sha256//BASE64...]", or the path of a public key
 * in PEM or DER; "" removes the pins. Another key ends the send in DONE, status 0,
 * CXHR_FAILURE_TLS, a text naming the pinned public key (curl's exit 90). False for NULL, a
 * hash that is not the base64 of 32 bytes, a file that is not a readable key, CR, LF, or a
 * request in flight.
 */
CXHR_EXTERN bool cxhr_set_pinned_public_keys(cxhr_request *_Nullable request, const char *_Nullable pins);

/*
 * As cxhr_set_client_certificate, for the certificate shown to an https:// proxy that asks
 * for one (curl's --proxy-cert, --proxy-cert-type, --proxy-key, --proxy-pass). False as
 * cxhr_set_client_certificate's.
 */
CXHR_EXTERN bool cxhr_set_proxy_client_certificate(cxhr_request *_Nullable request, const char *_Nullable path,
                                                   cxhr_cert_format format, const char *_Nullable key_path,
                                                   const char *_Nullable password);

/*
 * As cxhr_set_pinned_public_keys, for an https:// proxy's key (curl's --proxy-pinnedpubkey),
 * checked by the library (libcurl 7.88 never checks CURLOPT_PROXY_PINNEDPUBLICKEY), also when
 * the proxy's certificate is not verified. Another key ends the send in DONE, status 0,
 * CXHR_FAILURE_TLS, a text saying the proxy's key is not pinned (curl's exit 90). Each send
 * then has a connection of its own. "" removes the pins.
 */
CXHR_EXTERN bool cxhr_set_proxy_pinned_public_keys(cxhr_request *_Nullable request, const char *_Nullable pins);

/*
 * Sets the trusted CAs for every request of the process that sets none of its own; NULL
 * restores the default (CURL_CA_BUNDLE, else SSL_CERT_FILE, read at the first request, else
 * the system store).
 */
CXHR_EXTERN void cxhr_set_default_ca_certificate_file(const char *_Nullable path);

/*
 * Lets the request share an HTTP/2 connection with others (default true); false keeps it
 * on HTTP/1.1. Returns false for a NULL or destroyed handle.
 */
CXHR_EXTERN bool cxhr_set_enable_pipelining(cxhr_request *_Nullable request, bool enable);

/*
 * Empties the process-wide cookie jar. Persistent cookies stay in the store file (they come
 * back at the next launch) unless include_persistent_store is true.
 */
CXHR_EXTERN void cxhr_clear_cookies(bool include_persistent_store);

/*
 * Sets the file of the persistent cookie store (mode 0600); NULL restores the default
 * ($XDG_DATA_HOME/curlxhr/cookies.txt, else ~/.local/share/curlxhr/cookies.txt). Call it
 * before the first request; later, the jar is emptied and filled from the new file.
 */
CXHR_EXTERN void cxhr_cookies_set_file(const char *_Nullable path);

/* The store file in use. The string stays valid until the next cxhr_cookies_set_file. */
CXHR_EXTERN const char *_Nonnull cxhr_cookies_get_file(void);

/*
 * One cookie of the process-wide jar. domain is a host name without a leading dot;
 * include_subdomains makes hosts below it receive the cookie too (a Domain= attribute).
 * secure: sent over HTTPS only; http_only: marked HttpOnly. expires: Unix seconds, 0 for a
 * session cookie (kept in memory only; a cookie with an expiry is also kept in the store file).
 */
typedef struct {
  const char *_Nullable name, *_Nullable value, *_Nullable domain, *_Nullable path;
  bool include_subdomains, secure, http_only;
  int64_t expires; /* Unix seconds; 0 = session cookie */
} cxhr_cookie;

/*
 * The cookies a request to url would carry (domain, path, secure and expiry matching), or
 * with url NULL every cookie in the jar; expired cookies are left out. *count gets their
 * number. The array and its strings are copies: free them with cxhr_cookies_free (and
 * nothing else). When there are none, and for a url that is not http or https or not UTF-8,
 * returns NULL with *count 0. count NULL: returns NULL.
 */
CXHR_EXTERN cxhr_cookie *_Nullable cxhr_cookies_list(const char *_Nullable url, size_t *_Nullable count);

/*
 * Frees what cxhr_cookies_list returned, with the count it gave. NULL is ignored, and so is
 * a count greater than PTRDIFF_MAX (which no list has).
 */
CXHR_EXTERN void cxhr_cookies_free(cxhr_cookie *_Nullable cookies, size_t count);

/*
 * Adds a cookie to the jar, or replaces the one with the same name, domain and path; a
 * cookie with an expiry is in the store file when this returns. name and domain are
 * required; value NULL means "", path NULL means "/". Returns false, storing nothing, for a
 * NULL cookie or name or domain, text that is not UTF-8 or holds control characters, an
 * empty name or one with '=', ';' or a space, ';' in the value, a domain with a leading dot
 * or a '/' or beginning with '#' or "Set-Cookie:" (which the store file would read as
 * something else), a domain that is a public suffix ("com", "co.uk"), a path not beginning
 * with '/', or a negative expiry. Names, domains and paths are compared byte for byte.
 */
CXHR_EXTERN bool cxhr_cookies_set(const cxhr_cookie *_Nullable cookie);

/*
 * Removes the cookie with the same name, domain and path (value, flags and expiry are not
 * looked at) from the jar and the store file. Returns true when the arguments are valid,
 * whether or not such a cookie was there; false for a NULL cookie, name or domain, or text
 * that is not UTF-8 or holds control characters. path NULL means "/".
 */
CXHR_EXTERN bool cxhr_cookies_delete(const cxhr_cookie *_Nullable cookie);

/* ---- the HTTP cache (RFC 9111's private cache, shared by the process) ----
 *
 * Off until cxhr_set_cache_folder names a folder. Then responses are stored as their headers
 * allow and answer later requests while fresh; stale ones are validated with the server
 * (If-None-Match, If-Modified-Since) and a 304 is never seen by the caller. A response from
 * the cache is reported exactly as one from the network (the same ready states and callbacks),
 * its head being the stored status line and fields with an Age field; cxhr_is_response_from_cache
 * tells them apart. The request's own Cache-Control and Pragma headers (no-cache, no-store,
 * max-age, max-stale, min-fresh, only-if-cached) apply too, and still go to the server;
 * only-if-cached with nothing usable stored gives a 504 made by the cache. Only GET and HEAD
 * are answered from the cache; other methods (POST, PUT, DELETE, ...) go to the server, and
 * one answered 2xx or 3xx removes the stored responses of its URL (and of its Location and
 * Content-Location on the same origin).
 */

/* Flags of cxhr_set_cache_policy, OR-ed (Swift's HttpRequest.CachePolicy). */
enum {
  CXHR_CACHE_READ = 1,         /* answer from a fresh stored response; validate a stale one */
  CXHR_CACHE_READ_FORCED = 2,  /* answer a GET or HEAD from a stored response whatever its age,
                                  never with the network; with none stored (and for other
                                  methods, or a range): CXHR_DONE, status 0 and a text */
  CXHR_CACHE_UPDATE = 4,       /* store the responses their headers allow a private cache to store */
  CXHR_CACHE_UPDATE_FORCED = 8 /* store every complete response to a GET but 206 and 304, even a
                                  no-store one (for CXHR_CACHE_READ_FORCED later) */
};

/*
 * Turns on the process's cache in the folder at path (made if missing, mode 0700; an existing
 * folder, empty or holding a cache, is used as it is), keeping at most max_bytes of responses
 * (heads and bodies; the least recently used go first). Processes that name the same folder
 * share it. NULL turns the cache off. Returns false, leaving the cache in use as it was, for a
 * folder that cannot be made or opened (a path under a regular file, no permission), a path
 * that is empty or not UTF-8, or max_bytes < 1; cxhr_get_cache_folder_error then says why.
 */
CXHR_EXTERN bool cxhr_set_cache_folder(const char *_Nullable path, int64_t max_bytes);

/*
 * Why the last cxhr_set_cache_folder returned false; NULL after one that succeeded (and before
 * any). The string stays valid until the next cxhr_set_cache_folder.
 */
CXHR_EXTERN const char *_Nullable cxhr_get_cache_folder_error(void);

/*
 * How the request's next sends use the cache: CXHR_CACHE_* flags OR-ed; the default is
 * CXHR_CACHE_READ | CXHR_CACHE_UPDATE, and 0 leaves the cache out of the request. It stays
 * with the request across cxhr_open. A pre-send switch: false (with a reason in
 * cxhr_get_last_error) while a send is in flight, and for bits no CXHR_CACHE_* names.
 */
CXHR_EXTERN bool cxhr_set_cache_policy(cxhr_request *_Nullable request, unsigned policy);

/*
 * Whether the last response came from the cache (also when the server confirmed it with a 304
 * to the cache's validation, and for the 504 of only-if-cached); false before
 * CXHR_HEADERS_RECEIVED, and for a NULL or destroyed handle.
 */
CXHR_EXTERN bool cxhr_is_response_from_cache(cxhr_request *_Nullable request);

/* ---- the message: CXHR_OPENED only ---- */

/*
 * Adds a request header; a repeated name is joined with ", ". False for a name that is not
 * a token, a value containing CR, LF or NUL, Content-Length and Transfer-Encoding, NULL
 * arguments, or a state other than CXHR_OPENED.
 */
CXHR_EXTERN bool cxhr_set_request_header(cxhr_request *_Nullable request, const char *_Nullable name,
                                         const char *_Nullable value);

/*
 * Leaves the header field NAME out of the request: one set with cxhr_set_request_header, and
 * one libcurl adds of its own (Host, Accept, User-Agent, ...), as curl's -H 'Name:'. A later
 * cxhr_set_request_header of the name sends it again. False for a name that is not a token,
 * Content-Length and Transfer-Encoding, a NULL argument, or a state other than CXHR_OPENED.
 */
CXHR_EXTERN bool cxhr_remove_request_header(cxhr_request *_Nullable request, const char *_Nullable name);

/*
 * Adds or replaces a form value; the values are sent as an
 * application/x-www-form-urlencoded body, which excludes any other body.
 */
CXHR_EXTERN bool cxhr_set_post_value(cxhr_request *_Nullable request, const char *_Nullable value,
                                     const char *_Nullable key);

/*
 * Adds the file at path to the form as the part key: the form then goes as
 * multipart/form-data (values first, then files in the order added), each file streamed from
 * disk as it is sent. file_name: the part's file name (NULL: the path's last component);
 * content_type: its type (NULL: guessed from the name's extension, else
 * application/octet-stream). False (CXHR_ERROR_FILE_UNREADABLE) for a file that cannot be read.
 */
CXHR_EXTERN bool cxhr_add_post_file(cxhr_request *_Nullable request, const char *_Nullable path,
                                    const char *_Nullable key, const char *_Nullable file_name,
                                    const char *_Nullable content_type);

/* Removes every form value and file. */
CXHR_EXTERN bool cxhr_clear_post_values(cxhr_request *_Nullable request);

/* ---- sending: CXHR_OPENED only ---- */

/*
 * Sends the request with length bytes of data as the body, byte for byte (data may be NULL
 * for no body; then the form values, if any, are sent). timeout_s: seconds for the whole
 * request, 0 for no limit. Synchronous requests return in CXHR_DONE; asynchronous ones at
 * once. Returns false (nothing sent) in other states, for a negative timeout, for a length
 * greater than PTRDIFF_MAX, or for a body together with form values; network failures end
 * in CXHR_DONE with status 0 instead.
 */
CXHR_EXTERN bool cxhr_send(cxhr_request *_Nullable request, const void *_Nullable data, size_t length,
                           double timeout_s);

/* Sends a NUL-terminated UTF-8 text body (Content-Type: text/plain;charset=UTF-8 unless set). */
CXHR_EXTERN bool cxhr_send_text(cxhr_request *_Nullable request, const char *_Nullable text,
                                double timeout_s);

/*
 * Streams the file at path as the body, never reading it whole; the method becomes PUT unless
 * cxhr_open was given one other than GET, HEAD, POST and PUT. False if the file is missing,
 * unreadable or not a regular file.
 */
CXHR_EXTERN bool cxhr_send_file(cxhr_request *_Nullable request, const char *_Nullable path,
                                double timeout_s);

/*
 * Streams length bytes of the file at path from byte offset on as the body (length -1: to the
 * end), as cxhr_send_file does the whole file. False when the file cannot be read or the range
 * is not inside it (a negative offset, a length below -1, bytes past the end): the request
 * then stays CXHR_OPENED.
 */
CXHR_EXTERN bool cxhr_send_file_range(cxhr_request *_Nullable request, const char *_Nullable path,
                                      int64_t offset, int64_t length, double timeout_s);

/* ---- stopping ---- */

/*
 * Stops a request in CXHR_SENT, CXHR_HEADERS_RECEIVED or CXHR_LOADING, or one CXHR_OPENED and
 * waiting in its queue: CXHR_DONE on return, status 0, data discarded, one DONE callback and
 * none after it. False in other states.
 */
CXHR_EXTERN bool cxhr_abort(cxhr_request *_Nullable request);

/* Aborts a request in flight and makes the next send use a new connection and TLS handshake. */
CXHR_EXTERN bool cxhr_close(cxhr_request *_Nullable request);

/* ---- queues and connection limits (mesibo's HttpQueue) ---- */

/*
 * A queue limits how many of its requests run at once. A request sent into a queue whose
 * slots are all taken stays CXHR_OPENED, with no callback, until a running one of the queue
 * ends (CXHR_DONE); then CXHR_SENT and the rest as usual. A synchronous send blocks meanwhile.
 * The waiting request of the highest priority starts first, then the one that came first;
 * cxhr_queue_enqueue(..., true) puts a request before the others of its priority. Aborting
 * (or closing) a waiting request takes it out: CXHR_DONE, status 0, one DONE callback and no
 * SENT. The time spent waiting does not count towards the request's timeouts. A synchronous
 * send that would wait is refused (CXHR_ERROR_INVALID_STATE) inside a callback on the library's
 * own callback thread: the requests holding the slots may need callbacks queued behind it.
 */
typedef struct cxhr_queue cxhr_queue;

/*
 * A queue running at most max_simultaneous requests at once and holding at most max_pending
 * waiting ones (0: no limit). NULL if max_simultaneous < 1 or max_pending < 0.
 */
CXHR_EXTERN cxhr_queue *_Nullable cxhr_queue_create(int max_simultaneous, int max_pending);

/*
 * Destroys the handle: its waiting requests end in CXHR_DONE, status 0; its running ones go
 * on. A later send of a request whose queue it was returns false (CXHR_ERROR_INVALID_STATE)
 * until cxhr_set_queue gives it another queue or NULL.
 */
CXHR_EXTERN void cxhr_queue_destroy(cxhr_queue *_Nullable queue);

/*
 * Sends an OPENED request into the queue (with no body, or its form values), as cxhr_send
 * does, at the back of the waiting requests of its priority or, with at_front, before them.
 * False with the request's last error when it is not OPENED, already waits, or the queue is
 * full (CXHR_ERROR_QUEUE_FULL).
 */
CXHR_EXTERN bool cxhr_queue_enqueue(cxhr_queue *_Nullable queue, cxhr_request *_Nullable request,
                                    bool at_front);

/*
 * Aborts every waiting request of the queue (each ends in CXHR_DONE, status 0, as by
 * cxhr_abort); the running ones go on, and the queue takes new requests. Nothing for a NULL
 * or destroyed queue.
 */
CXHR_EXTERN void cxhr_queue_abort_waiting(cxhr_queue *_Nullable queue);

/* The queue's running and waiting requests now. False for a NULL or destroyed queue. */
CXHR_EXTERN bool cxhr_queue_get_counts(cxhr_queue *_Nullable queue, int *_Nullable running,
                                       int *_Nullable waiting);

/*
 * The queue the request's next sends go into (NULL: they start at once, the default); a send
 * already made keeps its queue. False for a NULL or destroyed request or a destroyed queue.
 */
CXHR_EXTERN bool cxhr_set_queue(cxhr_request *_Nullable request, cxhr_queue *_Nullable queue);

typedef enum { CXHR_PRIORITY_LOW = 0, CXHR_PRIORITY_NORMAL = 1, CXHR_PRIORITY_HIGH = 2 } cxhr_priority;

/*
 * Where the request's next sends wait among the others of their queue (default NORMAL); a
 * send already made keeps its priority. False for an unknown value.
 */
CXHR_EXTERN bool cxhr_set_priority(cxhr_request *_Nullable request, cxhr_priority priority);

/*
 * Process-wide: at most total connections open at once, and at most per_host to one host
 * and port (0: no limit, the default). A request needing a connection beyond them waits in
 * CXHR_SENT for one to free; HTTP/2 requests to one origin share one connection. For sends
 * made after the call. False (nothing changed) for a negative limit.
 */
CXHR_EXTERN bool cxhr_set_connection_limits(int total, int per_host);

/* ---- the response ---- */

/* The ready state; inside a callback, the state being reported. CXHR_UNSENT for NULL. */
CXHR_EXTERN cxhr_state cxhr_get_state(cxhr_request *_Nullable request);

/* The final response's HTTP status; 0 before headers and on any failure. */
CXHR_EXTERN int cxhr_get_status(cxhr_request *_Nullable request);

/* The reason phrase, or the text of a failure (TLS failures begin with "SSL"); NULL before. */
CXHR_EXTERN const char *_Nullable cxhr_get_status_text(cxhr_request *_Nullable request);

/* A response header, case-insensitive; "" when absent. NULL only for bad arguments. */
CXHR_EXTERN const char *_Nullable cxhr_get_response_header(cxhr_request *_Nullable request,
                                                           const char *_Nullable name);

/* A trailer field (sent after a chunked body's last chunk), case-insensitive; "" when absent or
   before DONE. NULL only for bad arguments. */
CXHR_EXTERN const char *_Nullable cxhr_get_response_trailer(cxhr_request *_Nullable request,
                                                            const char *_Nullable name);

/* All headers of the final response, "Name: value" lines joined by "\n"; NULL before. */
CXHR_EXTERN const char *_Nullable cxhr_get_all_response_headers(cxhr_request *_Nullable request);

/*
 * The body bytes received since the previous call; *length gets their count. Returns NULL
 * (and *length 0) when there are none. Valid until the next call that reads the buffer.
 */
CXHR_EXTERN const void *_Nullable cxhr_get_receive_buffer(cxhr_request *_Nullable request,
                                                          size_t *_Nullable length);

/* Why a request ended in CXHR_DONE with status 0 (the details are in cxhr_get_status_text). */
typedef enum {
  CXHR_FAILURE_NONE = 0,       /* it has not failed (or not ended yet); also for a NULL handle */
  CXHR_FAILURE_ABORTED,        /* cxhr_abort, cxhr_close or a re-open stopped it */
  CXHR_FAILURE_DNS,            /* the host name did not resolve */
  CXHR_FAILURE_CONNECTION,     /* no connection, or it broke (refused, reset, closed early) */
  CXHR_FAILURE_TLS,            /* the TLS handshake or the certificate check failed */
  CXHR_FAILURE_TIMEOUT,        /* the timeout given to cxhr_send ran out */
  CXHR_FAILURE_REDIRECTS,      /* more than 20 redirects */
  CXHR_FAILURE_PROXY,          /* the proxy could not be reached or broke the connection */
  CXHR_FAILURE_RESPONSE,       /* the answer was not valid HTTP (or too large a header) */
  CXHR_FAILURE_AUTHENTICATION, /* Kerberos tickets could not be obtained */
  CXHR_FAILURE_OTHER           /* anything else (a file unreadable while sending, out of memory) */
} cxhr_failure_kind;

/* The kind of failure that ended the request; CXHR_FAILURE_NONE while it has not failed. */
CXHR_EXTERN cxhr_failure_kind cxhr_get_failure_kind(cxhr_request *_Nullable request);

/*
 * How many body bytes of the current (or last) send have gone out, for upload progress:
 * the body only, not the headers; 0 without a body and for a NULL or destroyed handle.
 */
CXHR_EXTERN int64_t cxhr_get_bytes_sent(cxhr_request *_Nullable request);

/*
 * What the last send measured and where it ended, as the curl tool's --write-out variables
 * report them. The strings belong to the request (valid until it is re-opened or
 * destroyed); a time is -1 while unknown.
 */
typedef struct {
  const char *_Nullable http_version;  /* "HTTP/1.0", "HTTP/1.1", "HTTP/2"; NULL before a response head */
  const char *_Nullable effective_url; /* the URL of the final response, after redirects; NULL before a send ends */
  int64_t redirect_count;              /* redirects followed */
  double connect_s, start_transfer_s, total_s; /* seconds from the send (curl's time_connect,
                                                  time_starttransfer, time_total); -1 unknown */
} cxhr_metrics;

/*
 * Fills *metrics for the request's last send (after cxhr_open everything is unknown; before
 * the send ends, all but http_version, known from CXHR_HEADERS_RECEIVED on). Returns false, filling *metrics with unknowns if it is not NULL, for a
 * NULL or destroyed handle or a NULL metrics.
 */
CXHR_EXTERN bool cxhr_get_metrics(cxhr_request *_Nullable request, cxhr_metrics *_Nullable metrics);

/*
 * One phase time of the last send, in seconds from the send, as curl's --write-out time
 * variables (each includes the redirects before the last hop; 0 for a phase the last hop
 * did not go through, such as TLS on plain http or a connection reused): name lookup,
 * connect, TLS (appconnect), pre-transfer, start-transfer (first byte), the redirects before
 * the final hop, total, and the wait in the request's queue. -1 while unknown (before the
 * send ends) and for a NULL or destroyed handle or an unknown `which`.
 */
typedef enum {
  CXHR_TIME_NAMELOOKUP = 0,
  CXHR_TIME_CONNECT,
  CXHR_TIME_TLS,
  CXHR_TIME_PRETRANSFER,
  CXHR_TIME_STARTTRANSFER,
  CXHR_TIME_REDIRECT,
  CXHR_TIME_TOTAL,
  CXHR_TIME_QUEUE
} cxhr_time;
CXHR_EXTERN double cxhr_get_time(cxhr_request *_Nullable request, cxhr_time which);

/*
 * What happened during a send, in order, each once, on the request's callback thread (for
 * synchronous sends too: a synchronous send may return before its last events arrive);
 * CXHR_EVENT_DONE comes last. The fields each kind uses:
 *   QUEUED, STARTED, REQUEST_SENT: none.
 *   CONNECTED: detail the remote address, status its port, attempt 1 when the connection was
 *     reused (0: new).
 *   TLS_ESTABLISHED: detail the protocol version ("TLSv1.3"), for a new connection.
 *   INTERIM_RESPONSE: status (100, 103).
 *   AUTHENTICATION_ROUND: status (401 or 407), detail the scheme offered ("Digest").
 *   REDIRECT: status, detail the location.
 *   RETRY: attempt (from 1), delay_s, detail the reason.
 *   CACHE: detail "hit", "miss", "validated" or "stored".
 *   DONE: status the response's (0 for a failure); cxhr_get_metrics and cxhr_get_time tell
 *     what the send measured.
 * detail is valid during the callback only (never NULL).
 */
typedef enum {
  CXHR_EVENT_QUEUED = 1,
  CXHR_EVENT_STARTED,
  CXHR_EVENT_CONNECTED,
  CXHR_EVENT_TLS_ESTABLISHED,
  CXHR_EVENT_REQUEST_SENT,
  CXHR_EVENT_INTERIM_RESPONSE,
  CXHR_EVENT_AUTHENTICATION_ROUND,
  CXHR_EVENT_REDIRECT,
  CXHR_EVENT_RETRY,
  CXHR_EVENT_CACHE,
  CXHR_EVENT_DONE
} cxhr_event_kind;
typedef struct {
  cxhr_event_kind kind;
  int status;
  double delay_s;
  int attempt;
  const char *_Nullable detail; /* location, address, scheme, cache outcome, reason */
} cxhr_event;
typedef void (*cxhr_event_callback)(cxhr_request *_Nonnull request, const cxhr_event *_Nonnull event,
                                    void *_Nullable user_data);
/* Sets (NULL: clears) the event callback, taken by the next send. False for a NULL or
   destroyed handle. */
CXHR_EXTERN bool cxhr_set_event_callback(cxhr_request *_Nullable request, cxhr_event_callback _Nullable callback,
                                         void *_Nullable user_data);

/*
 * The wire as libcurl sees it (curl's --trace), in order with the events, with the values of
 * Authorization, Proxy-Authorization, Cookie and Set-Cookie and the passwords replaced by
 * "[redacted]". The bytes are valid during the callback only. Nothing is traced without a
 * callback.
 */
typedef enum {
  CXHR_TRACE_INFO = 0,
  CXHR_TRACE_HEADER_OUT,
  CXHR_TRACE_HEADER_IN,
  CXHR_TRACE_DATA_OUT,
  CXHR_TRACE_DATA_IN,
  CXHR_TRACE_TLS_OUT,
  CXHR_TRACE_TLS_IN
} cxhr_trace_kind;
typedef void (*cxhr_trace_callback)(cxhr_request *_Nonnull request, cxhr_trace_kind kind, const void *_Nullable data,
                                    size_t length, void *_Nullable user_data);
/* Sets (NULL: clears) the trace callback, taken by the next send. False for a NULL or
   destroyed handle. */
CXHR_EXTERN bool cxhr_set_trace_callback(cxhr_request *_Nullable request, cxhr_trace_callback _Nullable callback,
                                         void *_Nullable user_data);

/* Why the last call on this request returned false; NULL when it succeeded. */
CXHR_EXTERN const char *_Nullable cxhr_get_last_error(cxhr_request *_Nullable request);

/* What kind of refusal cxhr_get_last_error describes (Swift's HttpRequestError.Code). */
typedef enum {
  CXHR_ERROR_NONE = 0,          /* the last call succeeded; also for a NULL or destroyed handle */
  CXHR_ERROR_INVALID_STATE,     /* the call is not allowed in the request's state */
  CXHR_ERROR_INVALID_ARGUMENT,  /* an argument was NULL, malformed or out of range */
  CXHR_ERROR_FILE_UNREADABLE,   /* a file to send or trust could not be read */
  CXHR_ERROR_OTHER,             /* a refusal of a kind newer than this header */
  CXHR_ERROR_FILE_UNWRITABLE,   /* a response file's folder is missing or not writable */
  CXHR_ERROR_QUEUE_FULL         /* the request's queue already holds max_pending waiting requests */
} cxhr_error_code;

/* The kind of the last call's refusal; CXHR_ERROR_NONE when it succeeded. */
CXHR_EXTERN cxhr_error_code cxhr_get_last_error_code(cxhr_request *_Nullable request);

/* Replaying a request */

/*
 * A curl command line that replays the request (Swift's HttpRequest.curlCommand()): one line
 * of POSIX shell with the method, URL, headers, the last send's body or the form, credentials,
 * proxy, TLS and routing switches, each argument single-quoted where it is not plain; secrets
 * (Authorization, Proxy-Authorization and Cookie values, every password) read "[redacted]", and
 * what curl cannot express is named in a trailing "# not expressible: ..." comment. "" before
 * the first cxhr_open. The string is the caller's: free it with free(). NULL for a NULL or
 * destroyed handle (or when out of memory).
 */
CXHR_EXTERN char *_Nullable cxhr_curl_command(cxhr_request *_Nullable request);

/* ---- OAuth2 bearer tokens (Swift's OAuth2Authorizer) ----
 *
 * An authorizer gets access tokens from an OAuth2 token endpoint, keeps them (in memory, or in
 * a JSON file of mode 0600 that a later run reads: no new grant at every start), renews them
 * ahead of their expiry, and sets them on requests as "Authorization: Bearer ...". However
 * many threads need a new token at once, one request goes to the token endpoint and the others
 * wait for it. The calls that reach the endpoint block their caller; all are thread-safe.
 *
 *   cxhr_open(request, "GET", url, false, NULL, NULL, NULL);
 *   if(cxhr_oauth2_authorize(oauth, request, false) == CXHR_OAUTH2_OK && cxhr_send(request, NULL, 0, 0)
 *      && cxhr_get_status(request) == 401) {           (with "WWW-Authenticate: Bearer ...")
 *     cxhr_open(request, "GET", url, false, NULL, NULL, NULL);
 *     cxhr_oauth2_authorize(oauth, request, true);      (the refused token is never sent again)
 *     cxhr_send(request, NULL, 0, 0);
 *   }
 */
typedef struct cxhr_oauth2 cxhr_oauth2;

typedef enum {
  CXHR_OAUTH2_CLIENT_CREDENTIALS = 0, /* grant_type=client_credentials */
  CXHR_OAUTH2_PASSWORD = 1,           /* grant_type=password, with username and password */
  CXHR_OAUTH2_REFRESH_TOKEN = 2       /* only a refresh token the program holds */
} cxhr_oauth2_grant;

/* What an authorizer needs; cxhr_oauth2_create copies the strings. Zero-initialize it. */
typedef struct {
  const char *_Nullable token_url;      /* the token endpoint (required) */
  const char *_Nullable client_id;      /* required */
  const char *_Nullable client_secret;  /* NULL: a public client (client_id in the form) */
  bool secret_in_form;                  /* client_id and client_secret as form fields, not Basic */
  cxhr_oauth2_grant grant;
  const char *_Nullable username;       /* for CXHR_OAUTH2_PASSWORD */
  const char *_Nullable password;       /* for CXHR_OAUTH2_PASSWORD */
  const char *_Nullable refresh_token;  /* for CXHR_OAUTH2_REFRESH_TOKEN */
  const char *_Nullable scope;          /* NULL: the server's default */
  const char *_Nullable token_file;     /* NULL: tokens in memory only */
  const char *_Nullable revocation_url; /* RFC 7009 endpoint for cxhr_oauth2_logout; NULL: none */
  const char *_Nullable ca_file;        /* PEM CAs the endpoints are checked against; NULL: the system's */
  double timeout_s;                     /* seconds for each request to the endpoints; 0: 30 s */
} cxhr_oauth2_config;

typedef enum {
  CXHR_OAUTH2_OK = 0,
  CXHR_OAUTH2_REJECTED = 1,    /* the endpoint refused: invalid_grant (a revoked or used refresh token,
                                  a wrong password), invalid_client...; a refused refresh token is dropped */
  CXHR_OAUTH2_UNREACHABLE = 2, /* the endpoint could not be reached, or answered no token */
  CXHR_OAUTH2_NO_GRANT = 3,    /* no token, and no grant to get one (the refresh token was refused) */
  CXHR_OAUTH2_LOGGED_OUT = 4,  /* after cxhr_oauth2_logout */
  CXHR_OAUTH2_INVALID = 5      /* a NULL or destroyed handle, or a request that is not OPENED */
} cxhr_oauth2_result;

/*
 * Makes an authorizer; with a token_file, the token kept there for the same token_url and
 * client_id is used first. NULL when token_url or client_id is missing, or what the grant needs
 * (username and password, or refresh_token).
 */
CXHR_EXTERN cxhr_oauth2 *_Nullable cxhr_oauth2_create(const cxhr_oauth2_config *_Nullable config);

/* Destroys an authorizer; a token file stays for the next run. NULL and destroyed handles are ignored. */
CXHR_EXTERN void cxhr_oauth2_destroy(cxhr_oauth2 *_Nullable oauth);

/*
 * Sets "Authorization: Bearer <token>" on an OPENED request, first fetching or renewing the
 * token if need be (blocking). With refused true, after the server answered this request 401
 * with a Bearer challenge: the token this function last set on this request is not used again,
 * and a new one (one fetch for every request refused with that token) is set. Other results
 * leave the header unset, with the reason in cxhr_get_last_error(request).
 */
CXHR_EXTERN cxhr_oauth2_result cxhr_oauth2_authorize(cxhr_oauth2 *_Nullable oauth, cxhr_request *_Nullable request,
                                                     bool refused);

/*
 * Ends the session: revokes the refresh token (else the access token) at revocation_url if one
 * was given, forgets the tokens and removes the token file; later calls give
 * CXHR_OAUTH2_LOGGED_OUT. Returns CXHR_OAUTH2_OK, or how the revocation failed (the tokens are
 * gone all the same).
 */
CXHR_EXTERN cxhr_oauth2_result cxhr_oauth2_logout(cxhr_oauth2 *_Nullable oauth);

/* ---- process-wide Kerberos settings (GDCacheController's counterpart) ---- */

/*
 * Sets the file of the library's own Kerberos credential cache (mode 0600), where tickets
 * obtained for cxhr_open(..., "user@REALM", password, CXHR_AUTH_NEGOTIATE) are kept; NULL
 * restores the default ($XDG_STATE_HOME/curlxhr/krb5cc, else ~/.local/state/curlxhr/krb5cc).
 */
CXHR_EXTERN void cxhr_kerberos_set_cache_file(const char *_Nullable path);

/* The cache file in use. The string stays valid until the next cxhr_kerberos_set_cache_file. */
CXHR_EXTERN const char *_Nonnull cxhr_kerberos_get_cache_file(void);

/* Allows delegating credentials to servers (default false); a change removes the tickets. */
CXHR_EXTERN void cxhr_kerberos_set_allow_delegation(bool allow);
CXHR_EXTERN bool cxhr_kerberos_get_allow_delegation(void);

/*
 * Forgets stored credentials for "BASIC", "DIGEST", "NTLM" or "NEGOTIATE" (the tickets are
 * removed from the cache file), or for all with NULL. False for an unknown name.
 */
CXHR_EXTERN bool cxhr_kerberos_clear_credentials(const char *_Nullable method);

/* The library's version, "major.minor.patch". */
CXHR_EXTERN const char *_Nonnull cxhr_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CURLXHR_H */
