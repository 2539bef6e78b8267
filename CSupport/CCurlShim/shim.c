#include "ccurlshim.h"

#include <openssl/ssl.h>
#include <string.h>

CURLcode cxhr_easy_set_long(CURL *handle, CURLoption option, long value)
{
  return curl_easy_setopt(handle, option, value);
}

CURLcode cxhr_easy_set_offset(CURL *handle, CURLoption option, curl_off_t value)
{
  return curl_easy_setopt(handle, option, value);
}

CURLcode cxhr_easy_set_string(CURL *handle, CURLoption option, const char *value)
{
  return curl_easy_setopt(handle, option, value);
}

CURLcode cxhr_easy_set_pointer(CURL *handle, CURLoption option, void *value)
{
  return curl_easy_setopt(handle, option, value);
}

CURLcode cxhr_easy_set_slist(CURL *handle, CURLoption option, struct curl_slist *list)
{
  return curl_easy_setopt(handle, option, list);
}

CURLcode cxhr_easy_set_share(CURL *handle, CURLSH *share)
{
  return curl_easy_setopt(handle, CURLOPT_SHARE, share);
}

CURLcode cxhr_easy_set_write_function(CURL *handle, curl_write_callback fn)
{
  return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, fn);
}

CURLcode cxhr_easy_set_header_function(CURL *handle, curl_write_callback fn)
{
  return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, fn);
}

CURLcode cxhr_easy_set_read_function(CURL *handle, curl_read_callback fn)
{
  return curl_easy_setopt(handle, CURLOPT_READFUNCTION, fn);
}

CURLcode cxhr_easy_set_seek_function(CURL *handle, curl_seek_callback fn)
{
  return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, fn);
}

CURLcode cxhr_easy_set_xferinfo_function(CURL *handle, curl_xferinfo_callback fn)
{
  return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, fn);
}

CURLcode cxhr_easy_set_socket_functions(CURL *handle, curl_opensocket_callback open, curl_closesocket_callback close)
{
  CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open);
  return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, close);
}

/* Each attempt at a request starts with an empty text (CURLOPT_PREREQFUNCTION). */
static int cxhr_clear_error_buffer(void *buffer, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
  (void)primary_ip;
  (void)local_ip;
  (void)primary_port;
  (void)local_port;
  ((char *)buffer)[0] = 0;
  return CURL_PREREQFUNC_OK;
}

CURLcode cxhr_easy_set_error_buffer(CURL *handle, char *buffer)
{
  CURLcode code = curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, buffer);
  if(code == CURLE_OK)
    code = curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, cxhr_clear_error_buffer);
  return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_PREREQDATA, buffer);
}

/* An address libcurl keeps for the handle, copied (at most 45 bytes). */
static void copy_address(CURL *handle, CURLINFO info, char *to)
{
  const char *address = NULL;
  to[0] = 0;
  if(curl_easy_getinfo(handle, info, &address) == CURLE_OK && address) {
    size_t length = strnlen(address, 45);
    memcpy(to, address, length);
    to[length] = 0;
  }
}

void cxhr_easy_get_send_facts(CURL *handle, cxhr_send_facts *facts, int connected, int tls, int upload)
{
  facts->namelookup = 0;
  if(connected)
    curl_easy_getinfo(handle, CURLINFO_NAMELOOKUP_TIME_T, &facts->namelookup);
  facts->appconnect = 0;
  if(tls)
    curl_easy_getinfo(handle, CURLINFO_APPCONNECT_TIME_T, &facts->appconnect);
  curl_easy_getinfo(handle, CURLINFO_PRETRANSFER_TIME_T, &facts->pretransfer);
  facts->size_upload = 0;
  if(upload)
    curl_easy_getinfo(handle, CURLINFO_SIZE_UPLOAD_T, &facts->size_upload);
  curl_easy_getinfo(handle, CURLINFO_SIZE_DOWNLOAD_T, &facts->size_download);
  copy_address(handle, CURLINFO_PRIMARY_IP, facts->primary_ip);
  copy_address(handle, CURLINFO_LOCAL_IP, facts->local_ip);
}

