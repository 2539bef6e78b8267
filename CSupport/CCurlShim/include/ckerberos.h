/*
 * The libkrb5 and GSS-API calls CurlXHR needs for Negotiate (Kerberos): turning a user
 * name and password into tickets in a credential cache of the library's own, checking and
 * clearing that cache, and pointing GSS-API (which libcurl's SPNEGO uses) at it.
 */
#ifndef CKERBEROS_H
#define CKERBEROS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/*
 * Asks the KDC for initial tickets for principal ("user@REALM") with password and stores
 * them in the FILE credential cache at ccache_path, replacing what it held. forwardable
 * asks for tickets that may be delegated. Returns 0, or libkrb5's error code with its
 * message in error (never containing the password). The password is copied into a buffer
 * that is cleared before returning.
 */
long cxhr_krb5_get_tickets(const char *principal, const char *password, const char *ccache_path,
                           bool forwardable, char *error, size_t error_size);

/* 1 when the cache at ccache_path holds a ticket-granting ticket valid for at least a minute. */
int cxhr_krb5_has_tickets(const char *ccache_path);

/* Removes every ticket: the cache file is destroyed. Returns 0 or libkrb5's error code. */
long cxhr_krb5_destroy(const char *ccache_path);

/*
 * Makes GSS-API calls on the calling thread use the FILE cache at ccache_path, or the
 * default cache (KRB5CCNAME, else what kinit fills) when ccache_path is NULL.
 */
long cxhr_gss_use_ccache(const char *ccache_path);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* CKERBEROS_H */
