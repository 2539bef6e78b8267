#include "cdigestmd5.h"

#include <openssl/evp.h>
#include <stdio.h>

int cxhr_md5_hex(const void *data, size_t length, char hex[33])
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if(!EVP_Digest(data, length, digest, &size, EVP_md5(), NULL) || size != 16)
    return -1;
  for(unsigned int i = 0; i < size; i++)
    snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  return 0;
}
