/*
 * One step of a streaming decoder for an HTTP content coding, over zlib (gzip, deflate),
 * brotli and zstd: the same call for each library, so that the decoding stage (in Swift)
 * decides when to feed input and take output, and can stop between any two steps.
 */
#ifndef CDECODE_H
#define CDECODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

typedef enum {
  CXHR_CODING_GZIP = 1,    /* gzip, x-gzip */
  CXHR_CODING_DEFLATE = 2, /* deflate: zlib's format, or raw deflate as some servers send it */
  CXHR_CODING_BROTLI = 3,  /* br */
  CXHR_CODING_ZSTD = 4     /* zstd */
} cxhr_coding;

typedef enum {
  CXHR_DECODE_MORE = 0,  /* took input or gave output; call again */
  CXHR_DECODE_END = 1,   /* the coded stream ended */
  CXHR_DECODE_ERROR = -1 /* the input is not in the coding (cxhr_decoder_error says why) */
} cxhr_decode_result;

typedef struct cxhr_decoder cxhr_decoder;

/* A decoder for one coding; NULL when memory runs out. */
cxhr_decoder *cxhr_decoder_new(cxhr_coding coding);

/* Decodes from *input (*input_left bytes), advancing both past what it took, into output
 * (output_size bytes); *produced gets how many it wrote. Neither more output than fits nor
 * more input than that needs is taken: a decoder can be left between any two steps. */
cxhr_decode_result cxhr_decoder_step(cxhr_decoder *decoder, const unsigned char **input, size_t *input_left,
                                     unsigned char *output, size_t output_size, size_t *produced);

/* The library's reason for the last CXHR_DECODE_ERROR. */
const char *cxhr_decoder_error(const cxhr_decoder *decoder);

void cxhr_decoder_free(cxhr_decoder *decoder);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* CDECODE_H */
