#include "cpublicsuffix.h"

#include <libpsl.h>
#include <pthread.h>
#include <string.h>

static const psl_ctx_t *list;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/* The list built into libpsl, else the system's (a libpsl built without one). Kept for the
   process. */
static void load(void)
{
  list = psl_builtin();
  if (list == NULL) list = psl_latest(NULL);
}

bool cxhr_is_public_suffix(const char *domain)
{
  char lower[256];
  size_t length = strlen(domain);
  if (length > 0 && domain[length - 1] == '.') length--;
  if (length == 0 || length >= sizeof lower) return false;  /* longer than any DNS name */
  for (size_t index = 0; index < length; index++) {
    char c = domain[index];
    lower[index] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  lower[length] = '\0';
  pthread_once(&loaded, load);
  return list != NULL && psl_is_public_suffix2(list, lower, PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE) != 0;
}
