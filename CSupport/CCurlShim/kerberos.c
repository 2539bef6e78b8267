#include "ckerberos.h"

#include <errno.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void describe(krb5_context context, krb5_error_code code, const char *what, char *error,
                     size_t size)
{
  if(!error || !size)
    return;
  const char *message = context ? krb5_get_error_message(context, code) : NULL;
  snprintf(error, size, "%s: %s", what, message ? message : "unknown Kerberos error");
  if(message)
    krb5_free_error_message(context, message);
}

static krb5_error_code open_cache(krb5_context context, const char *ccache_path, krb5_ccache *cache)
{
  size_t length = strlen(ccache_path) + sizeof "FILE:";
  char *name = malloc(length);
  if(!name)
    return ENOMEM;
  snprintf(name, length, "FILE:%s", ccache_path);
  krb5_error_code code = krb5_cc_resolve(context, name, cache);
  free(name);
  return code;
}

/* Makes creds the whole content of the cache at ccache_path, at once: written to a file of its
   own beside it (mkstemp: mode 0600), then renamed over it. Threads storing tickets at the same
   time, or GSS-API reading the cache on the engine thread, never find it missing or half
   written (krb5_cc_initialize on the cache itself removes and recreates the file). */
static krb5_error_code store_tickets(krb5_context context, const char *ccache_path, krb5_principal client,
                                     krb5_creds *creds)
{
  size_t length = strlen(ccache_path) + sizeof ".XXXXXX";
  char *written = malloc(length);
  if(!written)
    return ENOMEM;
  snprintf(written, length, "%s.XXXXXX", ccache_path);
  int descriptor = mkstemp(written);
  if(descriptor < 0) {
    krb5_error_code code = errno;
    free(written);
    return code;
  }
  close(descriptor);
  krb5_ccache cache = NULL;
  krb5_error_code code = open_cache(context, written, &cache);
  if(!code && !(code = krb5_cc_initialize(context, cache, client)))
    code = krb5_cc_store_cred(context, cache, creds);
  if(cache)
    krb5_cc_close(context, cache);
  if(!code && rename(written, ccache_path) != 0)
    code = errno;
  if(code)
    unlink(written);
  free(written);
  return code;
}

long cxhr_krb5_get_tickets(const char *principal, const char *password, const char *ccache_path,
                           bool forwardable, char *error, size_t error_size)
{
  krb5_context context = NULL;
  krb5_principal client = NULL;
  krb5_get_init_creds_opt *options = NULL;
  krb5_creds creds;
  memset(&creds, 0, sizeof creds);
  char *secret = strdup(password);
  krb5_error_code code = secret ? krb5_init_context(&context) : ENOMEM;
  if(code) {
    describe(context, code, "cannot start Kerberos", error, error_size);
    goto done;
  }
  if((code = krb5_parse_name(context, principal, &client))) {
    describe(context, code, "invalid Kerberos principal", error, error_size);
    goto done;
  }
  if((code = krb5_get_init_creds_opt_alloc(context, &options)))
    goto failed;
  krb5_get_init_creds_opt_set_forwardable(options, forwardable ? 1 : 0);
  if((code = krb5_get_init_creds_password(context, &creds, client, secret, NULL, NULL, 0, NULL, options))) {
    describe(context, code, "Kerberos could not get tickets", error, error_size);
    goto done;
  }
  if((code = store_tickets(context, ccache_path, client, &creds)))
    goto failed;
  goto done;
failed:
  describe(context, code, "Kerberos could not store the tickets", error, error_size);
done:
  if(secret) {
    explicit_bzero(secret, strlen(secret));
    free(secret);
  }
  if(context) {
    krb5_free_cred_contents(context, &creds);
    if(options)
      krb5_get_init_creds_opt_free(context, options);
    if(client)
      krb5_free_principal(context, client);
    krb5_free_context(context);
  }
  return code;
}

int cxhr_krb5_has_tickets(const char *ccache_path)
{
  krb5_context context;
  if(krb5_init_context(&context))
    return 0;
  int found = 0;
  krb5_ccache cache = NULL;
  krb5_cc_cursor cursor;
  krb5_creds creds;
  if(!open_cache(context, ccache_path, &cache) && !krb5_cc_start_seq_get(context, cache, &cursor)) {
    krb5_timestamp now = (krb5_timestamp)time(NULL);
    while(!found && !krb5_cc_next_cred(context, cache, &cursor, &creds)) {
      found = krb5_is_config_principal(context, creds.server) == 0 &&
              creds.server->length == 2 &&
              creds.server->data[0].length == 6 && memcmp(creds.server->data[0].data, "krbtgt", 6) == 0 &&
              creds.times.endtime > now + 60;
      krb5_free_cred_contents(context, &creds);
    }
    krb5_cc_end_seq_get(context, cache, &cursor);
  }
  if(cache)
    krb5_cc_close(context, cache);
  krb5_free_context(context);
  return found;
}

long cxhr_krb5_destroy(const char *ccache_path)
{
  krb5_context context;
  krb5_error_code code = krb5_init_context(&context);
  if(code)
    return code;
  krb5_ccache cache = NULL;
  code = open_cache(context, ccache_path, &cache);
  if(!code)
    code = krb5_cc_destroy(context, cache);  /* also closes it */
  if(code == KRB5_FCC_NOFILE)
    code = 0;
  krb5_free_context(context);
  return code;
}

long cxhr_gss_use_ccache(const char *ccache_path)
{
  OM_uint32 minor = 0;
  if(!ccache_path)
    return (long)gss_krb5_ccache_name(&minor, NULL, NULL);
  size_t length = strlen(ccache_path) + sizeof "FILE:";
  char *name = malloc(length);
  if(!name)
    return -1;
  snprintf(name, length, "FILE:%s", ccache_path);
  OM_uint32 major = gss_krb5_ccache_name(&minor, name, NULL);
  free(name);
  return (long)major;
}
