/*
 * CDigestMD5: MD5 from OpenSSL's libcrypto, for the Digest check of `xhr demo`'s embedded
 * server (RFC 7616 with algorithm=MD5). Not used by the library.
 */
#ifndef CDIGESTMD5_H
#define CDIGESTMD5_H

#include <stddef.h>

/* Writes the MD5 of the length bytes at data as 32 lower-case hex digits and a NUL to hex.
 * Returns 0, or -1 if libcrypto failed. */
int cxhr_md5_hex(const void *data, size_t length, char hex[33]);

#endif
