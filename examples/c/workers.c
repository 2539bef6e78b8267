/* A worker pool: THREADS pthreads, each doing COUNT synchronous GETs of URL in a loop with one
 * request object, checking every status. Prints "N passed, M failed".
 *   cc workers.c $(pkg-config --cflags --libs curlxhr) -lpthread -o workers
 *   ./workers URL THREADS COUNT */
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static const char *url;
static int count;

static void *worker(void *failures)
{
  cxhr_request *request = cxhr_request_create();
  for(int i = 0; i < count; i++) {
    size_t length = 0;
    if(!cxhr_open(request, "GET", url, false, NULL, NULL, NULL) || !cxhr_send(request, NULL, 0, 60) ||
       cxhr_get_status(request) != 200 || !cxhr_get_receive_buffer(request, &length) || length == 0)
      ++*(int *)failures;
  }
  cxhr_request_destroy(request);
  return NULL;
}

int main(int argc, char **argv)
{
  if(argc != 4) {
    fprintf(stderr, "usage: %s URL THREADS COUNT\n", argv[0]);
    return 2;
  }
  /* The library this program runs with is the one it was built for. */
  if(strcmp(cxhr_version(), CURLXHR_VERSION) != 0) {
    fprintf(stderr, "built with curlxhr.h %s, running libcurlxhr %s\n", CURLXHR_VERSION, cxhr_version());
    return 1;
  }
  url = argv[1];
  int threads = atoi(argv[2]);
  count = atoi(argv[3]);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  int *failures = calloc((size_t)threads, sizeof *failures);
  for(int t = 0; t < threads; t++)
    pthread_create(&ids[t], NULL, worker, &failures[t]);
  int failed = 0;
  for(int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    failed += failures[t];
  }
  printf("%d passed, %d failed\n", threads * count - failed, failed);
  free(ids);
  free(failures);
  return failed ? 1 : 0;
}
