/*
 * The header callback: it records the header lines libcurl hands over and calls back once a
 * head is complete, so the Swift side runs once a head instead of once a line.
 *
 * Recording only: lines are copied, each ending in LF, and Set-Cookie and Transfer-Encoding
 * and Content-Encoding fields are noted, and Content-Length fields counted; the lines are read (status line,
 * fields) in Swift.
 */
#ifndef CHEADRECORDER_H
#define CHEADRECORDER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

typedef struct cxhr_head_recorder {
  /* The lines of the head being read, each ending in LF: count bytes of capacity. */
  unsigned char *bytes;
  size_t count;
  size_t capacity;
  /* Bytes the header callback was given since the recorder was last cleared, the empty lines
     that end heads included (libcurl's CURLINFO_HEADER_SIZE, counted as it goes). */
  size_t received;
  /* A Set-Cookie field was recorded since the recorder was last cleared (cxhr_head_clear). */
  int saw_set_cookie;
  /* A Transfer-Encoding field is among the lines being read (reset with them). */
  int has_transfer_encoding;
  /* At least how many values Content-Length fields of those lines hold (a line with a comma
     counts 2): more than one needs a look (reset with the lines). */
  int content_length_values;
  /* A Content-Encoding field is among the lines being read (reset with them). */
  int has_content_encoding;
  /* Called with context when the empty line that ends a head arrives (if not NULL); the
     head's lines are in bytes, and the callee empties them (count = 0). Returns 0 to stop
     the transfer. */
  int (*head_ended)(void *context);
  /* Called with context when a status line of 401 or 407 arrives (if not NULL), before
     libcurl reads the head's authentication challenge. */
  void (*challenged)(void *context);
  void *context;
} cxhr_head_recorder;

/* Appends one header line (with or without its CRLF), adding an LF where it has none.
   Returns 0 when memory runs out. */
int cxhr_head_record_line(cxhr_head_recorder *recorder, const char *line, size_t length);

/* Forgets the lines and the notes (a new transfer starts). */
void cxhr_head_clear(cxhr_head_recorder *recorder);

/* CURLOPT_HEADERFUNCTION, with CURLOPT_HEADERDATA pointing to a recorder. */
size_t cxhr_head_callback(char *data, size_t size, size_t count, void *recorder);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* CHEADRECORDER_H */
