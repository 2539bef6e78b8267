/* Checks the C interface as a C program uses it: misuse is refused, requests work sync and
 * async, destroying a request mid-transfer or from its own callback is safe, cookies reach
 * the store file before DONE, and proxies are used and dropped.
 *   capi_test HTTP_URL FAULT_URL      (the loopback servers' base URLs)
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* memmem */
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

#define CHECK(cond)                                                   \
  do {                                                                \
    if(cond)                                                          \
      passed++;                                                       \
    else {                                                            \
      failed++;                                                       \
      printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
    }                                                                 \
  } while(0)

static char http_url[512], fault_url[512];

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
  CHECK(!cxhr_send(request, NULL, 0, 0));                        /* send before open */
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(!cxhr_open(request, NULL, url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(!cxhr_open(request, "GET", NULL, false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", "not a url", false, NULL, NULL, NULL));
  CHECK(!cxhr_open(request, "GET", url(http_url, "/"), false, "u", "p", "KERBEROS5"));
  CHECK(cxhr_open(request, "GET", url(http_url, "/"), false, NULL, NULL, NULL));
  CHECK(cxhr_get_last_error(request) == NULL);
  CHECK(!cxhr_set_request_header(request, NULL, "v"));
  CHECK(!cxhr_set_request_header(request, "X-Bad", "a\r\nInjected: 1"));
  CHECK(!cxhr_send(request, NULL, 5, 0));                         /* NULL data, non-zero length */
  CHECK(!cxhr_send_file(request, "/nonexistent/file", 0));
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

int main(int argc, char **argv)
{
  if(argc != 3) {
    fprintf(stderr, "usage: %s HTTP_URL FAULT_URL\n", argv[0]);
    return 2;
  }
  snprintf(http_url, sizeof http_url, "%s", argv[1]);
  snprintf(fault_url, sizeof fault_url, "%s", argv[2]);
  char store[256];
  snprintf(store, sizeof store, "/tmp/curlxhr-capi-test-%d/cookies.txt", (int)getpid());
  cxhr_cookies_set_file(store);
  misuse_is_refused();
  sync_requests_work();
  async_requests_work();
  destroy_during_transfer_is_safe();
  cookies_persist(store);
  proxies();
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
