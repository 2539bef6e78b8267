#include "cpac.h"

#include <dlfcn.h>
#include <pacparser.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/*
 * libpacparser (with the JavaScript engine inside it, 1.2 MB) is loaded when the first PAC
 * script is used, not when the program starts: a program without PAC never maps it.
 */
/* Typed by pacparser.h's own declarations: a changed signature fails to compile. */
static __typeof__(pacparser_init) *loaded_init;
static __typeof__(pacparser_parse_pac_string) *loaded_parse_pac_string;
static __typeof__(pacparser_find_proxy) *loaded_find_proxy;
static __typeof__(pacparser_cleanup) *loaded_cleanup;
static __typeof__(pacparser_set_error_printer) *loaded_set_error_printer;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_problem[256];
static char last_error[1024];
static bool context_open;

/* libpacparser's errors, kept instead of printed on stderr; the last line that says more
   than "pacparser.c: ..." wins. */
static int keep_error(const char *format, va_list arguments)
{
  char line[sizeof last_error];
  int length = vsnprintf(line, sizeof line, format, arguments);
  size_t end = strlen(line);
  while (end > 0 && (line[end - 1] == '\n' || line[end - 1] == '\r' || line[end - 1] == ' ')) line[--end] = '\0';
  if (end == 0) return length;
  if (last_error[0] == '\0' || strncmp(line, "pacparser.c: ", 13) != 0) {
    memcpy(last_error, line, end + 1);
  }
  return length;
}

static void load(void)
{
  void *library = dlopen("libpacparser.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(load_problem, sizeof load_problem, "libpacparser could not be loaded (%s; Debian: libpacparser1)",
             reason ? reason : "libpacparser.so.1");
    return;
  }
  *(void **)&loaded_init = dlsym(library, "pacparser_init");
  *(void **)&loaded_parse_pac_string = dlsym(library, "pacparser_parse_pac_string");
  *(void **)&loaded_find_proxy = dlsym(library, "pacparser_find_proxy");
  *(void **)&loaded_cleanup = dlsym(library, "pacparser_cleanup");
  *(void **)&loaded_set_error_printer = dlsym(library, "pacparser_set_error_printer");
  if (!loaded_init || !loaded_parse_pac_string || !loaded_find_proxy || !loaded_cleanup || !loaded_set_error_printer) {
    snprintf(load_problem, sizeof load_problem, "libpacparser could not be loaded (a function is missing)");
    return;
  }
  loaded_set_error_printer(keep_error);
}

bool cxhr_pac_use_script(const char *script)
{
  pthread_once(&load_once, load);
  last_error[0] = '\0';
  if (load_problem[0] != '\0') {
    snprintf(last_error, sizeof last_error, "%s", load_problem);
    return false;
  }
  if (context_open) loaded_cleanup();
  context_open = loaded_init() != 0;
  if (!context_open) {
    if (last_error[0] == '\0') snprintf(last_error, sizeof last_error, "libpacparser could not start its JavaScript engine");
    return false;
  }
  if (loaded_parse_pac_string(script) == 0) {
    if (last_error[0] == '\0') snprintf(last_error, sizeof last_error, "the script does not parse");
    loaded_cleanup();
    context_open = false;
    return false;
  }
  return true;
}

const char *cxhr_pac_find_proxy(const char *url, const char *host)
{
  last_error[0] = '\0';
  if (!context_open) {
    snprintf(last_error, sizeof last_error, "no PAC script is in use");
    return NULL;
  }
  const char *answer = loaded_find_proxy(url, host);
  if (answer == NULL && last_error[0] == '\0') snprintf(last_error, sizeof last_error, "FindProxyForURL gave no answer");
  return answer;
}

const char *cxhr_pac_error(void)
{
  return load_problem[0] != '\0' && last_error[0] == '\0' ? load_problem : last_error;
}
