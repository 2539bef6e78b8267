/*
 * CCurlShim: the part of libcurl that Swift cannot call directly.
 *
 * curl_easy_setopt, curl_multi_setopt, curl_share_setopt and curl_easy_getinfo
 * are variadic, and CURLAUTH_* are function-like macros; this header gives
 * them typed, non-variadic forms. Everything else in libcurl is imported
 * directly from <curl/curl.h>.
 */
#ifndef CCURLSHIM_H
#define CCURLSHIM_H

#include <curl/curl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* Typed curl_easy_setopt, one per argument kind. */
CURLcode cxhr_easy_set_long(CURL *handle, CURLoption option, long value);
CURLcode cxhr_easy_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode cxhr_easy_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode cxhr_easy_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode cxhr_easy_set_slist(CURL *handle, CURLoption option, struct curl_slist *list);
CURLcode cxhr_easy_set_share(CURL *handle, CURLSH *share);
CURLcode cxhr_easy_set_write_function(CURL *handle, curl_write_callback fn);
CURLcode cxhr_easy_set_header_function(CURL *handle, curl_write_callback fn);
CURLcode cxhr_easy_set_read_function(CURL *handle, curl_read_callback fn);
CURLcode cxhr_easy_set_seek_function(CURL *handle, curl_seek_callback fn);
CURLcode cxhr_easy_set_xferinfo_function(CURL *handle, curl_xferinfo_callback fn);
/* CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION together. */
CURLcode cxhr_easy_set_socket_functions(CURL *handle, curl_opensocket_callback open, curl_closesocket_callback close);
/* CURLOPT_ERRORBUFFER, emptied as each attempt at the request starts: libcurl writes only a
   transfer's first failure there, and when a kept-alive connection it reused turns out dead
   it sends the request again on a new one, so the dead one's text would stand for a later
   failure of the retry. A failure after that is told by its code (curl_easy_strerror). */
CURLcode cxhr_easy_set_error_buffer(CURL *handle, char *buffer);

/* Typed curl_easy_getinfo. */
CURLcode cxhr_easy_get_long(CURL *handle, CURLINFO info, long *value);
CURLcode cxhr_easy_get_offset(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode cxhr_easy_get_string(CURL *handle, CURLINFO info, const char **value);
CURLcode cxhr_easy_get_pointer(CURL *handle, CURLINFO info, void **value);
CURLcode cxhr_easy_get_slist(CURL *handle, CURLINFO info, struct curl_slist **value);

/* What a send measured beyond the times the engine reads itself, read from a handle libcurl
   finished with in one call: the phase times (microseconds; namelookup only when the hop
   `connected`, appconnect only with `tls`), the body sizes (size_upload only with `upload`),
   and both ends' addresses (empty when it never connected). Plain values, kept as they are
   until asked for. */
typedef struct {
  curl_off_t namelookup, appconnect, pretransfer;
  curl_off_t size_upload, size_download;
  char primary_ip[46], local_ip[46];
} cxhr_send_facts;
void cxhr_easy_get_send_facts(CURL *handle, cxhr_send_facts *facts, int connected, int tls, int upload);

/* Observing a transfer: CURLOPT_PREREQFUNCTION (a connection is ready for a request) and
   CURLOPT_DEBUGFUNCTION with CURLOPT_VERBOSE; NULL callbacks turn them off. */
CURLcode cxhr_easy_set_prereq_function(CURL *handle, curl_prereq_callback fn, void *data);
CURLcode cxhr_easy_set_debug_function(CURL *handle, curl_debug_callback fn, void *data);
/* The TLS protocol version of the handle's connection to the server ("TLSv1.3"), or NULL
   without TLS (OpenSSL's SSL_get_version). */
const char *cxhr_easy_tls_version(CURL *handle);

/* Typed curl_multi_setopt and curl_share_setopt. */
CURLMcode cxhr_multi_set_long(CURLM *multi, CURLMoption option, long value);
CURLSHcode cxhr_share_set_long(CURLSH *share, CURLSHoption option, long value);

/* The result of a CURLMSG_DONE message (a union member Swift reads awkwardly). */
CURLcode cxhr_message_result(const CURLMsg *message);

/* CURLAUTH_* values, re-exported as constants. */
extern const unsigned long cxhr_auth_none;
extern const unsigned long cxhr_auth_basic;
extern const unsigned long cxhr_auth_digest;
extern const unsigned long cxhr_auth_ntlm;
extern const unsigned long cxhr_auth_negotiate;
extern const unsigned long cxhr_auth_any;
/* CURLAUTH_ONLY: with one scheme, wait for the server's challenge instead of sending it first. */
extern const unsigned long cxhr_auth_only;

/* CURLGSSAPI_DELEGATION_FLAG: delegate credentials unconditionally. */
extern const long cxhr_gssapi_delegation_flag;

/* Return values of the callbacks that mean "stop" (read, seek) or "pause" (write, read). */
extern const size_t cxhr_read_abort;
extern const int cxhr_seek_fail;
extern const size_t cxhr_write_pause;
extern const size_t cxhr_read_pause;

/* curl_easy_pause's CURLPAUSE_CONT: resume both directions; CURLPAUSE_RECV: keep receiving
 * paused, resume sending. */
extern const int cxhr_pause_continue;
extern const int cxhr_pause_receive_only;

/* curl_global_init's CURL_GLOBAL_DEFAULT. */
extern const long cxhr_global_default;

/* The version of the libcurl running ("7.88.1"), from curl_version_info. Not curl_version():
 * its text names every library libcurl uses, and asking OpenLDAP for its version initialises
 * libldap, which loads all of Cyrus SASL's plugins (and Berkeley DB): about 1.2 MiB of
 * resident memory for a User-Agent string. */
const char *cxhr_libcurl_version(void);

/* Whether this libcurl decodes a content coding: 'g' gzip and deflate (zlib), 'b' brotli,
 * 'z' zstd. */
int cxhr_libcurl_decodes(int which);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* CCURLSHIM_H */
