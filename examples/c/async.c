/* An asynchronous GET from C: the callback prints every ready state as it is reported.
 *   cc async.c $(pkg-config --cflags --libs curlxhr) -lpthread -o async && ./async URL */
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct progress {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int finished;
  size_t bytes;
};

static const char *names[] = {"UNSENT", "OPENED", "SENT", "HEADERS_RECEIVED", "LOADING", "DONE"};

static void on_status_change(cxhr_request *request, void *user_data)
{
  struct progress *progress = user_data;
  cxhr_state state = cxhr_get_state(request);
  size_t length = 0;
  if(state == CXHR_LOADING || state == CXHR_DONE)
    cxhr_get_receive_buffer(request, &length);   /* the bytes since the previous call */
  progress->bytes += length;
  printf("%-16s status %d, %zu bytes so far\n", names[state], cxhr_get_status(request), progress->bytes);
  if(state == CXHR_DONE) {
    pthread_mutex_lock(&progress->lock);
    progress->finished = 1;
    pthread_cond_signal(&progress->done);
    pthread_mutex_unlock(&progress->lock);
  }
}

int main(int argc, char **argv)
{
  if(argc != 2) {
    fprintf(stderr, "usage: %s URL\n", argv[0]);
    return 2;
  }
  /* The library this program runs with is the one it was built for. */
  if(strcmp(cxhr_version(), CURLXHR_VERSION) != 0) {
    fprintf(stderr, "built with curlxhr.h %s, running libcurlxhr %s\n", CURLXHR_VERSION, cxhr_version());
    return 1;
  }
  struct progress progress = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  cxhr_request *request = cxhr_request_create();
  cxhr_set_status_callback(request, on_status_change, &progress);
  if(!cxhr_open(request, "GET", argv[1], true, NULL, NULL, NULL) || !cxhr_send(request, NULL, 0, 30)) {
    fprintf(stderr, "refused: %s\n", cxhr_get_last_error(request));
    return 1;
  }
  pthread_mutex_lock(&progress.lock);
  while(!progress.finished)
    pthread_cond_wait(&progress.done, &progress.lock);
  pthread_mutex_unlock(&progress.lock);
  int status = cxhr_get_status(request);
  cxhr_request_destroy(request);
  return status ? 0 : 1;
}
