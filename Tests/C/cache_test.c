/* Checks the HTTP cache as a C program uses it, against the fault server's /cache resource
 * (which logs every request it sees under its key, /cache-log?key=K):
 * a folder that cannot be used is refused with a reason, a second GET is answered from the
 * cache without the network, CXHR_CACHE_READ_FORCED on a miss ends with status 0 and a text,
 * unknown policy bits are refused, only-if-cached gives the cache's 504, a POST removes the
 * stored response, and a NULL folder turns the cache off.
 *   cache_test FAULT_URL DIRECTORY
 * (DIRECTORY: an existing folder for the cache and a regular file.)
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* getpid with -std=c11 */
#include <curlxhr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

/* Counts a check (one thread only), printing the failed ones with their line. */
static void check(bool ok, const char *condition, int line)
{
  if(ok) {
    passed++;
    return;
  }
  failed++;
  printf("FAILED %s:%d: %s\n", __FILE__, line, condition);
}
#define CHECK(cond) check((cond), #cond, __LINE__)

static const char *fault;
static char run_id[64];

/* The /cache URL of key (made unique to this run), fresh for 600 s. */
static void cache_url(char *url, size_t size, const char *key)
{
  snprintf(url, size, "%s/cache?key=%s-%s&h=Cache-Control:max-age%%3D600", fault, run_id, key);
}

/* A synchronous request with the policy (or the default for -1); the caller destroys it. */
static cxhr_request *fetch(const char *method, const char *url, long policy, const char *cache_control)
{
  cxhr_request *request = cxhr_request_create();
  if(policy >= 0)
    CHECK(cxhr_set_cache_policy(request, (unsigned)policy));
  CHECK(cxhr_open(request, method, url, false, NULL, NULL, NULL));
  if(cache_control)
    CHECK(cxhr_set_request_header(request, "Cache-Control", cache_control));
  CHECK(cxhr_send(request, NULL, 0, 30));
  return request;
}

/* Whether the body is text. */
static bool body_is(cxhr_request *request, const char *text)
{
  size_t length = 0;
  const char *bytes = cxhr_get_receive_buffer(request, &length);
  bool same = length == strlen(text) && (length == 0 || memcmp(bytes, text, length) == 0);
  if(!same)
    printf("body: %.*s (expected %s)\n", (int)length, bytes ? bytes : "", text);
  return same;
}

/* How many requests the server saw for key, or -1. */
static int server_count(const char *key)
{
  char url[512];
  snprintf(url, sizeof url, "%s/cache-log?key=%s-%s", fault, run_id, key);
  cxhr_request *request = fetch("GET", url, 0, NULL); /* policy 0: the cache takes no part */
  int count = -1;
  size_t length = 0;
  const char *bytes = cxhr_get_receive_buffer(request, &length);
  char text[64] = {0};
  if(cxhr_get_status(request) == 200 && bytes) {
    memcpy(text, bytes, length < sizeof text - 1 ? length : sizeof text - 1);
    if(sscanf(text, "{\"count\": %d,", &count) != 1)
      count = -1;
  }
  if(count < 0)
    printf("cache-log: %s\n", text);
  cxhr_request_destroy(request);
  return count;
}

static void refusals(const char *directory)
{
  CHECK(cxhr_get_cache_folder_error() == NULL); /* nothing refused yet */

  /* A path under a regular file cannot be a folder. */
  char file[512], under[600];
  snprintf(file, sizeof file, "%s/a-file", directory);
  FILE *made = fopen(file, "w");
  CHECK(made != NULL);
  if(made)
    fclose(made);
  snprintf(under, sizeof under, "%s/cache", file);
  CHECK(!cxhr_set_cache_folder(under, 1 << 20));
  const char *reason = cxhr_get_cache_folder_error();
  CHECK(reason != NULL && reason[0] != '\0');
  if(reason)
    printf("refused as expected: %s\n", reason);
  CHECK(!cxhr_set_cache_folder(directory, 0)); /* max_bytes < 1 */
  reason = cxhr_get_cache_folder_error();
  CHECK(reason != NULL && strstr(reason, "at least 1 byte") != NULL);
  CHECK(!cxhr_set_cache_folder("", 1 << 20));
  CHECK(cxhr_get_cache_folder_error() != NULL);

  /* Policies: unknown bits refused with a reason; the handle checked. */
  cxhr_request *request = cxhr_request_create();
  CHECK(!cxhr_set_cache_policy(request, 16));
  CHECK(cxhr_get_last_error(request) != NULL && strstr(cxhr_get_last_error(request), "0x10") != NULL);
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_cache_policy(request, CXHR_CACHE_READ | 0x100));
  CHECK(cxhr_set_cache_policy(request, CXHR_CACHE_READ | CXHR_CACHE_READ_FORCED | CXHR_CACHE_UPDATE | CXHR_CACHE_UPDATE_FORCED));
  CHECK(cxhr_get_last_error(request) == NULL);
  CHECK(cxhr_set_cache_policy(request, 0));
  CHECK(!cxhr_is_response_from_cache(request)); /* before any response */
  cxhr_request_destroy(request);
  CHECK(!cxhr_set_cache_policy(request, CXHR_CACHE_READ)); /* destroyed */
  CHECK(!cxhr_set_cache_policy(NULL, CXHR_CACHE_READ));
  CHECK(!cxhr_is_response_from_cache(NULL));
}

