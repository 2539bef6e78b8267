/* A download to a file from C, with progress, that a second run resumes where a broken one
 * stopped: the library writes FILE.part and renames it to FILE once the body is complete; with
 * resume on, a send that finds FILE.part (and its validator) asks for the rest only.
 *   cc download.c $(pkg-config --cflags --libs curlxhr) -lpthread -o download && ./download URL FILE */
#include <curlxhr.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct wait {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int finished;
};

static void on_progress(cxhr_request *request, void *user_data)
{
  (void)user_data;
  cxhr_progress progress;
  cxhr_get_progress(request, &progress);
  if(progress.bytes_to_receive > 0)
    fprintf(stderr, "\r%" PRId64 " of %" PRId64 " bytes (%d %%)", progress.bytes_received, progress.bytes_to_receive,
            (int)(progress.bytes_received * 100 / progress.bytes_to_receive));
  else
    fprintf(stderr, "\r%" PRId64 " bytes", progress.bytes_received);
}

static void on_status_change(cxhr_request *request, void *user_data)
{
  struct wait *wait = user_data;
  if(cxhr_get_state(request) != CXHR_DONE)
    return;
  pthread_mutex_lock(&wait->lock);
  wait->finished = 1;
  pthread_cond_signal(&wait->done);
  pthread_mutex_unlock(&wait->lock);
}

int main(int argc, char **argv)
{
  if(argc != 3) {
    fprintf(stderr, "usage: %s URL FILE\n", argv[0]);
    return 2;
  }
  /* The library this program runs with is the one it was built for. */
  if(strcmp(cxhr_version(), CURLXHR_VERSION) != 0) {
    fprintf(stderr, "built with curlxhr.h %s, running libcurlxhr %s\n", CURLXHR_VERSION, cxhr_version());
    return 1;
  }
  struct wait wait = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  cxhr_request *request = cxhr_request_create();
  cxhr_set_status_callback(request, on_status_change, &wait);
  cxhr_set_progress_callback(request, on_progress, &wait);
  if(!cxhr_open(request, "GET", argv[1], true, NULL, NULL, NULL) || !cxhr_set_response_file(request, argv[2], true)
     || !cxhr_send(request, NULL, 0, 0)) {
    fprintf(stderr, "refused: %s\n", cxhr_get_last_error(request));
    cxhr_request_destroy(request);
    return 1;
  }
  pthread_mutex_lock(&wait.lock);
  while(!wait.finished)
    pthread_cond_wait(&wait.done, &wait.lock);
  pthread_mutex_unlock(&wait.lock);
  fprintf(stderr, "\n");
  int status = cxhr_get_status(request);
  cxhr_progress progress;
  cxhr_get_progress(request, &progress);
  if(status == 200 || status == 206)
    printf("status %d: %s complete, %" PRId64 " bytes received by this run\n", status, argv[2], progress.bytes_received);
  else
    printf("status %d %s: %s left for a next run\n", status, cxhr_get_status_text(request), argv[2]);
  cxhr_request_destroy(request);
  return status == 200 || status == 206 ? 0 : 1;
}
