/* Checks the C interface's TLS identity calls against a server that asks for a client
 * certificate from the test CA (its /whoami answers the certificate's subject): a PEM pair,
 * a PKCS#12 file and bytes are shown; a wrong password fails the send naming the file; pins
 * decide; bad input is refused.
 *   tls_identity_test MTLS_URL CA_FILE CERT KEY P12 PASSWORD PIN
 * Prints one line per failed check and a last line "N passed, M failed". */
#include <curlxhr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char whoami[512];
static const char *ca_file;

/* Sends GET /whoami on request and says whether the server saw the test client. */
static int shown(cxhr_request *request)
{
  if(!cxhr_set_ca_certificate_file(request, ca_file) || !cxhr_open(request, "GET", whoami, false, NULL, NULL, NULL)
     || !cxhr_send(request, NULL, 0, 30))
    return 0;
  size_t length = 0;
  const char *body = cxhr_get_receive_buffer(request, &length);
  return cxhr_get_status(request) == 200 && body && length >= 13 && memcmp(body, "CN=xhr-client", 13) == 0;
}

static char *read_file(const char *path, size_t *length)
{
  FILE *file = fopen(path, "rb");
  if(!file)
    return NULL;
  char *bytes = malloc(1 << 16);
  *length = bytes ? fread(bytes, 1, 1 << 16, file) : 0;
  fclose(file);
  return bytes;
}

int main(int argc, char **argv)
{
  if(argc != 8) {
    fprintf(stderr, "usage: %s MTLS_URL CA_FILE CERT KEY P12 PASSWORD PIN\n", argv[0]);
    return 2;
  }
  snprintf(whoami, sizeof whoami, "%s/whoami", argv[1]);
  ca_file = argv[2];
  const char *cert = argv[3], *key = argv[4], *p12 = argv[5], *password = argv[6], *pin = argv[7];

  cxhr_request *request = cxhr_request_create();
  CHECK(!shown(request));
  CHECK(cxhr_get_status(request) == 400);  /* nginx: no certificate was sent */
  CHECK(cxhr_set_client_certificate(request, cert, CXHR_CERT_PEM, key, NULL));
  CHECK(shown(request));
  CHECK(cxhr_set_client_certificate(request, p12, CXHR_CERT_P12, NULL, password));
  CHECK(shown(request));
  cxhr_request_destroy(request);

  size_t length = 0;
  char *bundle = read_file(p12, &length);
  CHECK(bundle != NULL && length > 0);
  request = cxhr_request_create();
  CHECK(cxhr_set_client_certificate_p12(request, bundle, length, password));
  free(bundle);  /* copied */
  CHECK(shown(request));
  cxhr_request_destroy(request);

  /* A wrong password: DONE, status 0, TLS, the file named. A copy of the bundle
   * under a path of its own: libcurl lends a connection to requests with the same path. */
  char copy[64];
  snprintf(copy, sizeof copy, "/tmp/curlxhr-tls-identity-%d.p12", (int)getpid());
  bundle = read_file(p12, &length);
  FILE *out = fopen(copy, "wb");
  CHECK(bundle && out && fwrite(bundle, 1, length, out) == length);
  if(out)
    fclose(out);
  free(bundle);
  request = cxhr_request_create();
  CHECK(cxhr_set_client_certificate(request, copy, CXHR_CERT_P12, NULL, "wrong"));
  CHECK(!shown(request));
  CHECK(cxhr_get_state(request) == CXHR_DONE && cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TLS);
  CHECK(strstr(cxhr_get_status_text(request), copy) != NULL);
  cxhr_request_destroy(request);
  unlink(copy);

  /* Pins: the server's own key, then another. */
  request = cxhr_request_create();
  CHECK(cxhr_set_pinned_public_keys(request, pin));
  CHECK(cxhr_set_client_certificate(request, cert, CXHR_CERT_PEM, key, NULL));
  CHECK(shown(request));
  CHECK(cxhr_set_pinned_public_keys(request, "sha256//BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="));
  CHECK(!shown(request));
  CHECK(cxhr_get_status(request) == 0);
  CHECK(cxhr_get_failure_kind(request) == CXHR_FAILURE_TLS);
  CHECK(strstr(cxhr_get_status_text(request), "pinned public key") != NULL);
  CHECK(cxhr_set_pinned_public_keys(request, ""));
  CHECK(shown(request));

  /* Refusals: NULLs, a missing file, a format that is none, a pin that is none. */
  CHECK(!cxhr_set_client_certificate(NULL, cert, CXHR_CERT_PEM, key, NULL));
  CHECK(!cxhr_set_client_certificate(request, NULL, CXHR_CERT_PEM, NULL, NULL));
  CHECK(!cxhr_set_client_certificate(request, "/nonexistent/client.pem", CXHR_CERT_PEM, NULL, NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_FILE_UNREADABLE);
  CHECK(strstr(cxhr_get_last_error(request), "certificate") != NULL);
  CHECK(!cxhr_set_client_certificate(request, cert, (cxhr_cert_format)7, key, NULL));
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_ARGUMENT);
  CHECK(!cxhr_set_client_certificate(request, p12, CXHR_CERT_P12, key, password));
  CHECK(!cxhr_set_client_certificate_p12(request, NULL, 10, NULL));
  CHECK(!cxhr_set_client_certificate_p12(request, "x", 0, NULL));
  CHECK(!cxhr_set_client_certificate_p12(request, "-----BEGIN", 10, NULL));
  CHECK(!cxhr_set_client_certificate_p12(NULL, "0", 1, NULL));
  CHECK(!cxhr_set_pinned_public_keys(request, NULL));
  CHECK(!cxhr_set_pinned_public_keys(request, "sha256//abc"));
  CHECK(!cxhr_set_pinned_public_keys(request, "/nonexistent/key.pem"));
  CHECK(!cxhr_set_pinned_public_keys(NULL, pin));
  cxhr_request_destroy(request);

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
