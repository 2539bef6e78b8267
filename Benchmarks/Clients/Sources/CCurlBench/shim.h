/* libcurl for xhr-in-swift: typed forms of its variadic calls, which Swift cannot import. */
#include <curl/curl.h>

static inline CURLcode bench_set_long(CURL *easy, CURLoption option, long value)
{
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode bench_set_pointer(CURL *easy, CURLoption option, const void *value)
{
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode bench_set_write_function(CURL *easy, CURLoption option, curl_write_callback function)
{
    return curl_easy_setopt(easy, option, function);
}

static inline CURLcode bench_get_long(CURL *easy, CURLINFO info, long *value)
{
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode bench_get_offset(CURL *easy, CURLINFO info, curl_off_t *value)
{
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode bench_get_pointer(CURL *easy, CURLINFO info, void **value)
{
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode bench_multi_set_long(CURLM *multi, CURLMoption option, long value)
{
    return curl_multi_setopt(multi, option, value);
}

static inline CURLcode bench_message_result(const CURLMsg *message)
{
    return message->data.result;
}

/* libcurl's version ("7.88.1"). */
static inline const char *bench_version(void)
{
    return curl_version_info(CURLVERSION_NOW)->version;
}
