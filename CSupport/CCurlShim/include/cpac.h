/*
 * Proxy auto-config: FindProxyForURL evaluated by libpacparser (Debian's libpacparser1).
 * libpacparser keeps one JavaScript context for the whole process: every call below must be
 * made under one lock of the caller's, which these functions do not take.
 */
#ifndef CPAC_H
#define CPAC_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* Makes script (a PAC file's text) the one FindProxyForURL is taken from, in a new context.
   False when libpacparser cannot be loaded, the script does not parse or throws as it runs;
   cxhr_pac_error() then says why. */
bool cxhr_pac_use_script(const char *script);

/* FindProxyForURL(url, host) of the script in use, as a string (libpacparser's: copy it
   before the next call), or NULL when it throws or is missing; cxhr_pac_error() says why. */
const char *cxhr_pac_find_proxy(const char *url, const char *host);

/* The last error libpacparser reported, or why it could not be loaded ("" for none). */
const char *cxhr_pac_error(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