/* A send in flight refuses a policy change: a pre-send switch. */
static void policy_in_flight(void)
{
  char url[512];
  snprintf(url, sizeof url, "%s/cache?key=%s-slow&delay_ms=3000", fault, run_id);
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_open(request, "GET", url, true, NULL, NULL, NULL));
  CHECK(cxhr_send(request, NULL, 0, 30));
  CHECK(!cxhr_set_cache_policy(request, CXHR_CACHE_READ));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_STATE);
  CHECK(cxhr_abort(request));
  CHECK(cxhr_set_cache_policy(request, CXHR_CACHE_READ)); /* DONE: allowed again */
  cxhr_request_destroy(request);
}

int main(int argc, char **argv)
{
  if(argc != 3) {
    fprintf(stderr, "usage: cache_test FAULT_URL DIRECTORY\n");
    return 2;
  }
  fault = argv[1];
  const char *directory = argv[2];
  snprintf(run_id, sizeof run_id, "c%ld-%ld", (long)getpid(), (long)time(NULL));
  refusals(directory);

  char folder[512];
  snprintf(folder, sizeof folder, "%s/cache", directory);
  CHECK(cxhr_set_cache_folder(folder, 1 << 20));
  CHECK(cxhr_get_cache_folder_error() == NULL);
  char expected[256];
  snprintf(expected, sizeof expected, "body of %s-one, version 0", run_id);

  /* Twice the same GET: the second from the cache, the server sees one. */
  char url[512];
  cache_url(url, sizeof url, "one");
  cxhr_request *first = fetch("GET", url, -1, NULL);
  CHECK(cxhr_get_status(first) == 200);
  CHECK(!cxhr_is_response_from_cache(first));
  CHECK(body_is(first, expected));
  cxhr_request_destroy(first);
  cxhr_request *second = fetch("GET", url, -1, NULL);
  CHECK(cxhr_get_status(second) == 200);
  CHECK(cxhr_is_response_from_cache(second));
  CHECK(body_is(second, expected));
  CHECK(strcmp(cxhr_get_response_header(second, "Age"), "") != 0);
  CHECK(strcmp(cxhr_get_response_header(second, "Cache-Control"), "max-age=600") == 0);
  cxhr_metrics metrics;
  CHECK(cxhr_get_metrics(second, &metrics) && metrics.http_version && strcmp(metrics.http_version, "HTTP/1.1") == 0);
  cxhr_request_destroy(second);
  CHECK(server_count("one") == 1);

  /* A refused folder leaves the cache in use as it was. */
  CHECK(!cxhr_set_cache_folder(directory, -5));
  CHECK(cxhr_get_cache_folder_error() != NULL);
  cxhr_request *still = fetch("GET", url, CXHR_CACHE_READ, NULL);
  CHECK(cxhr_is_response_from_cache(still) && cxhr_get_status(still) == 200);
  cxhr_request_destroy(still);
  CHECK(server_count("one") == 1);
  CHECK(cxhr_set_cache_folder(folder, 1 << 20)); /* the same folder again: its entries stay */
  CHECK(cxhr_get_cache_folder_error() == NULL);

  /* READ_FORCED with nothing stored: status 0 and a text, nothing sent. */
  char missing[512];
  cache_url(missing, sizeof missing, "missing");
  cxhr_request *offline = fetch("GET", missing, CXHR_CACHE_READ_FORCED, NULL);
  CHECK(cxhr_get_state(offline) == CXHR_DONE);
  CHECK(cxhr_get_status(offline) == 0);
  const char *text = cxhr_get_status_text(offline);
  CHECK(text != NULL && strstr(text, "Not in the cache") != NULL);
  CHECK(cxhr_get_failure_kind(offline) == CXHR_FAILURE_OTHER);
  cxhr_request_destroy(offline);
  /* READ_FORCED with the entry stored: answered from it. */
  cxhr_request *forced = fetch("GET", url, CXHR_CACHE_READ_FORCED, NULL);
  CHECK(cxhr_get_status(forced) == 200 && cxhr_is_response_from_cache(forced));
  CHECK(body_is(forced, expected));
  cxhr_request_destroy(forced);

  /* only-if-cached with nothing stored: the cache's 504, empty. */
  cxhr_request *gateway = fetch("GET", missing, -1, "only-if-cached");
  CHECK(cxhr_get_status(gateway) == 504);
  CHECK(cxhr_is_response_from_cache(gateway));
  CHECK(body_is(gateway, ""));
  cxhr_request_destroy(gateway);
  CHECK(server_count("missing") == 0);

  /* A POST goes to the server and removes the stored response: the next GET goes too. */
  cxhr_request *post = fetch("POST", url, -1, NULL);
  CHECK(cxhr_get_status(post) == 200 && !cxhr_is_response_from_cache(post));
  cxhr_request_destroy(post);
  cxhr_request *after = fetch("GET", url, -1, NULL);
  CHECK(cxhr_get_status(after) == 200 && !cxhr_is_response_from_cache(after));
  cxhr_request_destroy(after);
  CHECK(server_count("one") == 3);

  policy_in_flight();

  /* NULL turns the cache off: the stored response answers no more. */
  CHECK(cxhr_set_cache_folder(NULL, 0));
  CHECK(cxhr_get_cache_folder_error() == NULL);
  cxhr_request *off = fetch("GET", url, -1, NULL);
  CHECK(cxhr_get_status(off) == 200 && !cxhr_is_response_from_cache(off));
  cxhr_request_destroy(off);
  cxhr_request *off_forced = fetch("GET", url, CXHR_CACHE_READ_FORCED, NULL);
  CHECK(cxhr_get_status(off_forced) == 200 && !cxhr_is_response_from_cache(off_forced));
  cxhr_request_destroy(off_forced);
  CHECK(server_count("one") == 5);

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
