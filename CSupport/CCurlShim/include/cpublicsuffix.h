/*
 * The public suffix list, through libpsl (the library libcurl's cookie jar asks too), for
 * cookies set through the API: a cookie for "com" or "co.uk" would go to every site under it.
 */
#ifndef CPUBLICSUFFIX_H
#define CPUBLICSUFFIX_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* Whether domain (ASCII letters in any case, one final dot or none; an internationalized name
   in its xn-- form or in lower-case UTF-8) is a public suffix of the list's ICANN or private
   section. Only listed rules count: the implicit "*" rule would make every unlisted top-level
   name, "localhost" or "test", one too. */
bool cxhr_is_public_suffix(const char *domain);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
