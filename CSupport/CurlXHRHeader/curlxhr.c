/*
 * The functions declared in curlxhr.h are implemented in Swift, with @c @implementation,
 * in Sources/CurlXHRCAPI; the compiler checks them against this header. This file only makes
 * the header a C module Swift can import.
 */
#include "curlxhr.h"
