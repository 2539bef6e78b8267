/* Checks the C interface's proxy calls: an https proxy (squid's TLS port) trusted by its own
 * CA file or not verified, its key pinned, SOCKS5 through dante with and without its login, the
 * bypass list, a proxy header, a client certificate shown to nginx's proxy that asks for one,
 * SOCKS5 with Kerberos (GSS-API) through the test proxy with the tickets of KRB5CCNAME (and one
 * of its ports that refuses GSS-API), and bad input refused.
 *   proxy_test HTTP_URL CA_FILE PROXY_TLS_PORT SOCKS_PORT SOCKS_AUTH_PORT SOCKS_USER SOCKS_PASSWORD
 *              PROXY_TLS_PIN PROXY_MTLS_PORT CLIENT_CERT CLIENT_KEY
 *              SOCKS_GSSAPI_PORT SOCKS_GSSAPI_NOMETHOD_PORT KRB5CCNAME
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* setenv with -std=c11 */
#include <curlxhr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char echo[512];

/* Sends GET /echo on request and returns its status (0 for a failure). */
static int sent(cxhr_request *request)
{
  if(!cxhr_open(request, "GET", echo, false, NULL, NULL, NULL) || !cxhr_send(request, NULL, 0, 30))
    return -1;
  return cxhr_get_status(request);
}

