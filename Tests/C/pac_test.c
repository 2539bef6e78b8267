/* Checks the C interface's proxy auto-config calls: a PAC file sending through squid, DIRECT,
 * the fallback past a dead proxy, all proxies dead, a PAC file that throws, a PAC URL, the
 * process-wide default and what overrides it, and bad input refused.
 *   pac_test HTTP_URL PROXY_PORT FAULT_URL SCRATCH_DIR
 * Prints one line per failed check and a last line "N passed, M failed". */
#include <curlxhr.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char echo[512];

/* Sends GET /echo on request; returns its status (0 for a failure, -1 for a refused send). */
static int sent(cxhr_request *request)
{
  if(!cxhr_open(request, "GET", echo, false, NULL, NULL, NULL) || !cxhr_send(request, NULL, 0, 30))
    return -1;
  return cxhr_get_status(request);
}

/* Whether the last response passed squid (its Via field, as the echo shows it). */
static bool via_squid(cxhr_request *request)
{
  size_t length = 0;
  const char *body = cxhr_get_receive_buffer(request, &length);
  for(size_t index = 0; body != NULL && index + 5 <= length; index++)
    if(memcmp(body + index, "squid", 5) == 0) return true;
  return false;
}

/* Writes DIRECTORY/NAME.pac, whose FindProxyForURL has body; its path. */
static const char *pac_file(const char *directory, const char *name, const char *body, char *path, size_t size)
{
  snprintf(path, size, "%s/%s.pac", directory, name);
  FILE *file = fopen(path, "w");
  if(file == NULL) return "";
  fprintf(file, "function FindProxyForURL(url, host) { %s }\n", body);
  fclose(file);
  return path;
}

static bool text_contains(cxhr_request *request, const char *words)
{
  const char *text = cxhr_get_status_text(request);
  return text != NULL && strstr(text, words) != NULL;
}

int main(int argc, char **argv)
{
  if(argc != 5) {
    fprintf(stderr, "usage: %s HTTP_URL PROXY_PORT FAULT_URL SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(echo, sizeof echo, "%s/echo", argv[1]);
  const char *directory = argv[4];
  char body[256], squid_pac[512], direct_pac[512], fallback_pac[512], dead_pac[512], throwing_pac[512], url[1024];
  snprintf(body, sizeof body, "return \"PROXY 127.0.0.1:%s\";", argv[2]);
  pac_file(directory, "squid", body, squid_pac, sizeof squid_pac);
  pac_file(directory, "direct", "return \"DIRECT\";", direct_pac, sizeof direct_pac);
  snprintf(body, sizeof body, "return \"PROXY 127.0.0.1:1; PROXY 127.0.0.1:%s\";", argv[2]);
  pac_file(directory, "fallback", body, fallback_pac, sizeof fallback_pac);
  pac_file(directory, "dead", "return \"PROXY 127.0.0.1:1; SOCKS5 127.0.0.1:1\";", dead_pac, sizeof dead_pac);
  pac_file(directory, "throwing", "throw \"no routes\";", throwing_pac, sizeof throwing_pac);

  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_set_proxy_auto_config(request, squid_pac));
  CHECK(sent(request) == 200 && via_squid(request));
  CHECK(cxhr_set_proxy_auto_config(request, direct_pac));
  CHECK(sent(request) == 200 && !via_squid(request));
  CHECK(cxhr_set_proxy_auto_config(request, fallback_pac));
  CHECK(sent(request) == 200 && via_squid(request));
  CHECK(cxhr_set_proxy_auto_config(request, dead_pac));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY && text_contains(request, "socks5://127.0.0.1:1"));
  CHECK(cxhr_set_proxy_auto_config(request, throwing_pac));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY && text_contains(request, throwing_pac) &&
        text_contains(request, "no routes"));
  /* A PAC URL (the fault server's /cache route serves it). */
  snprintf(url, sizeof url, "%s/cache?key=c-pac-%d&body=function%%20FindProxyForURL(u%%2Ch)%%7Breturn%%20%%22PROXY%%20"
           "127.0.0.1%%3A%s%%22%%3B%%7D", argv[3], (int)getpid(), argv[2]);
  CHECK(cxhr_set_proxy_auto_config(request, url));
  CHECK(sent(request) == 200 && via_squid(request));
  cxhr_request_destroy(request);

  /* The process-wide default, and the request's own choices over it. */
  CHECK(cxhr_set_default_proxy_auto_config(dead_pac));
  request = cxhr_request_create();
  CHECK(sent(request) == 0 && cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY);
  CHECK(cxhr_disable_http_proxy(request));
  CHECK(sent(request) == 200 && !via_squid(request));
  cxhr_request_destroy(request);
  request = cxhr_request_create();
  CHECK(cxhr_set_proxy_auto_config(request, squid_pac));
  CHECK(sent(request) == 200 && via_squid(request));
  CHECK(!cxhr_set_default_proxy_auto_config("/nonexistent/proxy.pac"));
  CHECK(cxhr_set_default_proxy_auto_config(NULL));
  cxhr_request_destroy(request);
  request = cxhr_request_create();
  CHECK(sent(request) == 200 && !via_squid(request));

  /* Refusals. */
  CHECK(!cxhr_set_proxy_auto_config(NULL, squid_pac));
  CHECK(!cxhr_set_proxy_auto_config(request, NULL));
  CHECK(!cxhr_set_proxy_auto_config(request, ""));
  CHECK(!cxhr_set_proxy_auto_config(request, "/tmp/a\nb.pac"));
  CHECK(!cxhr_set_proxy_auto_config(request, "http://h/p.pac\r\nX: 1"));
  CHECK(!cxhr_set_proxy_auto_config(request, "/nonexistent/proxy.pac"));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_proxy_auto_config(request, directory));
  CHECK(!cxhr_set_proxy_auto_config(request, "ftp://h/p.pac"));
  cxhr_request_destroy(request);

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