CURLcode cxhr_easy_set_prereq_function(CURL *handle, curl_prereq_callback fn, void *data)
{
  CURLcode code = curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, fn);
  return code == CURLE_OK ? curl_easy_setopt(handle, CURLOPT_PREREQDATA, data) : code;
}

CURLcode cxhr_easy_set_debug_function(CURL *handle, curl_debug_callback fn, void *data)
{
  CURLcode code = curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, fn);
  if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_DEBUGDATA, data);
  return code == CURLE_OK ? curl_easy_setopt(handle, CURLOPT_VERBOSE, fn ? 1L : 0L) : code;
}

const char *cxhr_easy_tls_version(CURL *handle)
{
  struct curl_tlssessioninfo *info = NULL;
  if (curl_easy_getinfo(handle, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info || info->backend != CURLSSLBACKEND_OPENSSL
      || !info->internals)
    return NULL;
  return SSL_get_version((const SSL *)info->internals);
}

CURLcode cxhr_easy_get_long(CURL *handle, CURLINFO info, long *value)
{
  return curl_easy_getinfo(handle, info, value);
}

CURLcode cxhr_easy_get_offset(CURL *handle, CURLINFO info, curl_off_t *value)
{
  return curl_easy_getinfo(handle, info, value);
}

CURLcode cxhr_easy_get_string(CURL *handle, CURLINFO info, const char **value)
{
  return curl_easy_getinfo(handle, info, value);
}

CURLcode cxhr_easy_get_pointer(CURL *handle, CURLINFO info, void **value)
{
  return curl_easy_getinfo(handle, info, value);
}

CURLcode cxhr_easy_get_slist(CURL *handle, CURLINFO info, struct curl_slist **value)
{
  return curl_easy_getinfo(handle, info, value);
}

CURLMcode cxhr_multi_set_long(CURLM *multi, CURLMoption option, long value)
{
  return curl_multi_setopt(multi, option, value);
}

CURLSHcode cxhr_share_set_long(CURLSH *share, CURLSHoption option, long value)
{
  return curl_share_setopt(share, option, value);
}

CURLcode cxhr_message_result(const CURLMsg *message)
{
  return message->data.result;
}

const unsigned long cxhr_auth_none = CURLAUTH_NONE;
const unsigned long cxhr_auth_basic = CURLAUTH_BASIC;
const unsigned long cxhr_auth_digest = CURLAUTH_DIGEST;
const unsigned long cxhr_auth_ntlm = CURLAUTH_NTLM;
const unsigned long cxhr_auth_negotiate = CURLAUTH_NEGOTIATE;
const unsigned long cxhr_auth_any = CURLAUTH_ANY;
const unsigned long cxhr_auth_only = CURLAUTH_ONLY;
const long cxhr_gssapi_delegation_flag = CURLGSSAPI_DELEGATION_FLAG;

const size_t cxhr_read_abort = CURL_READFUNC_ABORT;
const int cxhr_seek_fail = CURL_SEEKFUNC_FAIL;
const size_t cxhr_write_pause = CURL_WRITEFUNC_PAUSE;
const size_t cxhr_read_pause = CURL_READFUNC_PAUSE;
const int cxhr_pause_continue = CURLPAUSE_CONT;
const int cxhr_pause_receive_only = CURLPAUSE_RECV;

const long cxhr_global_default = CURL_GLOBAL_DEFAULT;

const char *cxhr_libcurl_version(void)
{
  return curl_version_info(CURLVERSION_NOW)->version;
}

int cxhr_libcurl_decodes(int which)
{
  int features = curl_version_info(CURLVERSION_NOW)->features;
  return (features & (which == 'b' ? CURL_VERSION_BROTLI : which == 'z' ? CURL_VERSION_ZSTD : CURL_VERSION_LIBZ)) != 0;
}
