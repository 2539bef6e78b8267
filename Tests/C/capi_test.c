/* Checks the C interface as a C program uses it: misuse is refused, requests work sync and
 * async, destroying a request mid-transfer or from its own callback is safe, cookies reach
 * the store file before DONE, proxies are used and dropped, failures have their kind, sent
 * bytes are counted, sends are measured, phases are timed out, ranges and encoded bodies
 * arrive as asked, the cookie jar is listed, set and deleted, from many threads too, and
 * queues hold requests back, refuse beyond their limit and end their waiting ones, trailers
 * are read, routing entries are checked and followed, and credentials, methods and URLs that
 * would split the request are refused.
 *   capi_test HTTP_URL FAULT_URL [SELF_SIGNED_HTTPS_URL]     (the loopback servers' URLs)
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* memmem */
#include <curlxhr.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static char http_url[512], fault_url[512], self_signed_url[512];
static const char *user, *password;  /* the test servers' Basic and Digest user, when given */

static void sleep_ms(long ms)
{
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

static const char *url(const char *base, const char *path)
{
  static char buffer[1024];
  snprintf(buffer, sizeof buffer, "%s%s", base, path);
  return buffer;
}

static void misuse_is_refused(void)
{
  size_t length = 99;
  CHECK(!cxhr_open(NULL, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_state(NULL) == CXHR_UNSENT);
  CHECK(cxhr_get_status(NULL) == 0);
  CHECK(cxhr_get_status_text(NULL) == NULL);
  CHECK(cxhr_get_receive_buffer(NULL, &length) == NULL && length == 0);
  CHECK(!cxhr_send(NULL, NULL, 0, 0));
  CHECK(!cxhr_abort(NULL));
  CHECK(!cxhr_set_status_callback(NULL, NULL, NULL));
  cxhr_request_destroy(NULL);

  cxhr_request *request = cxhr_request_create();
  CHECK(request != NULL);
  CHECK(cxhr_get_last_error_code(NULL) == CXHR_ERROR_NONE);
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_NONE);
  CHECK(!cxhr_send(request, NULL, 0, 0));                        /* send before open */
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_STATE);
  CHECK(!cxhr_open(request, NULL, url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_open(request, "GET", NULL, false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", "not a url", false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", url(http_url, "/"), false, "u", "p", "KERBEROS5"));
  CHECK(cxhr_open(request, "GET", url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_last_error(request) == NULL);
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_NONE);
  CHECK(!cxhr_set_request_header(request, NULL, "v"));
  CHECK(!cxhr_set_request_header(request, "X-Bad", "a\r\nInjected: 1"));
  /* Nothing that goes into the request's head may split it; the request stays OPENED. */
  CHECK(!cxhr_open(request, "GET", url(http_url, "/"), false, "alice\r\nX-Injected: 1", "p", "DIGEST"));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(cxhr_get_last_error(request), "\\r\\n") != NULL && strchr(cxhr_get_last_error(request), '\n') == NULL);
  CHECK(!cxhr_open(request, "GET", url(http_url, "/"), false, "alice", "p\nq", NULL));
  CHECK(!cxhr_open(request, "TRACE", url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "connect", url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", "http://a.example:80\\@b.example/", false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", "http://127.0.0.1/a\r\nX-Injected: 1", false, NULL, NULL, NULL));
  CHECK(!cxhr_enable_http_proxy(request, "127.0.0.1", 3128, "bob\r\nX-Injected: 1", "p", "BASIC"));
  CHECK(cxhr_get_state(request) == CXHR_OPENED);
  CHECK(!cxhr_send(request, NULL, 5, 0));                         /* NULL data, non-zero length */
  CHECK(!cxhr_send_file(request, "/nonexistent/file", 0));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(cxhr_get_state(request) == CXHR_OPENED);
  cxhr_request_destroy(request);
  /* A destroyed handle is refused, never dereferenced. */
  CHECK(!cxhr_open(request, "GET", url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_all_response_headers(request) == NULL);
  cxhr_request_destroy(request);
}

static void sync_requests_work(void)
{
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/10k"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_state(request) == CXHR_DONE);
  CHECK(cxhr_get_status(request) == 200);
  CHECK(strcmp(cxhr_get_status_text(request), "OK") == 0);
  CHECK(strcmp(cxhr_get_response_header(request, "content-length"), "10240") == 0);
  CHECK(strcmp(cxhr_get_response_header(request, "X-Absent"), "") == 0);
  CHECK(strstr(cxhr_get_all_response_headers(request), "Content-Length: 10240") != NULL);
  size_t length = 0;
  const unsigned char *body = cxhr_get_receive_buffer(request, &length);
  int pattern_ok = body != NULL && length == 10240;
  for(size_t i = 0; pattern_ok && i < length; i++)
    pattern_ok = body[i] == i % 251;
  CHECK(pattern_ok);
  CHECK(cxhr_get_receive_buffer(request, &length) == NULL && length == 0);   /* drained */

  /* A binary body with NUL bytes arrives whole. */
  static const char data[] = "a\0b\0\0c";
  CHECK(cxhr_open(request, "POST", url(http_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(cxhr_set_request_header(request, "Content-Type", "application/octet-stream"));
  CHECK(cxhr_send(request, data, sizeof data - 1, 30));
  CHECK(cxhr_get_status(request) == 200);
  char *text = NULL;
  const char *bytes = cxhr_get_receive_buffer(request, &length);
  if(bytes) {
    text = calloc(1, length + 1);
    memcpy(text, bytes, length);
  }
  CHECK(text && strstr(text, "\"body_b64\": \"YQBiAABj\"") != NULL);        /* a\0b\0\0c */
  free(text);
  CHECK(cxhr_open(request, "POST", url(http_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(cxhr_set_post_value(request, "a b", "k"));
  CHECK(cxhr_send(request, NULL, 0, 30));
  text = NULL;
  bytes = cxhr_get_receive_buffer(request, &length);
  if(bytes) {
    text = calloc(1, length + 1);
    memcpy(text, bytes, length);
  }
  CHECK(text && strstr(text, "\"body_b64\": \"az1hK2I=\"") != NULL);           /* "k=a+b" */
  free(text);

  /* A header left out: the request's own, and one libcurl adds (its User-Agent). */
  CHECK(!cxhr_remove_request_header(request, "User-Agent"));                  /* not OPENED */
  CHECK(cxhr_open(request, "GET", url(http_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(!cxhr_remove_request_header(request, NULL));
  CHECK(!cxhr_remove_request_header(request, "Bad Name"));
  CHECK(!cxhr_remove_request_header(request, "Content-Length"));
  CHECK(cxhr_set_request_header(request, "X-Gone", "1"));
  CHECK(cxhr_remove_request_header(request, "X-Gone"));
  CHECK(cxhr_remove_request_header(request, "User-Agent"));
  CHECK(cxhr_set_request_header(request, "X-Kept", "2"));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  text = NULL;
  bytes = cxhr_get_receive_buffer(request, &length);
  if(bytes) {
    text = calloc(1, length + 1);
    memcpy(text, bytes, length);
  }
  CHECK(text && strstr(text, "\"X-Kept\": \"2\"") != NULL);
  CHECK(text && strstr(text, "X-Gone") == NULL && strstr(text, "User-Agent") == NULL);
  free(text);

  /* Network failures: status 0 and a text. */
  CHECK(cxhr_open(request, "GET", "http://127.0.0.1:1/", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 10));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_status_text(request) && strlen(cxhr_get_status_text(request)) > 0);
  cxhr_request_destroy(request);
  CHECK(strcmp(cxhr_version(), CURLXHR_VERSION) == 0);
}

struct recording {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  cxhr_state states[64];
  int count;
  int destroy_in_done;
  int callbacks_after_destroy;
  int destroyed;
};

static void record(cxhr_request *request, void *user_data)
{
  struct recording *recording = user_data;
  cxhr_state state = cxhr_get_state(request);
  size_t length;
  cxhr_get_receive_buffer(request, &length);
  pthread_mutex_lock(&recording->lock);
  if(recording->destroyed)
    recording->callbacks_after_destroy++;
  if(recording->count < 64)
    recording->states[recording->count++] = state;
  pthread_cond_broadcast(&recording->changed);
  pthread_mutex_unlock(&recording->lock);
  if(state == CXHR_DONE && recording->destroy_in_done) {
    cxhr_request_destroy(request);                        /* from inside its own callback */
    CHECK(cxhr_get_state(request) == CXHR_UNSENT);        /* refused from now on */
    pthread_mutex_lock(&recording->lock);
    recording->destroyed = 1;
    pthread_cond_broadcast(&recording->changed);
    pthread_mutex_unlock(&recording->lock);
  }
}

static int wait_for(struct recording *recording, cxhr_state state)
{
  pthread_mutex_lock(&recording->lock);
  for(int tries = 0; tries < 300; tries++) {
    for(int i = 0; i < recording->count; i++)
      if(recording->states[i] == state) {
        pthread_mutex_unlock(&recording->lock);
        return 1;
      }
    pthread_mutex_unlock(&recording->lock);
    sleep_ms(100);
    pthread_mutex_lock(&recording->lock);
  }
  pthread_mutex_unlock(&recording->lock);
  return 0;
}

static void async_requests_work(void)
{
  struct recording recording = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 1, 0, 0};
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_set_status_callback(request, record, &recording));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/drip?chunks=3&size=100&interval_ms=50"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(wait_for(&recording, CXHR_DONE));
  sleep_ms(200);
  pthread_mutex_lock(&recording.lock);
  CHECK(recording.destroyed);
  CHECK(recording.count >= 5);
  CHECK(recording.states[0] == CXHR_OPENED && recording.states[1] == CXHR_SENT &&
        recording.states[2] == CXHR_HEADERS_RECEIVED && recording.states[3] == CXHR_LOADING);
  CHECK(recording.states[recording.count - 1] == CXHR_DONE);
  CHECK(recording.callbacks_after_destroy == 0);
  pthread_mutex_unlock(&recording.lock);
}

static void destroy_during_transfer_is_safe(void)
{
  struct recording recording = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0};
  cxhr_request *request = cxhr_request_create();
  cxhr_set_status_callback(request, record, &recording);
  CHECK(cxhr_open(request, "GET", url(fault_url, "/drip?chunks=50&size=100&interval_ms=50"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(wait_for(&recording, CXHR_LOADING));
  cxhr_request_destroy(request);
  pthread_mutex_lock(&recording.lock);
  recording.destroyed = 1;
  pthread_mutex_unlock(&recording.lock);
  sleep_ms(500);
  pthread_mutex_lock(&recording.lock);
  CHECK(recording.callbacks_after_destroy == 0);
  pthread_mutex_unlock(&recording.lock);
  CHECK(!cxhr_abort(request));
}

static void cookies_persist(const char *store)
{
  cxhr_request *request = cxhr_request_create();
  CHECK(strcmp(cxhr_cookies_get_file(), store) == 0);
  CHECK(cxhr_open(request, "GET", url(http_url, "/echo?set_cookie=capi%3D1%3B%20Max-Age%3D600%3B%20Path%3D%2F"),
                  false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  /* On disk when the request is DONE. */
  char text[4096] = {0};
  FILE *file = fopen(store, "r");
  CHECK(file != NULL);
  if(file) {
    fread(text, 1, sizeof text - 1, file);
    fclose(file);
  }
  CHECK(strstr(text, "\tcapi\t1") != NULL);
  cxhr_request_destroy(request);
}

static void proxies(void)
{
  int port = 0;
  sscanf(fault_url, "http://127.0.0.1:%d", &port);
  cxhr_request *request = cxhr_request_create();
  CHECK(!cxhr_enable_http_proxy(request, "127.0.0.1", 0, NULL, NULL, NULL));
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(!cxhr_enable_http_proxy(request, "127.0.0.1", port, "u", "p", "KERBEROS5"));
  CHECK(!cxhr_enable_http_proxy(request, NULL, port, NULL, NULL, NULL));
  /* The fault server answers proxy requests too, and shows the target it was asked for. */
  CHECK(cxhr_enable_http_proxy(request, "127.0.0.1", port, NULL, NULL, NULL));
  CHECK(cxhr_open(request, "GET", "http://www.example.test/record", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  size_t length = 0;
  const char *body = cxhr_get_receive_buffer(request, &length);
  CHECK(body != NULL && memmem(body, length, "http://www.example.test/record", 30) != NULL);
  /* Direct again: www.example.test does not resolve. */
  CHECK(cxhr_disable_http_proxy(request));
  CHECK(cxhr_open(request, "GET", "http://www.example.test/record", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(!cxhr_get_use_environment_proxy());
  cxhr_set_use_environment_proxy(true);
  CHECK(cxhr_get_use_environment_proxy());
  cxhr_set_use_environment_proxy(false);
  cxhr_request_destroy(request);
}

/* The kind of each failure a loopback setup can cause, and NONE when nothing failed. */
static void failure_kinds(void)
{
  CHECK(cxhr_get_failure_kind(NULL) == CXHR_FAILURE_NONE);
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_NONE);              /* never sent */
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200 && cxhr_get_failure_kind(request) == CXHR_FAILURE_NONE);

  static const struct {
    const char *url;
    double timeout_s;
    cxhr_failure_kind kind;
  } cases[] = {
    {"http://127.0.0.1:1/", 10, CXHR_FAILURE_CONNECTION},
    {"http://nonexistent.invalid/", 10, CXHR_FAILURE_DNS},
    {"FAULT/delay?ms=3000", 0.3, CXHR_FAILURE_TIMEOUT},
    {"FAULT/redirect/loop", 10, CXHR_FAILURE_REDIRECTS},
    {"FAULT/malformed", 10, CXHR_FAILURE_RESPONSE},
    {"SELF_SIGNED/", 10, CXHR_FAILURE_TLS},
  };
  for(size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char target[1024];
    if(strncmp(cases[i].url, "FAULT", 5) == 0)
      snprintf(target, sizeof target, "%s%s", fault_url, cases[i].url + 5);
    else if(strncmp(cases[i].url, "SELF_SIGNED", 11) == 0) {
      if(!self_signed_url[0])
        continue;
      snprintf(target, sizeof target, "%s%s", self_signed_url, cases[i].url + 11);
    }
    else
      snprintf(target, sizeof target, "%s", cases[i].url);
    CHECK(cxhr_open(request, "GET", target, false, NULL, NULL, NULL));
    CHECK(cxhr_send(request, NULL, 0, cases[i].timeout_s));
    cxhr_failure_kind kind = cxhr_get_failure_kind(request);
    CHECK(cxhr_get_status(request) == 0 && kind == cases[i].kind);
    if(kind != cases[i].kind)
      printf("  %s: kind %d, expected %d (%s)\n", target, (int)kind, (int)cases[i].kind,
             cxhr_get_status_text(request));
  }
  /* A proxy that cannot be reached. */
  CHECK(cxhr_enable_http_proxy(request, "127.0.0.1", 1, NULL, NULL, NULL));
  CHECK(cxhr_open(request, "GET", "http://www.example.test/", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 10));
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY);
  CHECK(cxhr_disable_http_proxy(request));
  /* A new open forgets the failure. */
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_NONE);
  cxhr_request_destroy(request);

  /* An abort in flight. */
  struct recording recording = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0};
  request = cxhr_request_create();
  cxhr_set_status_callback(request, record, &recording);
  CHECK(cxhr_open(request, "GET", url(fault_url, "/drip?chunks=50&size=100&interval_ms=50"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(wait_for(&recording, CXHR_LOADING));
  CHECK(cxhr_abort(request));
  CHECK(cxhr_get_state(request) == CXHR_DONE);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_ABORTED);
  cxhr_request_destroy(request);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_NONE);               /* destroyed */
}

/* Body bytes sent: counted after a POST, 0 without a body; refused lengths send nothing. */
static void bytes_sent(void)
{
  CHECK(cxhr_get_bytes_sent(NULL) == 0);
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_get_bytes_sent(request) == 0);
  static char body[5000];
  memset(body, 'b', sizeof body);
  CHECK(cxhr_open(request, "POST", url(fault_url, "/sink"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, body, sizeof body, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_get_bytes_sent(request) == 5000);
  size_t length = 0;
  const char *answer = cxhr_get_receive_buffer(request, &length);
  CHECK(answer != NULL && memmem(answer, length, "\"body_length\": 5000", 19) != NULL);
  CHECK(cxhr_open(request, "GET", url(fault_url, "/sink"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_bytes_sent(request) == 0);
  /* A length no buffer can have (above PTRDIFF_MAX) is refused, not trusted. */
  CHECK(cxhr_open(request, "POST", url(fault_url, "/sink"), false, NULL, NULL, NULL));
  CHECK(!cxhr_send(request, body, (size_t)PTRDIFF_MAX + 1, 30));
  CHECK(!cxhr_send(request, body, SIZE_MAX, 30));
  CHECK(cxhr_get_last_error(request) != NULL && strstr(cxhr_get_last_error(request), "PTRDIFF_MAX") != NULL);
  CHECK(cxhr_get_state(request) == CXHR_OPENED);
  cxhr_request_destroy(request);
}

/* Lengths no buffer can have (SIZE_MAX, PTRDIFF_MAX + 1) are refused in every state, and a
   send the state refuses copies nothing: a valid pointer with a huge length is never read. */
static void impossible_lengths_are_refused_in_every_state(void)
{
  static const char body[] = "0123456789abcdef";
  const size_t lengths[] = {SIZE_MAX, (size_t)PTRDIFF_MAX + 1, (size_t)PTRDIFF_MAX};
  cxhr_request *request = cxhr_request_create();
  CHECK(request != NULL);
  for(int state = 0; state < 4; state++) {
    if(state == 1)  /* OPENED */
      CHECK(cxhr_open(request, "POST", url(fault_url, "/sink"), false, NULL, NULL, NULL));
    if(state == 2) {  /* in flight: SENT, HEADERS_RECEIVED or LOADING */
      CHECK(cxhr_open(request, "GET", url(fault_url, "/drip?chunks=20&size=10&interval_ms=100"), true, NULL, NULL, NULL));
      CHECK(cxhr_send(request, NULL, 0, 30));
    }
    if(state == 3) {  /* DONE */
      CHECK(cxhr_abort(request));
      CHECK(cxhr_get_state(request) == CXHR_DONE);
    }
    cxhr_state before = cxhr_get_state(request);
    for(size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
      /* PTRDIFF_MAX itself passes the length check: only the OPENED state would read it,
         and there it is not tried. */
      if(before == CXHR_OPENED && lengths[i] == (size_t)PTRDIFF_MAX)
        continue;
      CHECK(!cxhr_send(request, body, lengths[i], 0));
      CHECK(cxhr_get_last_error(request) != NULL);
      CHECK(cxhr_get_last_error_code(request) != CXHR_ERROR_NONE);
      CHECK(!cxhr_send(request, NULL, lengths[i], 0));
      CHECK(cxhr_get_state(request) == before || before != CXHR_OPENED);
    }
    CHECK(cxhr_get_bytes_sent(request) == 0);
  }
  cxhr_cookies_free(NULL, (size_t)PTRDIFF_MAX + 1);
  size_t count = SIZE_MAX;
  cxhr_cookie *none = cxhr_cookies_list("not a url", &count);
  CHECK(none == NULL && count == 0);
  cxhr_request_destroy(request);
}

/* What a send measured: protocol, effective URL, redirects and times, as curl's -w shows. */
static void metrics(void)
{
  cxhr_metrics measured = {"x", "x", 99, 1, 1, 1};
  CHECK(!cxhr_get_metrics(NULL, &measured));
  CHECK(measured.http_version == NULL && measured.effective_url == NULL && measured.redirect_count == 0 &&
        measured.connect_s == -1 && measured.start_transfer_s == -1 && measured.total_s == -1);
  CHECK(!cxhr_get_metrics(NULL, NULL));
  cxhr_request *request = cxhr_request_create();
  CHECK(!cxhr_get_metrics(request, NULL));
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_metrics(request, &measured));                          /* nothing sent yet */
  CHECK(measured.http_version == NULL && measured.effective_url == NULL && measured.total_s == -1);
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_metrics(request, &measured));
  CHECK(measured.http_version && strcmp(measured.http_version, "HTTP/1.1") == 0);
  CHECK(measured.effective_url && strcmp(measured.effective_url, url(http_url, "/files/100b")) == 0);
  CHECK(measured.redirect_count == 0);
  CHECK(measured.connect_s >= 0 && measured.connect_s <= measured.start_transfer_s &&
        measured.start_transfer_s <= measured.total_s && measured.total_s < 30);

  /* Two redirects: counted, and the URL where they led. */
  char chain[1024];
  snprintf(chain, sizeof chain, "%s", url(fault_url, "/redirect/chain?n=2"));
  CHECK(cxhr_open(request, "GET", chain, false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_get_metrics(request, &measured));
  CHECK(measured.redirect_count == 2);
  CHECK(measured.effective_url && strcmp(measured.effective_url, url(fault_url, "/redirect/chain?n=0")) == 0);
  CHECK(measured.total_s > 0);
  cxhr_metrics again;
  CHECK(cxhr_get_metrics(request, &again));
  CHECK(again.effective_url == measured.effective_url);                  /* the same string, still valid */

  /* A failure before any response: no protocol. */
  CHECK(cxhr_open(request, "GET", "http://127.0.0.1:1/", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 10));
  CHECK(cxhr_get_metrics(request, &measured));
  CHECK(measured.http_version == NULL && measured.redirect_count == 0);
  cxhr_request_destroy(request);
  CHECK(!cxhr_get_metrics(request, &measured));                          /* destroyed */
}

/* A chunked response's trailer fields are readable once it is DONE, never taken for a head. */
static void trailers(void)
{
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_open(request, "GET", url(fault_url, "/trailers?n=3000&name=X-Checksum&value=abc"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_response_trailer(request, "X-Checksum") != NULL && strcmp(cxhr_get_response_trailer(request, "X-Checksum"), "") == 0);
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  size_t length = 0;
  CHECK(cxhr_get_receive_buffer(request, &length) != NULL && length == 3000);
  CHECK(strcmp(cxhr_get_response_trailer(request, "x-checksum"), "abc") == 0);
  CHECK(strcmp(cxhr_get_response_trailer(request, "X-Absent"), "") == 0);
  CHECK(strcmp(cxhr_get_response_header(request, "X-Checksum"), "") == 0);
  CHECK(cxhr_get_response_trailer(request, NULL) == NULL);
  CHECK(cxhr_get_response_trailer(NULL, "X-Checksum") == NULL);

  /* A body over the size limit: DONE, status 0, a failure of the response naming the limit. */
  CHECK(!cxhr_set_max_response_size(request, -1));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(cxhr_set_max_response_size(request, 1000));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/bytes?n=5000"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_RESPONSE);
  CHECK(strstr(cxhr_get_status_text(request), "1000 bytes") != NULL);
  CHECK(cxhr_set_max_response_size(request, 0));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/bytes?n=5000"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(!cxhr_set_max_response_size(NULL, 10));

  /* IPv6 only: the server listens on 127.0.0.1, which an IPv6-only request never reaches. */
  CHECK(!cxhr_set_ip_version(request, (cxhr_ip_version)5));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_ip_version(NULL, CXHR_IP_V4));
  CHECK(cxhr_set_ip_version(request, CXHR_IP_V6));
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_CONNECTION);
  CHECK(cxhr_set_ip_version(request, CXHR_IP_V4));
  CHECK(cxhr_open(request, "GET", url(http_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_set_ip_version(request, CXHR_IP_ANY));

  /* TLS versions: bad values and an inverted range refused; Apache's self-signed listener
     speaks TLS 1.3, and nothing below TLS 1.2 passes OpenSSL's default security level. */
  CHECK(!cxhr_set_tls_version(request, (cxhr_tls_version)14, CXHR_TLS_DEFAULT));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_tls_version(request, CXHR_TLS_DEFAULT, (cxhr_tls_version)9));
  CHECK(!cxhr_set_tls_version(request, CXHR_TLS_1_3, CXHR_TLS_1_2));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_tls_version(NULL, CXHR_TLS_1_2, CXHR_TLS_DEFAULT));
  if(self_signed_url[0]) {
    CHECK(cxhr_disable_peer_verification(request));
    CHECK(cxhr_set_tls_version(request, CXHR_TLS_1_3, CXHR_TLS_1_3));
    CHECK(cxhr_open(request, "GET", url(self_signed_url, "/files/100b"), false, NULL, NULL, NULL));
    CHECK(cxhr_send(request, NULL, 0, 30));
    CHECK(cxhr_get_status(request) == 200);
    CHECK(cxhr_set_tls_version(request, CXHR_TLS_DEFAULT, CXHR_TLS_1_0));
    CHECK(cxhr_open(request, "GET", url(self_signed_url, "/files/100b"), false, NULL, NULL, NULL));
    CHECK(cxhr_send(request, NULL, 0, 30));
    CHECK(cxhr_get_status(request) == 0);
    CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TLS);
  }
  CHECK(cxhr_set_tls_version(request, CXHR_TLS_DEFAULT, CXHR_TLS_DEFAULT));

  /* A CA folder: NULL, a missing one and a file refused; /etc/ssl/certs (hashed) taken. */
  CHECK(!cxhr_set_ca_certificate_path(request, NULL));
  CHECK(!cxhr_set_ca_certificate_path(request, "/nonexistent/folder"));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(!cxhr_set_ca_certificate_path(request, "/etc/hostname"));
  CHECK(!cxhr_set_ca_certificate_path(NULL, "/etc/ssl/certs"));
  CHECK(cxhr_set_ca_certificate_path(request, "/etc/ssl/certs"));

  /* The schemes allowed: none, another name, NULL refused; https only fails an http URL. */
  CHECK(!cxhr_set_allowed_schemes(request, NULL, NULL));
  CHECK(!cxhr_set_allowed_schemes(request, "", NULL));
  CHECK(!cxhr_set_allowed_schemes(request, "http,ftp", NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_allowed_schemes(NULL, "http", NULL));
  CHECK(cxhr_set_allowed_schemes(request, "https", ""));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/files/100b"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(strstr(cxhr_get_status_text(request), "Protocol \"http\"") != NULL);
  CHECK(cxhr_set_allowed_schemes(request, "http,https", NULL));
  CHECK(!cxhr_enable_location_trusted(NULL));
  CHECK(cxhr_enable_location_trusted(request));

  /* The redirect limit: within it the chain ends in 200; past it DONE, status 0, curl's words. */
  CHECK(!cxhr_set_max_redirects(request, -2));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_max_redirects(request, 10001));
  CHECK(!cxhr_set_max_redirects(NULL, 3));
  CHECK(cxhr_set_max_redirects(request, 2));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/redirect/chain?n=3"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_REDIRECTS);
  CHECK(strcmp(cxhr_get_status_text(request), "Maximum (2) redirects followed") == 0);
  CHECK(cxhr_set_max_redirects(request, -1));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/redirect/chain?n=3"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  cxhr_request_destroy(request);
}

static const cxhr_cookie *find_cookie(const cxhr_cookie *cookies, size_t count, const char *name, const char *domain)
{
  for(size_t i = 0; i < count; i++)
    if(strcmp(cookies[i].name, name) == 0 && strcmp(cookies[i].domain, domain) == 0)
      return &cookies[i];
  return NULL;
}

/* The jar from C: set, list (all and for a URL), send, replace, delete, free; bad input. */
static void cookie_store(const char *store)
{
  size_t count = 99;
  /* Refusals never crash. */
  CHECK(cxhr_cookies_list(NULL, NULL) == NULL);
  CHECK(cxhr_cookies_list("not a url", &count) == NULL && count == 0);
  count = 99;
  CHECK(cxhr_cookies_list("ftp://127.0.0.1/", &count) == NULL && count == 0);
  count = 99;
  CHECK(cxhr_cookies_list("http://\xff\xfe/", &count) == NULL && count == 0);
  CHECK(!cxhr_cookies_set(NULL));
  CHECK(!cxhr_cookies_delete(NULL));
  cxhr_cookies_free(NULL, 0);
  cxhr_cookies_free(NULL, SIZE_MAX);
  const cxhr_cookie bad[] = {
    {NULL, "v", "127.0.0.1", "/", false, false, false, 0},          /* no name */
    {"n", "v", NULL, "/", false, false, false, 0},                  /* no domain */
    {"", "v", "127.0.0.1", "/", false, false, false, 0},            /* empty name */
    {"a b", "v", "127.0.0.1", "/", false, false, false, 0},         /* space in the name */
    {"n", "a;b", "127.0.0.1", "/", false, false, false, 0},         /* ';' in the value */
    {"n", "a\tb", "127.0.0.1", "/", false, false, false, 0},        /* a control character */
    {"n", "v", ".127.0.0.1", "/", false, false, false, 0},          /* a leading dot */
    {"n", "v", "127.0.0.1", "nope", false, false, false, 0},        /* a path without '/' */
    {"n", "v", "127.0.0.1", "/", false, false, false, -5},          /* a negative expiry */
    {"\xff", "v", "127.0.0.1", "/", false, false, false, 0},        /* not UTF-8 */
  };
  for(size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(!cxhr_cookies_set(&bad[i]));
    if(cxhr_cookies_set(&bad[i]))
      printf("  bad cookie %zu was stored\n", i);
  }
  const cxhr_cookie tab_in_name = {"a\tb", NULL, "127.0.0.1", "/", false, false, false, 0};
  CHECK(!cxhr_cookies_delete(&bad[0]));                              /* no name */
  CHECK(!cxhr_cookies_delete(&bad[1]));                              /* no domain */
  CHECK(!cxhr_cookies_delete(&bad[9]));                              /* not UTF-8 */
  CHECK(!cxhr_cookies_delete(&tab_in_name));                         /* would break the jar's lines */

  /* Set: a session cookie for the servers, one for another host, one persistent. */
  const cxhr_cookie session = {"capi_session", "s1", "127.0.0.1", "/", false, false, true, 0};
  const cxhr_cookie elsewhere = {"capi_elsewhere", "e1", "elsewhere.example", "/", true, false, false, 0};
  const cxhr_cookie persistent = {"capi_kept", "k1", "127.0.0.1", NULL, false, false, false, (int64_t)time(NULL) + 600};
  const cxhr_cookie deep = {"capi_deep", NULL, "127.0.0.1", "/deep", false, false, false, 0};
  CHECK(cxhr_cookies_set(&session));
  CHECK(cxhr_cookies_set(&elsewhere));
  CHECK(cxhr_cookies_set(&persistent));
  CHECK(cxhr_cookies_set(&deep));
  /* The persistent one is in the store file when cxhr_cookies_set returns. */
  char text[8192] = {0};
  FILE *file = fopen(store, "r");
  if(file) {
    fread(text, 1, sizeof text - 1, file);
    fclose(file);
  }
  CHECK(strstr(text, "\tcapi_kept\tk1") != NULL);
  CHECK(strstr(text, "capi_session") == NULL);                     /* session cookies never */

  /* All of them. */
  cxhr_cookie *all = cxhr_cookies_list(NULL, &count);
  CHECK(all != NULL && count >= 4);
  const cxhr_cookie *found = find_cookie(all, count, "capi_session", "127.0.0.1");
  CHECK(found && strcmp(found->value, "s1") == 0 && strcmp(found->path, "/") == 0 && found->http_only &&
        !found->secure && !found->include_subdomains && found->expires == 0);
  found = find_cookie(all, count, "capi_elsewhere", "elsewhere.example");
  CHECK(found && found->include_subdomains && strcmp(found->value, "e1") == 0);
  found = find_cookie(all, count, "capi_kept", "127.0.0.1");
  CHECK(found && found->expires == persistent.expires && strcmp(found->path, "/") == 0);
  found = find_cookie(all, count, "capi_deep", "127.0.0.1");
  CHECK(found && strcmp(found->value, "") == 0 && strcmp(found->path, "/deep") == 0);
  /* A count that no list has is refused (nothing freed); then freed properly. */
  cxhr_cookies_free(all, SIZE_MAX);
  cxhr_cookies_free(all, count);

  /* For a URL: host and path matching. */
  cxhr_cookie *mine = cxhr_cookies_list(url(fault_url, "/record"), &count);
  CHECK(mine != NULL && find_cookie(mine, count, "capi_session", "127.0.0.1") &&
        find_cookie(mine, count, "capi_kept", "127.0.0.1") && !find_cookie(mine, count, "capi_elsewhere", "elsewhere.example") &&
        !find_cookie(mine, count, "capi_deep", "127.0.0.1"));
  cxhr_cookies_free(mine, count);
  mine = cxhr_cookies_list(url(fault_url, "/deep/x"), &count);
  CHECK(mine != NULL && find_cookie(mine, count, "capi_deep", "127.0.0.1"));
  cxhr_cookies_free(mine, count);
  mine = cxhr_cookies_list("http://www.elsewhere.example/", &count);             /* a subdomain */
  CHECK(mine != NULL && count == 1 && strcmp(mine[0].name, "capi_elsewhere") == 0);
  cxhr_cookies_free(mine, count);
  count = 99;
  CHECK(cxhr_cookies_list("http://nobody.example/", &count) == NULL && count == 0);   /* none: NULL */

  /* A request carries what was set from C. */
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_open(request, "GET", url(fault_url, "/record"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  size_t length = 0;
  const char *answer = cxhr_get_receive_buffer(request, &length);
  CHECK(answer != NULL && memmem(answer, length, "capi_session=s1", 15) != NULL &&
        memmem(answer, length, "capi_kept=k1", 12) != NULL);
  cxhr_request_destroy(request);

  /* Replace: same name, domain and path. */
  const cxhr_cookie replaced = {"capi_session", "s2", "127.0.0.1", "/", false, false, false, 0};
  CHECK(cxhr_cookies_set(&replaced));
  mine = cxhr_cookies_list(url(fault_url, "/"), &count);
  found = find_cookie(mine, count, "capi_session", "127.0.0.1");
  CHECK(found && strcmp(found->value, "s2") == 0 && !found->http_only);
  size_t sessions = 0;
  for(size_t i = 0; i < count; i++)
    sessions += strcmp(mine[i].name, "capi_session") == 0;
  CHECK(sessions == 1);
  cxhr_cookies_free(mine, count);

  /* Delete: by name, domain and path; the value and flags given do not matter. */
  const cxhr_cookie delete_session = {"capi_session", NULL, "127.0.0.1", NULL, true, true, false, 0};
  const cxhr_cookie delete_elsewhere = {"capi_elsewhere", "whatever", "elsewhere.example", "/", false, false, false, 0};
  CHECK(cxhr_cookies_delete(&delete_session));
  CHECK(cxhr_cookies_delete(&delete_elsewhere));
  CHECK(cxhr_cookies_delete(&persistent));
  CHECK(cxhr_cookies_delete(&deep));
  CHECK(cxhr_cookies_delete(&deep));                                /* not there: still true */
  all = cxhr_cookies_list(NULL, &count);
  CHECK(!find_cookie(all, count, "capi_session", "127.0.0.1") && !find_cookie(all, count, "capi_elsewhere", "elsewhere.example") &&
        !find_cookie(all, count, "capi_kept", "127.0.0.1") && !find_cookie(all, count, "capi_deep", "127.0.0.1"));
  cxhr_cookies_free(all, count);
  memset(text, 0, sizeof text);
  file = fopen(store, "r");
  if(file) {
    fread(text, 1, sizeof text - 1, file);
    fclose(file);
  }
  CHECK(strstr(text, "capi_kept") == NULL);                          /* gone from the file too */
}

/* Several threads set, list and delete cookies of their own at once: nothing is lost. */
enum { COOKIE_THREADS = 8, COOKIES_PER_THREAD = 40 };

static void *cookie_worker(void *argument)
{
  int thread = (int)(intptr_t)argument;
  int ok = 1;
  char domain[64], name[64], value[64], target[128];
  snprintf(domain, sizeof domain, "t%d.capi-threads.example", thread);
  snprintf(target, sizeof target, "http://%s/p/x", domain);
  for(int i = 0; i < COOKIES_PER_THREAD; i++) {
    snprintf(name, sizeof name, "c%d_%d", thread, i);
    snprintf(value, sizeof value, "v%d", i);
    /* A few persistent ones, so the store file is written from several threads too. */
    int64_t expires = i % 10 == 0 ? (int64_t)time(NULL) + 600 : 0;
    cxhr_cookie cookie = {name, value, domain, "/p", false, false, false, expires};
    ok &= cxhr_cookies_set(&cookie);
    if(i % 8 == 0) {                                                 /* list while others write */
      size_t count = 0;
      cxhr_cookie *listed = cxhr_cookies_list(target, &count);
      ok &= count == (size_t)(i + 1 - i / 2);                        /* its own only: i + 1 set, i / 2 deleted */
      cxhr_cookies_free(listed, count);
    }
    if(i % 2 == 1) {                                                 /* delete every odd one */
      snprintf(name, sizeof name, "c%d_%d", thread, i);
      cxhr_cookie gone = {name, NULL, domain, "/p", false, false, false, 0};
      ok &= cxhr_cookies_delete(&gone);
    }
  }
  size_t count = 0;
  cxhr_cookie *listed = cxhr_cookies_list(target, &count);
  ok &= count == COOKIES_PER_THREAD / 2;
  for(int i = 0; i < COOKIES_PER_THREAD; i++) {
    snprintf(name, sizeof name, "c%d_%d", thread, i);
    snprintf(value, sizeof value, "v%d", i);
    const cxhr_cookie *found = find_cookie(listed, count, name, domain);
    ok &= i % 2 == 0 ? found != NULL && strcmp(found->value, value) == 0 : found == NULL;
  }
  cxhr_cookies_free(listed, count);
  return (void *)(intptr_t)ok;
}

static void cookie_store_from_threads(void)
{
  pthread_t threads[COOKIE_THREADS];
  for(int i = 0; i < COOKIE_THREADS; i++)
    CHECK(pthread_create(&threads[i], NULL, cookie_worker, (void *)(intptr_t)i) == 0);
  for(int i = 0; i < COOKIE_THREADS; i++) {
    void *ok = NULL;
    pthread_join(threads[i], &ok);
    CHECK(ok == (void *)(intptr_t)1);
  }
  /* Every thread's survivors are there, and nothing else of theirs. */
  size_t count = 0, theirs = 0;
  cxhr_cookie *all = cxhr_cookies_list(NULL, &count);
  for(size_t i = 0; i < count; i++)
    if(strstr(all[i].domain, ".capi-threads.example")) {
      theirs++;
      cxhr_cookie gone = all[i];
      CHECK(cxhr_cookies_delete(&gone));                             /* leave nothing behind */
    }
  CHECK(theirs == COOKIE_THREADS * COOKIES_PER_THREAD / 2);
  cxhr_cookies_free(all, count);
}

/* Counts progress callbacks and keeps the counts each one read. */
struct progress_seen {
  pthread_mutex_t lock;
  int calls;
  cxhr_progress last;
};

static void on_progress(cxhr_request *request, void *user_data)
{
  struct progress_seen *seen = user_data;
  cxhr_progress now;
  if(!cxhr_get_progress(request, &now))
    return;
  pthread_mutex_lock(&seen->lock);
  seen->calls++;
  seen->last = now;
  pthread_mutex_unlock(&seen->lock);
}

static double seconds_since(const struct timespec *start)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* setTimeouts, setRange and content decoding from C. */
static void transfer_control(void)
{
  cxhr_request *request = cxhr_request_create();
  CHECK(!cxhr_set_timeouts(request, -1, 0, 0, 0));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_timeouts(NULL, 0, 0, 0, 0));
  CHECK(cxhr_set_timeouts(request, 0, 0.6, 0, 0));
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK(cxhr_open(request, "GET", url(fault_url, "/stall?n=10&head_ms=3000"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  double took = seconds_since(&start);
  CHECK(took > 0.35 && took < 0.85);
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TIMEOUT);
  const char *text = cxhr_get_status_text(request);
  CHECK(text && strncmp(text, "header timeout", 14) == 0);

  CHECK(cxhr_set_timeouts(request, 0, 0, 0.5, 0));                   /* idle, mid-body */
  CHECK(cxhr_open(request, "GET", url(fault_url, "/stall?n=2000&mid_ms=3000"), false, NULL, NULL, NULL));
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK(cxhr_send(request, NULL, 0, 0));
  took = seconds_since(&start);
  CHECK(took > 0.25 && took < 0.75);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TIMEOUT);
  text = cxhr_get_status_text(request);
  CHECK(text && strncmp(text, "idle timeout", 12) == 0);

  CHECK(cxhr_set_timeouts(request, 0, 0, 0, 0));
  CHECK(!cxhr_set_range(request, -5, -1));
  CHECK(!cxhr_set_range(request, 10, 5));
  CHECK(cxhr_set_range(request, 100, 199));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/file?size=1000"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  CHECK(cxhr_get_status(request) == 206);
  size_t length = 0;
  const uint8_t *bytes = cxhr_get_receive_buffer(request, &length);
  CHECK(length == 100);
  int pattern = length == 100;
  for(size_t i = 0; pattern && i < length; i++)
    pattern = bytes[i] == (uint8_t)((100 + i) % 251);
  CHECK(pattern);
  cxhr_request_destroy(request);

  request = cxhr_request_create();                                   /* a response file, resumed */
  char file[256], part[300], range_path[160];
  snprintf(file, sizeof file, "/tmp/curlxhr-capi-file-%d.bin", (int)getpid());
  snprintf(part, sizeof part, "%s.part", file);
  CHECK(!cxhr_set_response_file(request, "/nonexistent-folder/x.bin", false));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNWRITABLE);
  CHECK(cxhr_set_response_file(request, file, true));
  snprintf(range_path, sizeof range_path, "/file?size=300000&key=capi-%d&cut=120000", (int)getpid());
  CHECK(cxhr_open(request, "GET", url(fault_url, range_path), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(access(file, F_OK) != 0);
  FILE *kept = fopen(part, "rb");
  CHECK(kept != NULL);
  if(kept) {
    fseek(kept, 0, SEEK_END);
    CHECK(ftell(kept) == 120000);
    fclose(kept);
  }
  snprintf(range_path, sizeof range_path, "/file?size=300000&key=capi-%d", (int)getpid());
  CHECK(cxhr_open(request, "GET", url(fault_url, range_path), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  CHECK(cxhr_get_status(request) == 206);
  cxhr_get_receive_buffer(request, &length);
  CHECK(length == 0);
  FILE *whole = fopen(file, "rb");
  CHECK(whole != NULL);
  if(whole) {
    long count = 0;
    int same = 1, byte;
    while((byte = fgetc(whole)) != EOF)
      same = same && byte == (int)(count++ % 251);
    CHECK(count == 300000 && same);
    fclose(whole);
  }
  CHECK(access(part, F_OK) != 0);
  unlink(file);
  CHECK(cxhr_set_response_file(request, NULL, false));
  cxhr_request_destroy(request);

  request = cxhr_request_create();                                   /* a multipart form */
  FILE *form_file = fopen(file, "wb");
  CHECK(form_file != NULL);
  if(form_file) {
    fputs("form file", form_file);
    fclose(form_file);
  }
  CHECK(!cxhr_add_post_file(request, file, "f", NULL, NULL));         /* not OPENED */
  CHECK(cxhr_open(request, "POST", url(fault_url, "/multipart"), false, NULL, NULL, NULL));
  CHECK(!cxhr_add_post_file(request, "/nonexistent/file", "f", NULL, NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(!cxhr_add_post_file(request, NULL, "f", NULL, NULL));
  CHECK(cxhr_set_post_value(request, "v", "k"));
  CHECK(cxhr_add_post_file(request, file, "f", "named.txt", "text/x-test"));
  CHECK(cxhr_send(request, NULL, 0, 0));
  CHECK(cxhr_get_status(request) == 200);
  const char *parts = cxhr_get_receive_buffer(request, &length);
  CHECK(parts && memmem(parts, length, "\"filename\": \"named.txt\"", strlen("\"filename\": \"named.txt\"")) != NULL);
  CHECK(parts && memmem(parts, length, "\"contentType\": \"text/x-test\"", strlen("\"contentType\": \"text/x-test\"")) != NULL);
  CHECK(parts && memmem(parts, length, "\"size\": 9", strlen("\"size\": 9")) != NULL);
  unlink(file);
  cxhr_request_destroy(request);

  request = cxhr_request_create();                                   /* progress */
  struct progress_seen seen = {PTHREAD_MUTEX_INITIALIZER, 0, {0, 0, 0, 0}};
  struct recording recording = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0};
  cxhr_progress progress;
  CHECK(!cxhr_get_progress(NULL, &progress));
  CHECK(!cxhr_get_progress(request, NULL));
  CHECK(cxhr_get_progress(request, &progress) && progress.bytes_to_receive == -1 && progress.bytes_received == 0);
  CHECK(!cxhr_set_progress_callback(NULL, on_progress, &seen));
  CHECK(cxhr_set_progress_callback(request, on_progress, &seen));
  CHECK(cxhr_set_status_callback(request, record, &recording));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/bytes?n=2000000"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(wait_for(&recording, CXHR_DONE));
  pthread_mutex_lock(&seen.lock);
  CHECK(seen.calls >= 1);
  CHECK(seen.last.bytes_received == 2000000 && seen.last.bytes_to_receive == 2000000);
  pthread_mutex_unlock(&seen.lock);
  CHECK(cxhr_get_progress(request, &progress) && progress.bytes_received == 2000000 && progress.bytes_sent == 0);
  CHECK(cxhr_set_progress_callback(request, NULL, NULL));
  cxhr_request_destroy(request);

  request = cxhr_request_create();                                   /* retries */
  CHECK(!cxhr_set_retries(request, -1, 0.1));
  CHECK(!cxhr_set_retries(request, 1, -0.1));
  CHECK(cxhr_set_retries(request, 2, 0.01));
  char retry_path[128];
  snprintf(retry_path, sizeof retry_path, "/retry?key=capi-%d-%ld&fail=2&code=503", (int)getpid(), (long)time(NULL));
  CHECK(cxhr_open(request, "GET", url(fault_url, retry_path), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  CHECK(cxhr_get_status(request) == 200);
  cxhr_request_destroy(request);

  request = cxhr_request_create();                                   /* decoding on, then off */
  CHECK(cxhr_open(request, "GET", url(fault_url, "/encoded?enc=gzip&n=5000"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  bytes = cxhr_get_receive_buffer(request, &length);
  CHECK(length == 5000 && bytes && bytes[4000] == 4000 % 251);
  CHECK(cxhr_disable_content_decoding(request));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/encoded?enc=gzip&n=5000&force=1"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 0));
  bytes = cxhr_get_receive_buffer(request, &length);
  CHECK(length > 2 && length < 5000 && bytes[0] == 0x1f && bytes[1] == 0x8b);
  cxhr_request_destroy(request);
}

static int state_seen(struct recording *recording, cxhr_state state)
{
  pthread_mutex_lock(&recording->lock);
  int seen = 0;
  for(int i = 0; i < recording->count; i++)
    seen |= recording->states[i] == state;
  pthread_mutex_unlock(&recording->lock);
  return seen;
}

static void queues(void)
{
  CHECK(cxhr_queue_create(0, 0) == NULL);
  CHECK(cxhr_queue_create(1, -1) == NULL);
  CHECK(!cxhr_queue_get_counts(NULL, NULL, NULL));
  CHECK(!cxhr_queue_enqueue(NULL, NULL, false));
  cxhr_queue_destroy(NULL);
  CHECK(!cxhr_set_connection_limits(-1, 0));
  CHECK(cxhr_set_connection_limits(0, 0));

  cxhr_queue *queue = cxhr_queue_create(1, 1);
  CHECK(queue != NULL);
  /* A handle of one kind never finds an object of the other. */
  cxhr_request *stranger = cxhr_request_create();
  CHECK(!cxhr_queue_get_counts((cxhr_queue *)(void *)stranger, NULL, NULL));
  CHECK(!cxhr_abort((cxhr_request *)(void *)queue) && cxhr_get_state((cxhr_request *)(void *)queue) == CXHR_UNSENT);
  cxhr_request_destroy(stranger);
  struct recording recordings[3];
  cxhr_request *requests[3];
  for(int i = 0; i < 3; i++) {
    struct recording fresh = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0, 0};
    recordings[i] = fresh;
    requests[i] = cxhr_request_create();
    CHECK(cxhr_set_status_callback(requests[i], record, &recordings[i]));
    CHECK(cxhr_set_queue(requests[i], queue));
    CHECK(cxhr_open(requests[i], "GET", url(fault_url, "/delay?ms=300"), true, NULL, NULL, NULL));
  }
  CHECK(!cxhr_set_priority(requests[0], (cxhr_priority)7));
  CHECK(cxhr_get_last_error_code(requests[0]) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(cxhr_set_priority(requests[2], CXHR_PRIORITY_HIGH));
  CHECK(cxhr_send(requests[0], NULL, 0, 30));
  CHECK(cxhr_send(requests[1], NULL, 0, 30));
  int running = -1, waiting = -1;
  CHECK(cxhr_queue_get_counts(queue, &running, &waiting) && running == 1 && waiting == 1);
  CHECK(cxhr_get_state(requests[1]) == CXHR_OPENED);
  /* The queue holds one waiting request: a second is refused and stays OPENED. */
  CHECK(!cxhr_send(requests[2], NULL, 0, 30));
  CHECK(cxhr_get_last_error_code(requests[2]) == CXHR_ERROR_QUEUE_FULL);
  CHECK(cxhr_get_state(requests[2]) == CXHR_OPENED);
  /* Aborting the waiting one: DONE, status 0, no SENT; the room it leaves takes the third. */
  CHECK(cxhr_abort(requests[1]));
  CHECK(cxhr_get_state(requests[1]) == CXHR_DONE && cxhr_get_status(requests[1]) == 0);
  CHECK(wait_for(&recordings[1], CXHR_DONE) && !state_seen(&recordings[1], CXHR_SENT));
  CHECK(cxhr_queue_enqueue(queue, requests[2], true));
  CHECK(cxhr_queue_get_counts(queue, &running, &waiting) && running == 1 && waiting == 1);
  CHECK(wait_for(&recordings[0], CXHR_DONE) && cxhr_get_status(requests[0]) == 200);
  CHECK(wait_for(&recordings[2], CXHR_DONE) && cxhr_get_status(requests[2]) == 200);
  CHECK(state_seen(&recordings[2], CXHR_SENT));
  int tries;

  /* Aborting the waiting ones ends them and leaves the running one. */
  cxhr_queue_abort_waiting(NULL);
  CHECK(cxhr_open(requests[0], "GET", url(fault_url, "/delay?ms=300"), true, NULL, NULL, NULL));
  CHECK(cxhr_open(requests[1], "GET", url(fault_url, "/delay?ms=10"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(requests[0], NULL, 0, 30) && cxhr_send(requests[1], NULL, 0, 30));
  cxhr_queue_abort_waiting(queue);
  CHECK(cxhr_get_state(requests[1]) == CXHR_DONE && cxhr_get_status(requests[1]) == 0);
  CHECK(cxhr_get_state(requests[0]) == CXHR_SENT || cxhr_get_state(requests[0]) == CXHR_HEADERS_RECEIVED);
  CHECK(cxhr_queue_get_counts(queue, &running, &waiting) && running == 1 && waiting == 0);
  tries = 0;
  while(cxhr_get_state(requests[0]) != CXHR_DONE && tries++ < 300)
    sleep_ms(10);
  CHECK(cxhr_get_status(requests[0]) == 200);

  /* Destroying the queue ends its waiting request; the running one finishes. */
  CHECK(cxhr_open(requests[0], "GET", url(fault_url, "/delay?ms=300"), true, NULL, NULL, NULL));
  CHECK(cxhr_open(requests[1], "GET", url(fault_url, "/delay?ms=10"), true, NULL, NULL, NULL));
  CHECK(cxhr_send(requests[0], NULL, 0, 30) && cxhr_send(requests[1], NULL, 0, 30));
  CHECK(cxhr_get_state(requests[1]) == CXHR_OPENED);
  cxhr_queue_destroy(queue);
  CHECK(cxhr_get_state(requests[1]) == CXHR_DONE && cxhr_get_status(requests[1]) == 0);
  CHECK(!cxhr_queue_get_counts(queue, &running, &waiting));
  CHECK(!cxhr_set_queue(requests[2], queue));
  tries = 0;
  while(cxhr_get_state(requests[0]) != CXHR_DONE && tries++ < 300)
    sleep_ms(10);
  CHECK(cxhr_get_status(requests[0]) == 200);
  /* A request whose queue was destroyed is refused until it gets another, or none. */
  CHECK(cxhr_open(requests[0], "GET", url(fault_url, "/delay?ms=1"), false, NULL, NULL, NULL));
  CHECK(!cxhr_send(requests[0], NULL, 0, 30));
  CHECK(cxhr_get_last_error_code(requests[0]) == CXHR_ERROR_INVALID_STATE);
  CHECK(cxhr_set_queue(requests[0], NULL));
  CHECK(cxhr_send(requests[0], NULL, 0, 30) && cxhr_get_status(requests[0]) == 200);
  for(int i = 0; i < 3; i++)
    cxhr_request_destroy(requests[i]);
}

static void process_wide_settings(void)
{
  cxhr_kerberos_set_cache_file("/tmp/curlxhr-capi-test/krb5cc");
  CHECK(strcmp(cxhr_kerberos_get_cache_file(), "/tmp/curlxhr-capi-test/krb5cc") == 0);
  cxhr_kerberos_set_cache_file(NULL);
  CHECK(strstr(cxhr_kerberos_get_cache_file(), "curlxhr/krb5cc") != NULL);
  CHECK(!cxhr_kerberos_get_allow_delegation());
  cxhr_kerberos_set_allow_delegation(true);
  CHECK(cxhr_kerberos_get_allow_delegation());
  cxhr_kerberos_set_allow_delegation(false);
  CHECK(cxhr_kerberos_clear_credentials("NTLM"));
  CHECK(!cxhr_kerberos_clear_credentials("KERBEROS5"));
  cxhr_set_default_ca_certificate_file(NULL);
  cxhr_clear_cookies(false);
}

/* CXHR_AUTH_ANY: the scheme Apache's 401 offers, Digest at /digest/, Basic at /basic/. */
static void any_scheme(void)
{
  if(!user)
    return;
  const char *paths[] = {"/digest/echo", "/basic/echo"}, *types[] = {"\"Digest\"", "\"Basic\""};
  for(int i = 0; i < 2; i++) {
    cxhr_request *request = cxhr_request_create();
    CHECK(cxhr_open(request, "GET", url(http_url, paths[i]), false, user, password, CXHR_AUTH_ANY));
    CHECK(cxhr_send(request, NULL, 0, 30));
    CHECK(cxhr_get_status(request) == 200);
    size_t length = 0;
    const char *body = cxhr_get_receive_buffer(request, &length);
    char text[4096];
    snprintf(text, sizeof text, "%.*s", (int)(length < sizeof text - 1 ? length : sizeof text - 1), body ? body : "");
    CHECK(strstr(text, types[i]) != NULL);
    CHECK(cxhr_open(request, "GET", url(http_url, paths[i]), false, user, "wrong", "any"));
    CHECK(cxhr_send(request, NULL, 0, 30));
    CHECK(cxhr_get_status(request) == 401);
    cxhr_request_destroy(request);
  }
}

/* Routing: --resolve and --connect-to entries are checked by the call and send the request to
   the fault server under another name; a missing Unix socket or interface fails the send as a
   connection failure; a request without reuse, and a byte range of a file, are sent. */
static void routing(void)
{
  const char *port = strrchr(fault_url, ':') + 1;
  char entry[128], name_url[256];
  cxhr_request *request = cxhr_request_create();
  const char *bad[] = {"h:0:127.0.0.1", "h:65536:127.0.0.1", "h:80:not-an-address", "h:80:127.0.0.1\r\nX: y"};
  for(size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(!cxhr_set_resolve(request, &bad[i], 1));
    CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  }
  const char *with_null[] = {"h:80:127.0.0.1", NULL};
  CHECK(!cxhr_set_resolve(request, with_null, 2));
  CHECK(!cxhr_set_resolve(request, NULL, 1));
  CHECK(!cxhr_set_resolve(request, with_null, (size_t)-1));
  CHECK(!cxhr_set_resolve(NULL, with_null, 1));
  CHECK(cxhr_set_resolve(request, NULL, 0));
  snprintf(entry, sizeof entry, "capi.resolve-test.invalid:%s:127.0.0.1", port);
  const char *resolve[] = {entry};
  CHECK(cxhr_set_resolve(request, resolve, 1));
  snprintf(name_url, sizeof name_url, "http://capi.resolve-test.invalid:%s/echo", port);
  CHECK(cxhr_open(request, "GET", name_url, false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_set_resolve(request, NULL, 0));

  const char *bad_connect[] = {"a:1:b", "a:1:b:0"};
  CHECK(!cxhr_set_connect_to(request, bad_connect, 1));
  CHECK(!cxhr_set_connect_to(request, bad_connect + 1, 1));
  snprintf(entry, sizeof entry, "capi.connect-test.invalid:1:127.0.0.1:%s", port);
  const char *connect_to[] = {entry};
  CHECK(cxhr_set_connect_to(request, connect_to, 1));
  CHECK(cxhr_open(request, "GET", "http://capi.connect-test.invalid:1/echo", false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_set_connect_to(request, NULL, 0));

  CHECK(!cxhr_set_unix_socket(request, ""));
  CHECK(!cxhr_set_unix_socket(request, "@"));
  CHECK(cxhr_set_unix_socket(request, "/nonexistent/curlxhr.sock"));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_CONNECTION);
  CHECK(cxhr_set_unix_socket(request, NULL));

  CHECK(!cxhr_set_interface(request, "a b"));
  CHECK(cxhr_set_interface(request, "nosuchif0"));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_CONNECTION);
  CHECK(strstr(cxhr_get_status_text(request), "nosuchif0") != NULL);
  CHECK(cxhr_set_interface(request, "lo"));
  CHECK(cxhr_open(request, "GET", url(fault_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(cxhr_get_status(request) == 200);
  CHECK(cxhr_set_interface(request, NULL));

  CHECK(!cxhr_set_service_name(request, "HTTP/host"));
  CHECK(cxhr_set_service_name(request, "HTTP"));
  CHECK(cxhr_set_service_name(request, NULL));
  CHECK(!cxhr_disable_connection_reuse(NULL));
  CHECK(cxhr_disable_connection_reuse(request));

  /* Bytes 3 to 7 of a file; a range past its end is refused and the request stays OPENED. */
  char path[] = "/tmp/curlxhr-capi-range-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10);
  close(fd);
  CHECK(cxhr_open(request, "PUT", url(fault_url, "/echo"), false, NULL, NULL, NULL));
  CHECK(!cxhr_send_file_range(request, path, 5, 6, 30));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_send_file_range(request, path, -1, -1, 30));
  CHECK(!cxhr_send_file_range(request, NULL, 0, -1, 30));
  CHECK(cxhr_get_state(request) == CXHR_OPENED);
  CHECK(cxhr_send_file_range(request, path, 3, 5, 30));
  size_t length = 0;
  const char *body = (const char *)cxhr_get_receive_buffer(request, &length);
  CHECK(cxhr_get_status(request) == 200 && body && memmem(body, length, "\"body\": \"34567\"", 15) != NULL);
  unlink(path);
  cxhr_request_destroy(request);
}

int main(int argc, char **argv)
{
  if(argc != 3 && argc != 4 && argc != 6) {
    fprintf(stderr, "usage: %s HTTP_URL FAULT_URL [SELF_SIGNED_HTTPS_URL [USER PASSWORD]]\n", argv[0]);
    return 2;
  }
  if(argc == 6) {
    user = argv[4];
    password = argv[5];
  }
  snprintf(http_url, sizeof http_url, "%s", argv[1]);
  snprintf(fault_url, sizeof fault_url, "%s", argv[2]);
  if(argc == 4)
    snprintf(self_signed_url, sizeof self_signed_url, "%s", argv[3]);
  char store[256];
  snprintf(store, sizeof store, "/tmp/curlxhr-capi-test-%d/cookies.txt", (int)getpid());
  cxhr_cookies_set_file(store);
  misuse_is_refused();
  sync_requests_work();
  async_requests_work();
  destroy_during_transfer_is_safe();
  cookies_persist(store);
  proxies();
  failure_kinds();
  bytes_sent();
  impossible_lengths_are_refused_in_every_state();
  metrics();
  trailers();
  transfer_control();
  routing();
  any_scheme();
  cookie_store(store);
  cookie_store_from_threads();
  queues();
  process_wide_settings();
  /* Leave nothing behind: the store, its lock file and their directory. */
  char lock[300];
  snprintf(lock, sizeof lock, "%s.lock", store);
  unlink(store);
  unlink(lock);
  *strrchr(store, '/') = '\0';
  rmdir(store);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
