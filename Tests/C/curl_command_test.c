/* Checks cxhr_curl_command: NULL for a bad handle, "" before cxhr_open, and after a POST to
 * the echo CGI a command with the method, header, body and credentials, quoted for sh, its
 * password redacted; every string freed with free() (LeakSanitizer checks under ASan).
 *   curl_command_test HTTP_URL
 * Prints one line per failed check and a last line "N passed, M failed". */
#include <curlxhr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
  if(argc != 2) {
    fprintf(stderr, "usage: %s HTTP_URL\n", argv[0]);
    return 2;
  }
  char url[512];
  snprintf(url, sizeof url, "%s/basic/echo", argv[1]);
  CHECK(cxhr_curl_command(NULL) == NULL);

  cxhr_request *request = cxhr_request_create();
  char *command = cxhr_curl_command(request);
  CHECK(command != NULL && strcmp(command, "") == 0);
  free(command);

  CHECK(cxhr_open(request, "PUT", url, false, "alice", "it's-s3cret", NULL));
  CHECK(cxhr_set_request_header(request, "X-Quote", "it's"));
  CHECK(cxhr_send(request, "hello", 5, 30));
  CHECK(cxhr_get_state(request) == CXHR_DONE);
  command = cxhr_curl_command(request);
  CHECK(command != NULL);
  if(command) {
    CHECK(strncmp(command, "curl -X PUT ", 12) == 0);
    CHECK(strstr(command, " -H 'X-Quote: it'\\''s' ") != NULL);
    CHECK(strstr(command, " -H Content-Type: --data-binary hello ") != NULL);
    CHECK(strstr(command, " -u 'alice:[redacted]' ") != NULL);
    CHECK(strstr(command, "s3cret") == NULL);
    CHECK(strstr(command, url) != NULL);
    printf("%s\n", command);
  }
  free(command);

  cxhr_request_destroy(request);
  CHECK(cxhr_curl_command(request) == NULL);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