int main(int argc, char **argv)
{
  if(argc != 15) {
    fprintf(stderr, "usage: %s HTTP_URL CA_FILE PROXY_TLS_PORT SOCKS_PORT SOCKS_AUTH_PORT SOCKS_USER SOCKS_PASSWORD"
                    " PROXY_TLS_PIN PROXY_MTLS_PORT CLIENT_CERT CLIENT_KEY SOCKS_GSSAPI_PORT SOCKS_GSSAPI_NOMETHOD_PORT"
                    " KRB5CCNAME\n", argv[0]);
    return 2;
  }
  /* The tickets GSS-API uses: alice's, from the test KDC. */
  setenv("KRB5CCNAME", argv[14], 1);
  snprintf(echo, sizeof echo, "%s/echo", argv[1]);
  const char *ca = argv[2], *user = argv[6], *password = argv[7], *pin = argv[8], *cert = argv[10], *key = argv[11];
  char https_proxy[128], socks[128], socks_login[128], certificate_proxy[128];
  snprintf(https_proxy, sizeof https_proxy, "https://localhost:%s", argv[3]);
  snprintf(socks, sizeof socks, "socks5://127.0.0.1:%s", argv[4]);
  snprintf(socks_login, sizeof socks_login, "socks5://127.0.0.1:%s", argv[5]);
  snprintf(certificate_proxy, sizeof certificate_proxy, "https://localhost:%s", argv[9]);

  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, https_proxy, NULL, NULL, NULL));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TLS);  /* the system store lacks the test CA */
  CHECK(cxhr_set_proxy_ca_certificate_file(request, ca));
  CHECK(cxhr_set_proxy_header(request, "X-Proxy-Only", "1"));
  CHECK(sent(request) == 200);
  cxhr_request_destroy(request);

  request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, https_proxy, NULL, NULL, NULL));
  CHECK(cxhr_disable_proxy_peer_verification(request));
  CHECK(sent(request) == 200);
  cxhr_request_destroy(request);

  /* The proxy's key pinned: checked by the library, also when its certificate is not verified. */
  request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, https_proxy, NULL, NULL, NULL));
  CHECK(cxhr_disable_proxy_peer_verification(request));
  CHECK(cxhr_set_proxy_pinned_public_keys(request, pin));
  CHECK(sent(request) == 200);
  CHECK(cxhr_set_proxy_pinned_public_keys(request, "sha256//BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TLS);
  CHECK(strstr(cxhr_get_status_text(request), "proxy's public key does not match") != NULL);
  CHECK(cxhr_set_proxy_pinned_public_keys(request, ""));
  CHECK(sent(request) == 200);
  CHECK(!cxhr_set_proxy_pinned_public_keys(request, NULL));
  CHECK(!cxhr_set_proxy_pinned_public_keys(request, "sha256//abc"));
  CHECK(!cxhr_set_proxy_pinned_public_keys(request, "/nonexistent/key.pem"));
  cxhr_request_destroy(request);

  /* A client certificate for the proxy that asks for one. */
  request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, certificate_proxy, NULL, NULL, NULL));
  CHECK(cxhr_set_proxy_ca_certificate_file(request, ca));
  CHECK(sent(request) == 400);  /* nginx: no certificate */
  CHECK(cxhr_set_proxy_client_certificate(request, cert, CXHR_CERT_PEM, key, NULL));
  CHECK(sent(request) == 200);
  CHECK(!cxhr_set_proxy_client_certificate(request, NULL, CXHR_CERT_PEM, NULL, NULL));
  CHECK(!cxhr_set_proxy_client_certificate(request, "/nonexistent/cert.pem", CXHR_CERT_PEM, NULL, NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(!cxhr_set_proxy_client_certificate(request, cert, (cxhr_cert_format)9, key, NULL));
  cxhr_request_destroy(request);

  request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, socks, NULL, NULL, NULL));
  CHECK(sent(request) == 200);
  CHECK(cxhr_set_proxy(request, socks_login, user, password, NULL));
  CHECK(sent(request) == 200);
  CHECK(cxhr_set_proxy(request, socks_login, user, "wrong", NULL));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY);
  CHECK(cxhr_set_proxy(request, "socks5://127.0.0.1:1", NULL, NULL, NULL));
  CHECK(cxhr_set_proxy_bypass(request, "127.0.0.1"));
  CHECK(sent(request) == 200);  /* direct */
  CHECK(cxhr_set_proxy_bypass(request, ""));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY);

  /* SOCKS5 with Kerberos (GSS-API): the library runs the handshake. */
  char socks_gssapi[128], socks_nomethod[128];
  snprintf(socks_gssapi, sizeof socks_gssapi, "socks5h://127.0.0.1:%s", argv[12]);
  snprintf(socks_nomethod, sizeof socks_nomethod, "socks5h://127.0.0.1:%s", argv[13]);
  cxhr_request_destroy(request);
  request = cxhr_request_create();
  CHECK(cxhr_set_proxy(request, socks_gssapi, NULL, NULL, "NEGOTIATE"));
  CHECK(cxhr_set_proxy_service_name(request, "rcmd"));
  CHECK(sent(request) == 200);
  CHECK(cxhr_set_proxy_service_name(request, NULL));
  CHECK(sent(request) == 200);
  CHECK(cxhr_set_proxy(request, socks_nomethod, NULL, NULL, "NEGOTIATE"));
  CHECK(sent(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_PROXY);
  CHECK(strstr(cxhr_get_status_text(request), "does not accept GSS-API") != NULL);
  CHECK(!cxhr_set_proxy(request, "socks4://proxy:1080", NULL, NULL, "NEGOTIATE"));
  CHECK(!cxhr_set_proxy_service_name(request, ""));
  CHECK(!cxhr_set_proxy_service_name(request, "rcmd\r\n"));
  CHECK(!cxhr_set_proxy_service_name(request, "rcmd/host"));
  CHECK(!cxhr_set_proxy_service_name(NULL, "rcmd"));
  cxhr_request_destroy(request);
  request = cxhr_request_create();

  /* Refusals. */
  CHECK(!cxhr_set_proxy(NULL, socks, NULL, NULL, NULL));
  CHECK(!cxhr_set_proxy(request, NULL, NULL, NULL, NULL));
  CHECK(!cxhr_set_proxy(request, "ftp://proxy:21", NULL, NULL, NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_proxy(request, "socks4://proxy", "u", "p", NULL));
  CHECK(!cxhr_set_proxy(request, "http://proxy\r\n:80", NULL, NULL, NULL));
  CHECK(!cxhr_set_proxy_bypass(request, NULL));
  CHECK(!cxhr_set_proxy_bypass(request, "a\nb"));
  CHECK(!cxhr_set_proxy_header(request, NULL, "1"));
  CHECK(!cxhr_set_proxy_header(request, "X", NULL));
  CHECK(!cxhr_set_proxy_header(request, "X Y", "1"));
  CHECK(!cxhr_set_proxy_header(request, "X", "1\r\nY: 2"));
  CHECK(!cxhr_set_proxy_ca_certificate_file(request, NULL));
  CHECK(!cxhr_set_proxy_ca_certificate_file(request, "/nonexistent/ca.pem"));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(!cxhr_disable_proxy_peer_verification(NULL));
  cxhr_request_destroy(request);

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
