#include "cheadrecorder.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Inlined into the header callback, which libcurl calls for every header line. */
static inline __attribute__((always_inline)) int record(cxhr_head_recorder *recorder, const char *line, size_t length)
{
  size_t needed = recorder->count + length + 1;
  if(needed > recorder->capacity) {
    /* 1 KiB holds a typical head; the buffer is kept from head to head. */
    size_t larger = recorder->capacity ? recorder->capacity * 2 : 1024;
    if(larger < needed)
      larger = needed;
    unsigned char *grown = realloc(recorder->bytes, larger);
    if(!grown)
      return 0;
    recorder->bytes = grown;
    recorder->capacity = larger;
  }
  if(length > 11 && (line[0] | 0x20) == 's' && strncasecmp(line, "set-cookie:", 11) == 0)
    recorder->saw_set_cookie = 1;
  else if(length > 18 && (line[0] | 0x20) == 't' && strncasecmp(line, "transfer-encoding:", 18) == 0)
    recorder->has_transfer_encoding = 1;
  else if(length > 15 && (line[0] | 0x20) == 'c' && line[7] == '-') {
    /* Content-Length and Content-Encoding only: the bytes that tell them from Content-Type
       and Connection first, then the whole name. */
    char ninth = line[8] | 0x20;
    if(ninth == 'l' && strncasecmp(line, "content-length:", 15) == 0)
      recorder->content_length_values += memchr(line + 15, ',', length - 15) ? 2 : 1;
    else if(ninth == 'e' && length > 17 && strncasecmp(line, "content-encoding:", 17) == 0)
      recorder->has_content_encoding = 1;
  }
  memcpy(recorder->bytes + recorder->count, line, length);
  recorder->count += length;
  if(length == 0 || line[length - 1] != '\n')
    recorder->bytes[recorder->count++] = '\n';
  return 1;
}

int cxhr_head_record_line(cxhr_head_recorder *recorder, const char *line, size_t length)
{
  return record(recorder, line, length);
}

void cxhr_head_clear(cxhr_head_recorder *recorder)
{
  recorder->count = 0;
  recorder->received = 0;
  recorder->saw_set_cookie = 0;
  recorder->has_transfer_encoding = 0;
  recorder->content_length_values = 0;
  recorder->has_content_encoding = 0;
}

/* "HTTP/x[.y] 401" or "... 407": a status line that carries an authentication challenge. */
static int is_challenge(const char *line, size_t length)
{
  if(length < 12 || memcmp(line, "HTTP/", 5) != 0)
    return 0;
  const char *space = memchr(line, ' ', length);
  if(!space || (size_t)(space - line) + 4 > length)
    return 0;
  return space[1] == '4' && space[2] == '0' && (space[3] == '1' || space[3] == '7');
}

size_t cxhr_head_callback(char *data, size_t size, size_t count, void *userdata)
{
  cxhr_head_recorder *recorder = userdata;
  size_t length = size * count;
  recorder->received += length;
  /* The empty line that ends a head (no header line starts with CR or LF). */
  if(length == 0 || data[0] == '\r' || data[0] == '\n') {
    if(!recorder->head_ended)
      return length;
    return recorder->head_ended(recorder->context) ? length : 0;
  }
  if(recorder->count == 0 && recorder->challenged && is_challenge(data, length))
    recorder->challenged(recorder->context);
  return record(recorder, data, length) ? length : 0;
}
