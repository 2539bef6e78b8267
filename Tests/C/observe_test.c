/* Checks seeing a request from C: the events of a Digest send in order (each once, DONE
 * last, for a synchronous send), the phase times, a redacted trace, and bad input.
 *   observe_test DIGEST_URL USER PASSWORD FAULT_URL
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* memmem and nanosleep with -std=c11 */
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cxhr_event_kind kinds[64];
static int statuses[64];
static char details[64][256];
static int count, dones, after_done;
static char *trace_out; /* header lines sent, concatenated */
static size_t trace_out_length;
static int password_seen;
static const char *password;

static void on_event(cxhr_request *request, const cxhr_event *event, void *user_data)
{
  (void)request;
  CHECK(user_data == (void *)&kinds);
  CHECK(event->detail != NULL);
  pthread_mutex_lock(&lock);
  if(dones > 0)
    after_done++;
  if(count < 64) {
    kinds[count] = event->kind;
    statuses[count] = event->status;
    snprintf(details[count], sizeof details[count], "%s", event->detail ? event->detail : "");
    count++;
  }
  if(event->kind == CXHR_EVENT_DONE) {
    /* The send's metrics are there when DONE is reported. */
    CHECK(cxhr_get_time(request, CXHR_TIME_TOTAL) > 0);
    dones++;
  }
  pthread_mutex_unlock(&lock);
}

static void on_trace(cxhr_request *request, cxhr_trace_kind kind, const void *data, size_t length, void *user_data)
{
  (void)request;
  (void)user_data;
  pthread_mutex_lock(&lock);
  if(memmem(data, length, password, strlen(password)))
    password_seen++;
  if(kind == CXHR_TRACE_HEADER_OUT) {
    char *longer = realloc(trace_out, trace_out_length + length + 1);
    if(longer) {
      trace_out = longer;
      memcpy(trace_out + trace_out_length, data, length);
      trace_out_length += length;
      trace_out[trace_out_length] = 0;
    }
  }
  pthread_mutex_unlock(&lock);
}

static int wait_for_done(void)
{
  for(int i = 0; i < 200; i++) {
    pthread_mutex_lock(&lock);
    int done = dones;
    pthread_mutex_unlock(&lock);
    if(done)
      return 1;
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  }
  return 0;
}

int main(int argc, char **argv)
{
  if(argc != 5) {
    fprintf(stderr, "usage: observe_test DIGEST_URL USER PASSWORD FAULT_URL\n");
    return 2;
  }
  password = argv[3];

  /* A synchronous Digest send: its events arrive on the callback thread, in order. */
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_set_event_callback(request, on_event, &kinds));
  CHECK(cxhr_set_trace_callback(request, on_trace, NULL));
  CHECK(cxhr_open(request, "GET", argv[1], false, argv[2], argv[3], "digest"));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(wait_for_done());
  nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
  pthread_mutex_lock(&lock);
  CHECK(count >= 7);
  CHECK(kinds[0] == CXHR_EVENT_STARTED);
  CHECK(kinds[1] == CXHR_EVENT_CONNECTED && strcmp(details[1], "127.0.0.1") == 0 && statuses[1] > 0);
  CHECK(kinds[2] == CXHR_EVENT_REQUEST_SENT);
  CHECK(kinds[3] == CXHR_EVENT_AUTHENTICATION_ROUND && statuses[3] == 401 && strcmp(details[3], "Digest") == 0);
  CHECK(kinds[count - 1] == CXHR_EVENT_DONE && statuses[count - 1] == 200);
  CHECK(dones == 1 && after_done == 0);
  CHECK(password_seen == 0);
  CHECK(trace_out && strstr(trace_out, "Authorization: [redacted]\r\n"));
  CHECK(trace_out && !strstr(trace_out, "Digest username"));
  pthread_mutex_unlock(&lock);

  /* The phase times, in curl's order. */
  double lookup = cxhr_get_time(request, CXHR_TIME_NAMELOOKUP), connect = cxhr_get_time(request, CXHR_TIME_CONNECT),
         pre = cxhr_get_time(request, CXHR_TIME_PRETRANSFER), first = cxhr_get_time(request, CXHR_TIME_STARTTRANSFER),
         total = cxhr_get_time(request, CXHR_TIME_TOTAL);
  /* An authentication round may look the name up again after the first connect: libcurl's figures. */
  CHECK(lookup >= 0 && lookup <= pre && connect <= pre && pre <= first && first <= total && total > 0);
  CHECK(cxhr_get_time(request, CXHR_TIME_TLS) == 0);
  CHECK(cxhr_get_time(request, CXHR_TIME_REDIRECT) == 0);
  CHECK(cxhr_get_time(request, CXHR_TIME_QUEUE) == 0);
  CHECK(cxhr_get_time(request, (cxhr_time)99) == -1);

  /* Re-opened: unknown again. Cleared callbacks: a send reports nothing more. */
  CHECK(cxhr_open(request, "GET", argv[4], false, NULL, NULL, NULL));
  CHECK(cxhr_get_time(request, CXHR_TIME_TOTAL) == -1);
  CHECK(cxhr_set_event_callback(request, NULL, NULL));
  CHECK(cxhr_set_trace_callback(request, NULL, NULL));
  int before = count;
  CHECK(cxhr_send(request, NULL, 0, 30));
  nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
  pthread_mutex_lock(&lock);
  CHECK(count == before);
  pthread_mutex_unlock(&lock);

  /* Destroyed while a send with callbacks is in flight: no callback after destroy returns. */
  count = 0;
  dones = 0;
  CHECK(cxhr_set_event_callback(request, on_event, &kinds));
  char slow[512];
  snprintf(slow, sizeof slow, "%s/delay?ms=2000", argv[4]);
  CHECK(cxhr_open(request, "GET", slow, true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  cxhr_request_destroy(request);
  pthread_mutex_lock(&lock);
  int at_destroy = count;
  pthread_mutex_unlock(&lock);
  nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
  pthread_mutex_lock(&lock);
  CHECK(count == at_destroy);
  pthread_mutex_unlock(&lock);

  /* Bad input. */
  CHECK(!cxhr_set_event_callback(NULL, on_event, NULL));
  CHECK(!cxhr_set_trace_callback(NULL, on_trace, NULL));
  CHECK(cxhr_get_time(NULL, CXHR_TIME_TOTAL) == -1);
  CHECK(!cxhr_set_event_callback(request, on_event, NULL)); /* destroyed */

  free(trace_out);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
