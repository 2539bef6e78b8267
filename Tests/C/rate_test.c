/* Checks the C interface's rate limits: a download and an upload held to their rates and
 * intact, an abort during a rate pause ending the send once and at once, a total timeout
 * shorter than the paced time, and bad input refused.
 *   rate_test FAULT_URL
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* memmem, clock_gettime and nanosleep with -std=c11 */
#include <curlxhr.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now(void)
{
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

/* Whether the n bytes at data are the fault server's pattern (byte i is i % 251). */
static int is_pattern(const unsigned char *data, size_t n)
{
  for(size_t i = 0; i < n; i++)
    if(data[i] != (unsigned char)(i % 251))
      return 0;
  return 1;
}

static atomic_int dones;

static void on_status(cxhr_request *request, void *user_data)
{
  (void)user_data;
  if(cxhr_get_state(request) == CXHR_DONE)
    atomic_fetch_add(&dones, 1);
}

static void sleep_seconds(double seconds)
{
  struct timespec time = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
  nanosleep(&time, NULL);
}

int main(int argc, char **argv)
{
  if(argc != 2) {
    fprintf(stderr, "usage: %s FAULT_URL\n", argv[0]);
    return 2;
  }
  char url[512];
  cxhr_request *request = cxhr_request_create();
  CHECK(!cxhr_set_rate_limits(NULL, 1000, 0));
  CHECK(!cxhr_set_rate_limits(request, -1, 0));
  CHECK(!cxhr_set_rate_limits(request, 0, -1));
  CHECK(cxhr_set_rate_limits(request, 0, 0));

  /* 64 KiB down at 32 KiB/s: about 2 s, whole. */
  snprintf(url, sizeof url, "%s/bytes?n=65536", argv[1]);
  CHECK(cxhr_set_rate_limits(request, 32768, 0));
  CHECK(cxhr_open(request, "GET", url, false, NULL, NULL, NULL));
  double started = now();
  CHECK(cxhr_send(request, NULL, 0, 30));
  double elapsed = now() - started;
  size_t length = 0;
  const void *body = cxhr_get_receive_buffer(request, &length);
  CHECK(cxhr_get_status(request) == 200);
  CHECK(length == 65536 && body != NULL && is_pattern(body, length));
  CHECK(elapsed > 1.6 && elapsed < 4);
  printf("download: %.2f s\n", elapsed);

  /* 64 KiB up at 32 KiB/s: about 2 s, whole. */
  static unsigned char payload[65536];
  for(size_t i = 0; i < sizeof payload; i++)
    payload[i] = (unsigned char)(i % 251);
  snprintf(url, sizeof url, "%s/sink", argv[1]);
  CHECK(cxhr_set_rate_limits(request, 0, 32768));
  CHECK(cxhr_open(request, "POST", url, false, NULL, NULL, NULL));
  started = now();
  CHECK(cxhr_send(request, payload, sizeof payload, 30));
  elapsed = now() - started;
  body = cxhr_get_receive_buffer(request, &length);
  CHECK(cxhr_get_status(request) == 200);
  CHECK(body != NULL && memmem(body, length, "\"body_length\": 65536", 20) != NULL);
  CHECK(elapsed > 1.6 && elapsed < 4);
  printf("upload: %.2f s\n", elapsed);

  /* An abort during a rate pause: DONE once, at once. */
  snprintf(url, sizeof url, "%s/bytes?n=1048576", argv[1]);
  CHECK(cxhr_set_rate_limits(request, 1024, 0));
  CHECK(cxhr_set_status_callback(request, on_status, NULL));
  CHECK(cxhr_open(request, "GET", url, true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  sleep_seconds(1.2);
  CHECK(!cxhr_set_rate_limits(request, 0, 0)); /* in flight */
  started = now();
  CHECK(cxhr_abort(request));
  CHECK(now() - started < 1);
  CHECK(cxhr_get_state(request) == CXHR_DONE && cxhr_get_failure_kind(request) == CXHR_FAILURE_ABORTED);
  sleep_seconds(0.5);
  CHECK(atomic_load(&dones) == 1);
  CHECK(cxhr_set_status_callback(request, NULL, NULL));

  /* A total timeout shorter than the paced time: the timeout failure. */
  CHECK(cxhr_open(request, "GET", url, false, NULL, NULL, NULL));
  started = now();
  CHECK(cxhr_send(request, NULL, 0, 1));
  elapsed = now() - started;
  CHECK(cxhr_get_status(request) == 0 && cxhr_get_failure_kind(request) == CXHR_FAILURE_TIMEOUT);
  CHECK(elapsed > 0.8 && elapsed < 2.5);
  cxhr_request_destroy(request);

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
