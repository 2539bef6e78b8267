/* A synchronous GET from C: prints the status, the headers and the body size.
 *   cc sync.c $(pkg-config --cflags --libs curlxhr) -o sync && ./sync URL */
#include <curlxhr.h>
#include <stdio.h>
#include <string.h>

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
  cxhr_request *request = cxhr_request_create();
  if(!request || !cxhr_open(request, "GET", argv[1], false, NULL, NULL, NULL)) {
    fprintf(stderr, "open: %s\n", request ? cxhr_get_last_error(request) : "out of memory");
    cxhr_request_destroy(request);
    return 1;
  }
  cxhr_send(request, NULL, 0, 30);   /* returns in CXHR_DONE */
  int status = cxhr_get_status(request);
  printf("status: %d %s\n", status, cxhr_get_status_text(request));
  if(status) {
    size_t length = 0;
    cxhr_get_receive_buffer(request, &length);
    printf("%s\nbody: %zu bytes\n", cxhr_get_all_response_headers(request), length);
  }
  cxhr_request_destroy(request);
  return status ? 0 : 1;
}
