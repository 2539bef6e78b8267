#include "cdecode.h"

#include <brotli/decode.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

struct cxhr_decoder {
  cxhr_coding coding;
  z_stream zlib;
  /* deflate: no byte was decoded yet, so a zlib header's absence can still mean raw deflate. */
  int deflate_undecided;
  BrotliDecoderState *brotli;
  ZSTD_DStream *zstd;
  const char *error;
};

cxhr_decoder *cxhr_decoder_new(cxhr_coding coding)
{
  cxhr_decoder *decoder = calloc(1, sizeof *decoder);
  if(!decoder)
    return NULL;
  decoder->coding = coding;
  switch(coding) {
  case CXHR_CODING_GZIP:
  case CXHR_CODING_DEFLATE:
    /* 15 + 32: a zlib or gzip header, found by itself; 15: zlib's. */
    if(inflateInit2(&decoder->zlib, coding == CXHR_CODING_GZIP ? 15 + 32 : 15) != Z_OK) {
      free(decoder);
      return NULL;
    }
    decoder->deflate_undecided = coding == CXHR_CODING_DEFLATE;
    break;
  case CXHR_CODING_BROTLI:
    decoder->brotli = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if(!decoder->brotli) {
      free(decoder);
      return NULL;
    }
    break;
  case CXHR_CODING_ZSTD:
    decoder->zstd = ZSTD_createDStream();
    if(!decoder->zstd || ZSTD_isError(ZSTD_initDStream(decoder->zstd))) {
      ZSTD_freeDStream(decoder->zstd);
      free(decoder);
      return NULL;
    }
    break;
  default:
    free(decoder);
    return NULL;
  }
  return decoder;
}

static cxhr_decode_result zlib_step(cxhr_decoder *decoder, const unsigned char **input, size_t *input_left,
                                    unsigned char *output, size_t output_size, size_t *produced)
{
  z_stream *z = &decoder->zlib;
  z->next_in = (Bytef *)*input;
  z->avail_in = *input_left > UINT32_MAX ? UINT32_MAX : (uInt)*input_left;
  z->next_out = output;
  z->avail_out = output_size > UINT32_MAX ? UINT32_MAX : (uInt)output_size;
  uInt given = z->avail_in;
  int status = inflate(z, Z_NO_FLUSH);
  if(status == Z_DATA_ERROR && decoder->deflate_undecided && z->total_out == 0) {
    /* "deflate" without zlib's header: raw deflate, from the first byte again. */
    decoder->deflate_undecided = 0;
    if(inflateReset2(z, -15) != Z_OK) {
      decoder->error = "cannot restart the inflater";
      return CXHR_DECODE_ERROR;
    }
    z->next_in = (Bytef *)*input;
    z->avail_in = given;
    status = inflate(z, Z_NO_FLUSH);
  }
  if(z->total_out > 0)
    decoder->deflate_undecided = 0;
  *produced = output_size - z->avail_out;
  *input_left -= given - z->avail_in;
  *input = z->next_in;
  switch(status) {
  case Z_STREAM_END:
    return CXHR_DECODE_END;
  case Z_OK:
  case Z_BUF_ERROR: /* no progress possible: more input, or more room */
    return CXHR_DECODE_MORE;
  default:
    decoder->error = z->msg ? z->msg : "invalid data";
    return CXHR_DECODE_ERROR;
  }
}

cxhr_decode_result cxhr_decoder_step(cxhr_decoder *decoder, const unsigned char **input, size_t *input_left,
                                     unsigned char *output, size_t output_size, size_t *produced)
{
  *produced = 0;
  switch(decoder->coding) {
  case CXHR_CODING_GZIP:
  case CXHR_CODING_DEFLATE:
    return zlib_step(decoder, input, input_left, output, output_size, produced);
  case CXHR_CODING_BROTLI: {
    size_t room = output_size;
    uint8_t *next_out = output;
    BrotliDecoderResult status = BrotliDecoderDecompressStream(decoder->brotli, input_left, input, &room, &next_out, NULL);
    *produced = output_size - room;
    if(status == BROTLI_DECODER_RESULT_SUCCESS)
      return CXHR_DECODE_END;
    if(status == BROTLI_DECODER_RESULT_ERROR) {
      decoder->error = BrotliDecoderErrorString(BrotliDecoderGetErrorCode(decoder->brotli));
      return CXHR_DECODE_ERROR;
    }
    return CXHR_DECODE_MORE;
  }
  case CXHR_CODING_ZSTD: {
    ZSTD_inBuffer in = {*input, *input_left, 0};
    ZSTD_outBuffer out = {output, output_size, 0};
    size_t status = ZSTD_decompressStream(decoder->zstd, &out, &in);
    *produced = out.pos;
    *input += in.pos;
    *input_left -= in.pos;
    if(ZSTD_isError(status)) {
      decoder->error = ZSTD_getErrorName(status);
      return CXHR_DECODE_ERROR;
    }
    /* A frame may end and another follow: the stream ends with the body. */
    return CXHR_DECODE_MORE;
  }
  }
  decoder->error = "unknown coding";
  return CXHR_DECODE_ERROR;
}

const char *cxhr_decoder_error(const cxhr_decoder *decoder)
{
  return decoder->error ? decoder->error : "invalid data";
}

void cxhr_decoder_free(cxhr_decoder *decoder)
{
  if(!decoder)
    return;
  switch(decoder->coding) {
  case CXHR_CODING_GZIP:
  case CXHR_CODING_DEFLATE:
    inflateEnd(&decoder->zlib);
    break;
  case CXHR_CODING_BROTLI:
    BrotliDecoderDestroyInstance(decoder->brotli);
    break;
  case CXHR_CODING_ZSTD:
    ZSTD_freeDStream(decoder->zstd);
    break;
  }
  free(decoder);
}
