/* libFuzzer target: the C interface's argument and state checks (curlxhr.h).
 *
 * The input is a program: each operation is a byte choosing a cxhr_* call, then bytes choosing
 * its arguments: a request handle (NULL, one of four requests, a destroyed one, or a pointer
 * that never was one), strings (NULL, "", fuzzed text, or a few meaningful ones), sizes (0,
 * small, PTRDIFF_MAX + 1, SIZE_MAX), timeouts (negative, NaN, infinite, huge), cookies with
 * odd fields and expiries. After each call the target checks what curlxhr.h promises:
 * - NULL, destroyed and made-up handles are refused (false, NULL, 0, CXHR_UNSENT) and never
 *   touched;
 * - pre-send switches work in UNSENT, OPENED and DONE only, the message calls
 *   (set_request_header, set_post_value, clear_post_values) in OPENED only, and
 *   set_request_header exactly for a token name (not Content-Length or Transfer-Encoding)
 *   and a value without CR or LF;
 * - cxhr_send refuses a length above PTRDIFF_MAX, NULL data with a length, a negative or
 *   non-finite timeout, and any state but OPENED, leaving the state as it was; a synchronous
 *   send returns in DONE;
 * - a call that returns false leaves a reason (cxhr_get_last_error and its code), one that
 *   succeeds clears it;
 * - strings handed out stay readable until the request is re-opened or destroyed (read again
 *   before every call, so AddressSanitizer sees a string freed early), callbacks never run
 *   after cxhr_request_destroy returns (their user data is freed then), and the status is 0
 *   (nothing ever answers);
 * - cookies_set refuses what its documentation lists, cookies_delete accepts exactly valid
 *   arguments, cookies_list gives NULL with a count of 0 or an array of complete cookies;
 * - cxhr_kerberos_clear_credentials knows exactly the four schemes.
 *
 * Nothing leaves the machine: the cookie store, the Kerberos cache and the XDG folders are in a
 * temporary directory, proxies from the environment are off and the Kerberos configuration
 * empty, and a request is only ever sent when it was opened to http://127.0.0.1:1/ (where
 * nothing listens) without Negotiate and with its proxy switched off; any other send the
 * program asks for is made only in a form that must be refused before anything goes out.
 */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <curlxhr.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if(!(cond)) {                                                                     \
      fprintf(stderr, "property violated (%s:%d): %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
      abort();                                                                        \
    }                                                                                 \
  } while(0)

#define SAFE_URL "http://127.0.0.1:1/"
#define SLOTS 4
#define MAX_OPERATIONS 96
#define MAX_SENDS 8

static char directory[4096], cookie_file[4200], kerberos_cache[4200], kerberos_config[4200], body_file[4200];

/* MARK: Reading the program */

typedef struct {
  const uint8_t *data;
  size_t size;
} program;

static uint8_t next_byte(program *p)
{
  if(!p->size)
    return 0;
  p->size--;
  return *p->data++;
}

static uint64_t next_u64(program *p)
{
  uint64_t value = 0;
  for(int i = 0; i < 8; i++)
    value = value << 8 | next_byte(p);
  return value;
}

/* Texts made for one input, freed at its end. */
static char *texts[MAX_OPERATIONS * 8];
static size_t text_count;

static char *fuzzed_text(program *p)
{
  size_t length = next_byte(p);
  if(length > p->size)
    length = p->size;
  char *text = malloc(length + 1);
  memcpy(text, p->data, length);
  text[length] = 0;
  p->data += length;
  p->size -= length;
  if(text_count < sizeof texts / sizeof texts[0])
    texts[text_count++] = text;
  else
    abort(); /* MAX_OPERATIONS bounds the texts */
  return text;
}

/* NULL, "", a fuzzed text or one of the given ones. */
static const char *pick_text(program *p, const char *const *choices, size_t count)
{
  uint8_t choice = next_byte(p) % (count + 3);
  if(choice == 0)
    return NULL;
  if(choice == 1)
    return "";
  if(choice == 2)
    return fuzzed_text(p);
  return choices[choice - 3];
}

#define PICK(p, ...)                                                       \
  pick_text(p, (const char *const[]){__VA_ARGS__},                         \
            sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* A count or an enum value: the edges of what the calls take, or any. */
static int pick_int(program *p)
{
  static const int choices[] = {-2, -1, 0, 1, 4, 6, 10, 12, 13, 14, 10000, 10001, INT_MIN, INT_MAX};
  uint8_t choice = next_byte(p) % (sizeof choices / sizeof choices[0] + 1);
  if(choice == sizeof choices / sizeof choices[0])
    return (int)(uint32_t)next_u64(p);
  return choices[choice];
}

/* MARK: Requests */

typedef struct {
  uint32_t magic;
  volatile int calls;
  /* cxhr_request_destroy runs: a callback that starts meanwhile finds the handle gone. */
  volatile int destroying;
} callback_data;

#define CALLBACK_MAGIC 0xC0FFEEu

typedef struct {
  cxhr_request *handle;
  /* Opened to SAFE_URL without Negotiate: the only requests ever sent. */
  bool safe;
  /* A routing switch with a fuzzed text was accepted (it survives open): never sent. */
  bool routed;
  bool async;
  /* Strings handed out for this request: readable until it is re-opened or destroyed. */
  const char *kept[64];
  size_t kept_count;
  callback_data *callbacks[8];
  size_t callback_count;
} slot;

static slot slots[SLOTS];
static cxhr_request *destroyed[16];
static size_t destroyed_count;
static int sends;

static void keep(slot *s, const char *text)
{
  if(text && s && s->kept_count < sizeof s->kept / sizeof s->kept[0])
    s->kept[s->kept_count++] = text;
}

static void read_kept_strings(void)
{
  for(int i = 0; i < SLOTS; i++)
    for(size_t k = 0; k < slots[i].kept_count; k++) {
      volatile size_t length = strlen(slots[i].kept[k]);
      (void)length;
    }
}

static void on_status(cxhr_request *request, void *user_data)
{
  callback_data *data = user_data;
  if(data) {
    CHECK(data->magic == CALLBACK_MAGIC, "a callback with someone else's user data");
    data->calls++;
  }
  cxhr_state state = cxhr_get_state(request);
  CHECK((state >= CXHR_OPENED && state <= CXHR_DONE) || (data && data->destroying && state == CXHR_UNSENT),
        "a callback reports state %d", (int)state);
  CHECK(cxhr_get_status(request) == 0, "a status from a server that is not there");
}

/* A handle to call with, and its slot when it is a live request. */
static cxhr_request *pick_handle(program *p, slot **live)
{
  *live = NULL;
  uint8_t choice = next_byte(p) % 8;
  switch(choice) {
  case 0:
    return NULL;
  case 5:
    return destroyed_count ? destroyed[next_byte(p) % destroyed_count] : NULL;
  case 6:
    /* Never a handle: the library's handles are small counters shifted left. */
    return (cxhr_request *)(uintptr_t)(next_u64(p) | (UINT64_C(1) << 62));
  default: {
    slot *s = &slots[choice == 7 ? 0 : choice - 1];
    if(s->handle)
      *live = s;
    return s->handle;
  }
  }
}

static void destroy(slot *s)
{
  for(size_t i = 0; i < s->callback_count; i++)
    s->callbacks[i]->destroying = 1;
  cxhr_request_destroy(s->handle);
  static size_t oldest;
  if(destroyed_count < sizeof destroyed / sizeof destroyed[0])
    destroyed[destroyed_count++] = s->handle;
  else
    destroyed[oldest++ % destroyed_count] = s->handle;
  /* No callback may run now: one that did would read freed memory. */
  for(size_t i = 0; i < s->callback_count; i++)
    free(s->callbacks[i]);
  memset(s, 0, sizeof *s);
}

/* The outcome of a call on a live request: false leaves a reason, true clears it. */
static void check_reason(slot *s, bool result, const char *call)
{
  if(!s)
    return;
  const char *error = cxhr_get_last_error(s->handle);
  cxhr_error_code code = cxhr_get_last_error_code(s->handle);
  if(result)
    CHECK(!error && code == CXHR_ERROR_NONE, "%s succeeded with the reason '%s' (%d)", call, error, (int)code);
  else
    CHECK(error && *error && code != CXHR_ERROR_NONE, "%s failed without a reason", call);
  keep(s, error);
}

static bool pre_send_state(cxhr_state state)
{
  return state == CXHR_UNSENT || state == CXHR_OPENED || state == CXHR_DONE;
}

/* MARK: Text rules */

static bool has_control(const char *text)
{
  for(const unsigned char *c = (const unsigned char *)text; c && *c; c++)
    if(*c < 0x20 || *c == 0x7F)
      return true;
  return false;
}

static bool is_utf8(const char *text)
{
  const unsigned char *c = (const unsigned char *)text;
  while(c && *c) {
    int extra;
    uint32_t scalar;
    if(*c < 0x80) {
      c++;
      continue;
    }
    else if((*c & 0xE0) == 0xC0) {
      extra = 1;
      scalar = *c & 0x1F;
    }
    else if((*c & 0xF0) == 0xE0) {
      extra = 2;
      scalar = *c & 0x0F;
    }
    else if((*c & 0xF8) == 0xF0) {
      extra = 3;
      scalar = *c & 0x07;
    }
    else
      return false;
    c++;
    for(int i = 0; i < extra; i++, c++) {
      if((*c & 0xC0) != 0x80)
        return false;
      scalar = scalar << 6 | (*c & 0x3F);
    }
    static const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if(scalar < smallest[extra] || scalar > 0x10FFFF || (scalar >= 0xD800 && scalar <= 0xDFFF))
      return false;
  }
  return true;
}

static bool is_token(const char *text)
{
  if(!*text)
    return false;
  for(const unsigned char *c = (const unsigned char *)text; *c; c++)
    if(!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') ||
         strchr("!#$%&'*+-.^_`|~", *c)))
      return false;
  return true;
}

/* MARK: Operations */

static const char *const auths[] = {"BASIC", "digest", "NTLM", "negotiate", "BEARER"};

static void open_request(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  const char *method = PICK(p, "GET", "post", "PUT", "HEAD", "DELETE", "PATCH", "PROPFIND", "GET /");
  /* SAFE_URL, with a fuzzed path after it sometimes. */
  uint8_t url_choice = next_byte(p) % 6;
  const char *url;
  char *safe_with_path = NULL;
  if(url_choice == 0) {
    const char *path = fuzzed_text(p);
    safe_with_path = malloc(strlen(SAFE_URL) + strlen(path) + 1);
    strcpy(safe_with_path, SAFE_URL);
    strcat(safe_with_path, path);
    url = safe_with_path;
  }
  else if(url_choice <= 2)
    url = SAFE_URL;
  else
    url = PICK(p, "https://127.0.0.1:1/", "http://user:pass@127.0.0.1:1/x?y#z", "ftp://127.0.0.1/",
               "http://[::1]:1/", "http://", "http://exa mple.com/", "http://127.0.0.1:1/\xc3\xa9");
  bool async = next_byte(p) & 1;
  const char *user = PICK(p, "user", "user@EXAMPLE.ORG", "bad\\user");
  const char *password = PICK(p, "secret");
  const char *auth = pick_text(p, auths, sizeof auths / sizeof auths[0]);

  bool result = cxhr_open(handle, method, url, async, user, password, auth);
  if(s && method && url) {
    /* Every open forgets what the request handed out before (even one that fails). */
    s->kept_count = 0;
  }
  CHECK(!result || (s && method && url), "open succeeded without a request, a method or a URL");
  if(s && result) {
    CHECK(is_token(method), "open accepted the method '%s'", method);
    CHECK(cxhr_get_state(handle) == CXHR_OPENED, "open left state %d", (int)cxhr_get_state(handle));
    s->safe = strncmp(url, SAFE_URL, strlen(SAFE_URL)) == 0 && !(auth && strcasecmp(auth, "negotiate") == 0);
    s->async = async;
  }
  check_reason(s, result, "open");
  free(safe_with_path);
}

static void pre_send_switch(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  cxhr_state state = cxhr_get_state(handle);
  bool allowed = s && pre_send_state(state);
  bool result;
  const char *name;
  switch(next_byte(p) % 24) {
  case 0:
    name = "disable_host_verification";
    result = cxhr_disable_host_verification(handle);
    break;
  case 1:
    name = "disable_peer_verification";
    result = cxhr_disable_peer_verification(handle);
    break;
  case 2:
    name = "disable_follow_location";
    result = cxhr_disable_follow_location(handle);
    break;
  case 3:
    name = "disable_cookie_handling";
    result = cxhr_disable_cookie_handling(handle);
    break;
  case 4:
    name = "disable_http_proxy";
    result = cxhr_disable_http_proxy(handle);
    break;
  case 5: {
    name = "set_ca_certificate_file";
    const char *path = PICK(p, body_file, "/nonexistent/ca.pem", "/", "/dev/null");
    result = cxhr_set_ca_certificate_file(handle, path);
    if(!path || !*path || strcmp(path, "/nonexistent/ca.pem") == 0)
      CHECK(!result, "set_ca_certificate_file accepted '%s'", path ? path : "(null)");
    /* A file that cannot be read is refused in any state. */
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_ca_certificate_file said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 6: {
    name = "set_enable_pipelining";
    result = cxhr_set_enable_pipelining(handle, next_byte(p) & 1);
    CHECK(result == (s != NULL), "set_enable_pipelining said %d", result);
    /* Its success once left the reason of an earlier failure in place (found here;
       corpus/capi/regress-pipelining-keeps-last-error). */
    check_reason(s, result, name);
    return;
  }
  case 8: {
    name = "set_max_redirects";
    int count = pick_int(p);
    result = cxhr_set_max_redirects(handle, count);
    CHECK(!result || (count >= -1 && count <= 10000), "set_max_redirects accepted %d", count);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_max_redirects said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 9: {
    name = "set_ip_version";
    int version = pick_int(p);
    result = cxhr_set_ip_version(handle, (cxhr_ip_version)version);
    CHECK(!result || version == CXHR_IP_ANY || version == CXHR_IP_V4 || version == CXHR_IP_V6,
          "set_ip_version accepted %d", version);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_ip_version said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 10: {
    name = "set_tls_version";
    int minimum = pick_int(p), maximum = pick_int(p);
    result = cxhr_set_tls_version(handle, (cxhr_tls_version)minimum, (cxhr_tls_version)maximum);
    bool known = (minimum == 0 || (minimum >= 10 && minimum <= 13)) && (maximum == 0 || (maximum >= 10 && maximum <= 13));
    CHECK(!result || (known && (minimum == 0 || maximum == 0 || minimum <= maximum)),
          "set_tls_version accepted %d..%d", minimum, maximum);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_tls_version said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 11: {
    name = "set_ca_certificate_path";
    const char *path = PICK(p, "/nonexistent/certs", "/", "/dev/null", "/tmp\r\nX: y");
    result = cxhr_set_ca_certificate_path(handle, path);
    if(!path || !*path || strcmp(path, "/nonexistent/certs") == 0 || strcmp(path, "/dev/null") == 0 || strchr(path, '\r'))
      CHECK(!result, "set_ca_certificate_path accepted '%s'", path ? path : "(null)");
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_ca_certificate_path said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 14:
  case 15: {
    /* Entries in curl's syntax, good and bad, or fuzzed ones. */
    bool resolve = next_byte(p) & 1;
    name = resolve ? "set_resolve" : "set_connect_to";
    const char *entries[4];
    size_t count = next_byte(p) % 5;
    for(size_t i = 0; i < count && i < 4; i++) {
      entries[i] = resolve ? PICK(p, "127.0.0.1:1:127.0.0.1", "*:1:127.0.0.1,::1", "-h:1", "h:0:127.0.0.1", "h:65536:1.2.3.4",
                                  "h:1:not-an-address", "h:1:127.0.0.1\r\nX: y")
                           : PICK(p, "::127.0.0.1:1", "127.0.0.1:1:[::1]:1", "a:1:b", "a:0:b:1", "[::1:1:b:1", "a:1:b:1\n");
    }
    /* Now and then a count with no array, or a count past the array: refused unread. */
    uint8_t shape = next_byte(p) % 8;
    const char *const *list = shape == 0 ? NULL : entries;
    size_t passed = shape == 1 ? (size_t)-1 : count;
    result = resolve ? cxhr_set_resolve(handle, list, passed) : cxhr_set_connect_to(handle, list, passed);
    for(size_t i = 0; result && i < count; i++)
      CHECK(entries[i] && !has_control(entries[i]), "%s accepted entry %zu", name, i);
    CHECK(!result || passed == 0 || list, "%s accepted a NULL list of %zu", name, passed);
    CHECK(!result || passed <= 4, "%s accepted a count of %zu", name, passed);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "%s said true in state %d", name, (int)state);
    /* A fuzzed entry that was accepted may lead anywhere: the request is never sent again. */
    if(result && s && passed > 0)
      s->routed = true;
    check_reason(s, result, name);
    return;
  }
  case 16: {
    name = "set_unix_socket";
    const char *path = PICK(p, "/nonexistent/curlxhr.sock", "@curlxhr-fuzz-none", "@", "/tmp/a\nb",
                            "/ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss");
    result = cxhr_set_unix_socket(handle, path);
    if(path && (!*path || strcmp(path, "@") == 0 || strchr(path, '\n') || strlen(path) > 107))
      CHECK(!result, "set_unix_socket accepted '%s'", path);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_unix_socket said true in state %d", (int)state);
    if(result && s && path)
      s->routed = true;
    check_reason(s, result, name);
    return;
  }
  case 17: {
    name = "set_interface";
    const char *interface = PICK(p, "lo", "if!lo", "127.0.0.1", "a b", "a/b", "abcdefghijklmnop", "host!example.com");
    result = cxhr_set_interface(handle, interface);
    if(interface && (!*interface || has_control(interface) || strchr(interface, ' ') || strchr(interface, '/')))
      CHECK(!result, "set_interface accepted '%s'", interface);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_interface said true in state %d", (int)state);
    if(result && s && interface)
      s->routed = true;
    check_reason(s, result, name);
    return;
  }
  case 18: {
    bool proxy = next_byte(p) & 1;
    name = proxy ? "set_proxy_service_name" : "set_service_name";
    const char *service = PICK(p, "HTTP", "ALT", "rcmd", "HTTP/host", "a@b", "a b");
    result = proxy ? cxhr_set_proxy_service_name(handle, service) : cxhr_set_service_name(handle, service);
    if(service && (!*service || has_control(service) || strpbrk(service, " /@")))
      CHECK(!result, "%s accepted '%s'", name, service);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "%s said true in state %d", name, (int)state);
    check_reason(s, result, name);
    return;
  }
  case 19:
    name = "disable_connection_reuse";
    result = cxhr_disable_connection_reuse(handle);
    break;
  case 12:
    name = "enable_location_trusted";
    result = cxhr_enable_location_trusted(handle);
    break;
  case 13: {
    name = "set_allowed_schemes";
    const char *schemes = PICK(p, "http,https", "https", "", "gopher", "http\nhttps", "all");
    const char *redirects = PICK(p, "https", "http,https", "ftp");
    result = cxhr_set_allowed_schemes(handle, schemes, redirects);
    if(schemes && strchr(schemes, '\n'))
      CHECK(!result, "set_allowed_schemes accepted a line break");
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_allowed_schemes said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 20: {
    bool proxy = next_byte(p) & 1;
    name = proxy ? "set_proxy_client_certificate" : "set_client_certificate";
    const char *path = PICK(p, body_file, "/nonexistent/client.pem", "/", "/dev/null", "/tmp\r\nX: y");
    const char *key = PICK(p, body_file, "/nonexistent/client.key");
    int format = pick_int(p);
    const char *password = PICK(p, "secret", "");
    result = proxy ? cxhr_set_proxy_client_certificate(handle, path, (cxhr_cert_format)format, key, password)
                   : cxhr_set_client_certificate(handle, path, (cxhr_cert_format)format, key, password);
    if(!path || strcmp(path, body_file) != 0 || (key && strcmp(key, body_file) != 0) || format < 0 || format > 2
       || (format == CXHR_CERT_P12 && key))
      CHECK(!result, "%s accepted '%s' key '%s' format %d", name, path ? path : "(null)", key ? key : "(null)", format);
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "%s said true in state %d", name, (int)state);
    check_reason(s, result, name);
    return;
  }
  case 21: {
    const char *pins = PICK(p, "sha256//BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=", "sha256//abc", "", "/nonexistent/key.pem",
                            "sha256//BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=;", body_file);
    if(next_byte(p) & 1) {
      name = "set_client_certificate_p12";
      size_t length = pins ? strlen(pins) : 0;
      result = cxhr_set_client_certificate_p12(handle, pins, length, PICK(p, "secret"));
      CHECK(!result || (length > 0 && pins[0] == 0x30), "set_client_certificate_p12 accepted '%s'", pins ? pins : "(null)");
    } else {
      bool proxy = next_byte(p) & 1;
      name = proxy ? "set_proxy_pinned_public_keys" : "set_pinned_public_keys";
      result = proxy ? cxhr_set_proxy_pinned_public_keys(handle, pins) : cxhr_set_pinned_public_keys(handle, pins);
      if(!pins || strcmp(pins, "sha256//abc") == 0 || strchr(pins, ';') || strcmp(pins, "/nonexistent/key.pem") == 0)
        CHECK(!result, "%s accepted '%s'", name, pins ? pins : "(null)");
    }
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "%s said true in state %d", name, (int)state);
    check_reason(s, result, name);
    return;
  }
  case 22: {
    name = "set_proxy";
    const char *url = PICK(p, "socks5://127.0.0.1:1", "https://127.0.0.1:1", "socks4://127.0.0.1", "ftp://127.0.0.1:1",
                           "http://127.0.0.1:0", "http://127.0.0.1:1/path", "http://a\r\nb:1", "", "127.0.0.1:65536");
    const char *user = PICK(p, "user", "u\nx");
    const char *password = PICK(p, "secret");
    const char *auth = pick_text(p, auths, sizeof auths / sizeof auths[0]);
    result = cxhr_set_proxy(handle, url, user, password, auth);
    if(!url || strncmp(url, "ftp:", 4) == 0 || strstr(url, ":0") || strstr(url, "/path") || strchr(url, '\r') || !*url
       || strstr(url, "65536") || (user && strchr(user, '\n')) || (strncmp(url, "socks4", 6) == 0 && user && password))
      CHECK(!result, "set_proxy accepted '%s'", url ? url : "(null)");
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "set_proxy said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  case 23: {
    const char *text = PICK(p, "127.0.0.1", "*", "", "a\nb", "X-Tenant", "X Y", body_file, "/nonexistent/ca.pem");
    switch(next_byte(p) % 4) {
    case 0:
      name = "set_proxy_bypass";
      result = cxhr_set_proxy_bypass(handle, text);
      if(!text || strchr(text, '\n'))
        CHECK(!result, "set_proxy_bypass accepted a line break or NULL");
      break;
    case 1: {
      name = "set_proxy_header";
      const char *value = PICK(p, "blue", "", "a\r\nX: y");
      result = cxhr_set_proxy_header(handle, text, value);
      if(!text || !value || !*text || strchr(text, ' ') || strchr(text, '\n') || strchr(text, '/') || strchr(value, '\r'))
        CHECK(!result, "set_proxy_header accepted '%s: %s'", text ? text : "(null)", value ? value : "(null)");
      break;
    }
    case 2:
      name = "set_proxy_ca_certificate_file";
      result = cxhr_set_proxy_ca_certificate_file(handle, text);
      if(!text || strcmp(text, body_file) != 0)
        CHECK(!result, "set_proxy_ca_certificate_file accepted '%s'", text ? text : "(null)");
      break;
    default:
      name = "disable_proxy_peer_verification";
      result = cxhr_disable_proxy_peer_verification(handle);
      break;
    }
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "%s said true in state %d", name, (int)state);
    check_reason(s, result, name);
    return;
  }
  default: {
    name = "enable_http_proxy";
    const char *host = PICK(p, "127.0.0.1", "::1", "[::1]", "proxy.invalid", "a b", "h/x");
    int port = (int)(int32_t)(uint32_t)next_u64(p);
    if(next_byte(p) & 1)
      port = (int)(port & 0x1FFFF) - 1;
    const char *user = PICK(p, "user", "user@EXAMPLE.ORG");
    const char *password = PICK(p, "secret");
    const char *auth = pick_text(p, auths, sizeof auths / sizeof auths[0]);
    result = cxhr_enable_http_proxy(handle, host, port, user, password, auth);
    if(result)
      CHECK(host && *host && port >= 1 && port <= 65535 && (!auth || strcasecmp(auth, "bearer") != 0),
            "enable_http_proxy accepted %s:%d (%s)", host ? host : "(null)", port, auth ? auth : "");
    /* A bad host, port or scheme is refused in any state. */
    CHECK(!result || allowed || cxhr_get_state(handle) == CXHR_DONE, "enable_http_proxy said true in state %d", (int)state);
    check_reason(s, result, name);
    return;
  }
  }
  /* A request in flight may end (DONE) between the state read and the call. */
  if(s && state >= CXHR_SENT && state < CXHR_DONE)
    CHECK(!result || cxhr_get_state(handle) == CXHR_DONE, "%s said true in flight", name);
  else
    CHECK(result == allowed, "%s said %d in state %d (%s request)", name, result, (int)state, s ? "live" : "no");
  check_reason(s, result, name);
}

static void message_call(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  bool opened = s && cxhr_get_state(handle) == CXHR_OPENED;
  bool result;
  switch(next_byte(p) % 3) {
  case 0: {
    const char *name = PICK(p, "X-Custom", "content-length", "Transfer-Encoding", "Bad Name", "Accept");
    const char *value = PICK(p, "value", " padded\t", "a\r\nInjected: yes", "gr\xc3\xbc\xc3\x9f" "e");
    result = cxhr_set_request_header(handle, name, value);
    bool valid = name && value && is_token(name) && !strpbrk(value, "\r\n") &&
                 strcasecmp(name, "content-length") != 0 && strcasecmp(name, "transfer-encoding") != 0;
    CHECK(result == (opened && valid), "set_request_header('%s', '%s') said %d", name ? name : "(null)",
          value ? value : "(null)", result);
    check_reason(s, result, "set_request_header");
    if(next_byte(p) & 1) {
      /* Leaving the field out: the same name rules, the value aside. */
      result = cxhr_remove_request_header(handle, name);
      bool removable = name && is_token(name) && strcasecmp(name, "content-length") != 0 &&
                       strcasecmp(name, "transfer-encoding") != 0;
      CHECK(result == (opened && removable), "remove_request_header('%s') said %d", name ? name : "(null)", result);
      check_reason(s, result, "remove_request_header");
    }
    break;
  }
  case 1: {
    const char *value = PICK(p, "v", "a b&c=d");
    const char *key = PICK(p, "k", "\xc3\xa9", "e\xcc\x81");
    result = cxhr_set_post_value(handle, value, key);
    CHECK(result == (opened && value && key), "set_post_value said %d", result);
    check_reason(s, result, "set_post_value");
    break;
  }
  default:
    result = cxhr_clear_post_values(handle);
    CHECK(result == opened, "clear_post_values said %d", result);
    check_reason(s, result, "clear_post_values");
  }
}

static double pick_timeout(program *p)
{
  switch(next_byte(p) % 8) {
  case 0: return 0;
  case 1: return 5;
  case 2: return -1;
  case 3: return NAN;
  case 4: return INFINITY;
  case 5: return -INFINITY;
  case 6: return 1e300;
  default: {
    uint64_t bits = next_u64(p);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
  }
  }
}

static void send_request(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  cxhr_state state = cxhr_get_state(handle);
  uint8_t kind = next_byte(p) % 4;
  double timeout = pick_timeout(p);
  bool timeout_ok = isfinite(timeout) && timeout >= 0;
  static const char bytes[64] = "a body of a few bytes";
  const void *data = NULL;
  size_t length = 0;
  const char *text = NULL;
  const char *path = NULL;
  int64_t offset = 0, range_length = -1;
  bool arguments_ok = true;
  if(kind == 0) {
    switch(next_byte(p) % 6) {
    case 0: break;
    case 1: data = bytes; length = next_byte(p) % sizeof bytes; break;
    case 2: data = NULL; length = 1 + next_byte(p); arguments_ok = false; break;
    case 3: data = bytes; length = SIZE_MAX; arguments_ok = false; break;
    case 4: data = bytes; length = (size_t)PTRDIFF_MAX + 1; arguments_ok = false; break;
    default: data = next_byte(p) & 1 ? bytes : NULL; length = (size_t)PTRDIFF_MAX + 1 + next_u64(p) % ((size_t)PTRDIFF_MAX); arguments_ok = false; break;
    }
  }
  else if(kind == 1)
    text = PICK(p, "text", "gr\xc3\xbc\xc3\x9f" "e");
  else {
    path = PICK(p, body_file, "/nonexistent/body", "/", "/dev/null");
    struct stat info;
    arguments_ok = path && stat(path, &info) == 0 && S_ISREG(info.st_mode) && access(path, R_OK) == 0;
    if(kind == 3) {
      /* cxhr_send_file_range: a range inside the file, or not. */
      static const int64_t edges[] = {0, 1, -1, -2, 5, 1000000, INT64_MAX, INT64_MIN};
      offset = edges[next_byte(p) % 8];
      range_length = edges[next_byte(p) % 8];
      int64_t size = arguments_ok ? (int64_t)info.st_size : 0;
      arguments_ok = arguments_ok && offset >= 0 && offset <= size && range_length >= -1 && range_length <= size - offset;
    }
  }

  /* What would go out: only to SAFE_URL, without a proxy. A request opened elsewhere is never
     asked to send, not even in a form that must be refused. */
  if(s && state == CXHR_OPENED && (!s->safe || s->routed))
    return;
  bool would_send = s && state == CXHR_OPENED && arguments_ok;
  if(would_send) {
    if(sends >= MAX_SENDS)
      return;
    CHECK(cxhr_disable_http_proxy(handle), "disable_http_proxy refused in OPENED");
    sends++;
  }

  bool result;
  if(kind == 0)
    result = cxhr_send(handle, data, length, timeout);
  else if(kind == 1)
    result = cxhr_send_text(handle, text, timeout);
  else if(kind == 2)
    result = cxhr_send_file(handle, path, timeout);
  else
    result = cxhr_send_file_range(handle, path, offset, range_length, timeout);

  if(!would_send || !timeout_ok) {
    CHECK(!result, "a send that must be refused went out (state %d, kind %d, length %zu, path '%s', timeout %g)", (int)state,
          kind, length, path ? path : "(null)", timeout);
    if(s) {
      cxhr_state after = cxhr_get_state(handle);
      CHECK(after == state || (state >= CXHR_SENT && state < CXHR_DONE && after > state),
            "a refused send moved the state from %d to %d", (int)state, (int)after);
    }
  }
  if(result && !s->async) {
    CHECK(cxhr_get_state(handle) == CXHR_DONE, "a synchronous send returned in state %d", (int)cxhr_get_state(handle));
    CHECK(cxhr_get_failure_kind(handle) != CXHR_FAILURE_NONE, "nothing listens at " SAFE_URL ", yet no failure");
  }
  if(s)
    check_reason(s, result, kind == 0 ? "send" : kind == 1 ? "send_text" : kind == 2 ? "send_file" : "send_file_range");
}

static void stop_request(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  cxhr_state state = cxhr_get_state(handle);
  if(next_byte(p) & 1) {
    bool result = cxhr_abort(handle);
    bool in_flight = state >= CXHR_SENT && state < CXHR_DONE;
    /* An asynchronous request may end by itself meanwhile. */
    CHECK(!result || s, "abort succeeded without a request");
    if(s && !in_flight)
      CHECK(!result, "abort succeeded in state %d", (int)state);
    if(s && result)
      CHECK(cxhr_get_state(handle) == CXHR_DONE, "abort returned in state %d", (int)cxhr_get_state(handle));
  }
  else {
    bool result = cxhr_close(handle);
    CHECK(!result || s, "close succeeded without a request");
  }
}

static void read_response(program *p)
{
  slot *s;
  cxhr_request *handle = pick_handle(p, &s);
  cxhr_state state = cxhr_get_state(handle);
  CHECK(state >= CXHR_UNSENT && state <= CXHR_DONE, "state %d", (int)state);
  if(!s)
    CHECK(state == CXHR_UNSENT, "state %d without a request", (int)state);
  CHECK(cxhr_get_status(handle) == 0, "a status from a server that is not there");
  switch(next_byte(p) % 7) {
  case 0: {
    const char *text = cxhr_get_status_text(handle);
    CHECK(s || !text, "a status text without a request");
    keep(s, text);
    break;
  }
  case 1: {
    const char *name = PICK(p, "Content-Type", "set-cookie", "");
    const char *value = cxhr_get_response_header(handle, name);
    CHECK((value != NULL) == (s && name), "get_response_header gave %p", (const void *)value);
    if(value)
      CHECK(!*value, "a header from a server that is not there: '%s'", value);
    keep(s, value);
    break;
  }
  case 2: {
    const char *all = cxhr_get_all_response_headers(handle);
    CHECK(s || !all, "headers without a request");
    keep(s, all);
    break;
  }
  case 3: {
    size_t length = 12345;
    const void *buffer = cxhr_get_receive_buffer(handle, next_byte(p) & 1 ? &length : NULL);
    CHECK(!buffer, "bytes from a server that is not there");
    CHECK(length == 12345 || length == 0, "a receive buffer of %zu bytes", length);
    break;
  }
  case 4: {
    cxhr_metrics metrics;
    memset(&metrics, 0xA5, sizeof metrics);
    bool with = next_byte(p) & 1;
    bool result = cxhr_get_metrics(handle, with ? &metrics : NULL);
    CHECK(result == (s && with), "get_metrics said %d", result);
    if(with && !s)
      CHECK(!metrics.http_version && !metrics.effective_url && metrics.redirect_count == 0 && metrics.total_s == -1,
            "get_metrics left the metrics unset without a request");
    if(with && s) {
      CHECK(!metrics.http_version, "a protocol from a server that is not there");
      keep(s, metrics.effective_url);
    }
    break;
  }
  case 5: {
    cxhr_failure_kind kind = cxhr_get_failure_kind(handle);
    CHECK(kind >= CXHR_FAILURE_NONE && kind <= CXHR_FAILURE_OTHER && (s || kind == CXHR_FAILURE_NONE),
          "failure kind %d", (int)kind);
    CHECK(cxhr_get_bytes_sent(handle) >= 0 && (s || cxhr_get_bytes_sent(handle) == 0), "bytes sent");
    break;
  }
  default: {
    const char *error = cxhr_get_last_error(handle);
    cxhr_error_code code = cxhr_get_last_error_code(handle);
    CHECK((error != NULL) == (code != CXHR_ERROR_NONE), "last error '%s' with code %d", error ? error : "", (int)code);
    CHECK(s || !error, "a last error without a request");
    keep(s, error);
  }
  }
}

static bool *touched_cookies;

static void fill_cookie(program *p, cxhr_cookie *cookie)
{
  cookie->name = PICK(p, "sid", "a=b", "a;b", "a b", "\xc3\xa9", "n\xcc\x81");
  cookie->value = PICK(p, "v", "x;y", "gr\xc3\xbc\xc3\x9f" "e", "\xff");
  cookie->domain = PICK(p, "127.0.0.1", "example.com", ".example.com", "a/b", "com", "#HttpOnly_x", "Set-Cookie:a=b");
  cookie->path = PICK(p, "/", "/app/", "nopath", "/\t");
  uint8_t flags = next_byte(p);
  cookie->include_subdomains = flags & 1;
  cookie->secure = flags & 2;
  cookie->http_only = flags & 4;
  switch(next_byte(p) % 6) {
  case 0: cookie->expires = 0; break;
  case 1: cookie->expires = (int64_t)time(NULL) + 3600; break;
  case 2: cookie->expires = 1; break;
  case 3: cookie->expires = -1; break;
  case 4: cookie->expires = INT64_MAX; break;
  default: cookie->expires = (int64_t)next_u64(p); break;
  }
}

static void cookie_call(program *p)
{
  *touched_cookies = true;
  cxhr_cookie cookie;
  switch(next_byte(p) % 5) {
  case 0: {
    fill_cookie(p, &cookie);
    bool null_cookie = next_byte(p) % 16 == 0;
    bool result = cxhr_cookies_set(null_cookie ? NULL : &cookie);
    const char *value = cookie.value ? cookie.value : "", *path = cookie.path ? cookie.path : "/";
    bool refused = null_cookie || !cookie.name || !cookie.domain || !is_utf8(cookie.name) || !is_utf8(value) ||
                   !is_utf8(cookie.domain) || !is_utf8(path) || has_control(cookie.name) || has_control(value) ||
                   has_control(cookie.domain) || has_control(path) || !*cookie.name || strpbrk(cookie.name, "=; ") ||
                   strchr(value, ';') || cookie.domain[0] == '.' || strchr(cookie.domain, '/') || path[0] != '/' ||
                   cookie.expires < 0;
    if(refused)
      CHECK(!result, "cookies_set accepted name '%s' value '%s' domain '%s' path '%s' expires %lld",
            cookie.name ? cookie.name : "(null)", value, cookie.domain ? cookie.domain : "(null)", path,
            (long long)cookie.expires);
    break;
  }
  case 1: {
    fill_cookie(p, &cookie);
    bool null_cookie = next_byte(p) % 16 == 0;
    bool result = cxhr_cookies_delete(null_cookie ? NULL : &cookie);
    const char *path = cookie.path ? cookie.path : "/";
    bool valid = !null_cookie && cookie.name && cookie.domain && is_utf8(cookie.name) && is_utf8(cookie.domain) &&
                 is_utf8(path) && (!cookie.value || is_utf8(cookie.value)) && !has_control(cookie.name) &&
                 !has_control(cookie.domain) && !has_control(path);
    CHECK(result == valid, "cookies_delete said %d for name '%s' domain '%s' path '%s'", result,
          cookie.name ? cookie.name : "(null)", cookie.domain ? cookie.domain : "(null)", path);
    break;
  }
  case 2: {
    const char *url = PICK(p, SAFE_URL, "http://example.com/app/x", "https://sub.example.com/", "ftp://example.com/",
                           "http://127.0.0.1:1/\xff");
    bool with_count = next_byte(p) % 8 != 0;
    size_t count = 777;
    cxhr_cookie *list = cxhr_cookies_list(next_byte(p) & 1 ? NULL : url, with_count ? &count : NULL);
    if(!with_count) {
      CHECK(!list, "cookies_list gave a list without a count");
      break;
    }
    CHECK((list == NULL) == (count == 0), "cookies_list gave %p with a count of %zu", (void *)list, count);
    for(size_t i = 0; i < count; i++) {
      CHECK(list[i].name && list[i].value && list[i].domain && list[i].path, "a listed cookie lacks a field");
      CHECK(*list[i].name && *list[i].domain && list[i].path[0] == '/' && list[i].expires >= 0,
            "a listed cookie '%s' for '%s' path '%s' expires %lld", list[i].name, list[i].domain, list[i].path,
            (long long)list[i].expires);
    }
    cxhr_cookies_free(list, count);
    break;
  }
  case 3:
    cxhr_clear_cookies(next_byte(p) & 1);
    break;
  default:
    cxhr_cookies_free(NULL, next_byte(p) & 1 ? SIZE_MAX : 3);
    CHECK(strcmp(cxhr_cookies_get_file(), cookie_file) == 0, "the cookie store moved to %s", cxhr_cookies_get_file());
  }
}

static void process_call(program *p)
{
  switch(next_byte(p) % 5) {
  case 0: {
    const char *method = PICK(p, "BASIC", "digest", "Ntlm", "NEGOTIATE", "KERBEROS");
    bool result = cxhr_kerberos_clear_credentials(method);
    bool known = !method || strcasecmp(method, "basic") == 0 || strcasecmp(method, "digest") == 0 ||
                 strcasecmp(method, "ntlm") == 0 || strcasecmp(method, "negotiate") == 0;
    /* The library upper-cases with Unicode rules ("ı" becomes "I"): only ASCII is compared here. */
    bool ascii = true;
    for(const unsigned char *c = (const unsigned char *)method; c && *c; c++)
      ascii = ascii && *c < 0x80;
    if(ascii)
      CHECK(result == known, "kerberos_clear_credentials('%s') said %d", method ? method : "(null)", result);
    break;
  }
  case 1: {
    bool allow = next_byte(p) & 1;
    cxhr_kerberos_set_allow_delegation(allow);
    CHECK(cxhr_kerberos_get_allow_delegation() == allow, "allow_delegation");
    break;
  }
  case 2:
    cxhr_set_default_ca_certificate_file(PICK(p, body_file, "/nonexistent/ca.pem"));
    break;
  case 3:
    CHECK(strcmp(cxhr_version(), CURLXHR_VERSION) == 0, "version %s", cxhr_version());
    CHECK(strcmp(cxhr_kerberos_get_cache_file(), kerberos_cache) == 0, "the Kerberos cache moved");
    CHECK(!cxhr_get_use_environment_proxy(), "proxies from the environment");
    break;
  default: {
    slot *s;
    cxhr_request *handle = pick_handle(p, &s);
    bool with = next_byte(p) & 1;
    callback_data *data = NULL;
    if(with && s && s->callback_count < sizeof s->callbacks / sizeof s->callbacks[0]) {
      data = calloc(1, sizeof *data);
      data->magic = CALLBACK_MAGIC;
      s->callbacks[s->callback_count++] = data;
    }
    bool result = cxhr_set_status_callback(handle, with ? on_status : NULL, data);
    CHECK(result == (s != NULL), "set_status_callback said %d", result);
    check_reason(s, result, "set_status_callback");
  }
  }
}

/* MARK: The target */

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *ftw)
{
  (void)info, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_directory(void)
{
  nftw(directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc, (void)argv;
  const char *tmp = getenv("TMPDIR");
  snprintf(directory, sizeof directory, "%s/curlxhr-fuzz-capi.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if(!mkdtemp(directory)) {
    perror("mkdtemp");
    exit(1);
  }
  atexit(remove_directory);
  snprintf(cookie_file, sizeof cookie_file, "%s/cookies.txt", directory);
  snprintf(kerberos_cache, sizeof kerberos_cache, "%s/krb5cc", directory);
  snprintf(kerberos_config, sizeof kerberos_config, "%s/krb5.conf", directory);
  snprintf(body_file, sizeof body_file, "%s/body.txt", directory);
  FILE *body = fopen(body_file, "w");
  if(!body || fputs("a body from a file\n", body) < 0 || fclose(body) != 0) {
    perror(body_file);
    exit(1);
  }
  /* No realm, no KDC: an empty Kerberos configuration. */
  FILE *config = fopen(kerberos_config, "w");
  if(!config || fclose(config) != 0) {
    perror(kerberos_config);
    exit(1);
  }
  /* Nothing of the user's, and nothing beyond this machine. */
  setenv("HOME", directory, 1);
  setenv("XDG_DATA_HOME", directory, 1);
  setenv("XDG_STATE_HOME", directory, 1);
  setenv("KRB5_CONFIG", kerberos_config, 1);
  setenv("KRB5CCNAME", kerberos_cache, 1);
  static const char *const proxies[] = {"http_proxy", "https_proxy", "all_proxy", "no_proxy",
                                        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"};
  for(size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
    unsetenv(proxies[i]);
  cxhr_cookies_set_file(cookie_file);
  cxhr_kerberos_set_cache_file(kerberos_cache);
  cxhr_set_use_environment_proxy(false);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  program p = {data, size};
  bool cookies = false;
  touched_cookies = &cookies;
  sends = 0;
  for(int operation = 0; operation < MAX_OPERATIONS && p.size; operation++) {
    read_kept_strings();
    uint8_t choice = next_byte(&p);
    switch(choice % 12) {
    case 0: {
      slot *s = &slots[next_byte(&p) % SLOTS];
      if(s->handle)
        destroy(s);
      s->handle = cxhr_request_create();
      CHECK(s->handle, "create gave NULL");
      CHECK(cxhr_get_state(s->handle) == CXHR_UNSENT, "a new request in state %d", (int)cxhr_get_state(s->handle));
      break;
    }
    case 1: {
      slot *s = &slots[next_byte(&p) % SLOTS];
      if(s->handle)
        destroy(s);
      else
        cxhr_request_destroy(destroyed_count ? destroyed[next_byte(&p) % destroyed_count] : NULL);
      break;
    }
    case 2: case 3: open_request(&p); break;
    case 4: pre_send_switch(&p); break;
    case 5: case 6: message_call(&p); break;
    case 7: send_request(&p); break;
    case 8: stop_request(&p); break;
    case 9: read_response(&p); break;
    case 10: cookie_call(&p); break;
    default: process_call(&p); break;
    }
  }
  read_kept_strings();
  for(int i = 0; i < SLOTS; i++)
    if(slots[i].handle)
      destroy(&slots[i]);
  /* A destroyed request's transfer ends on the engine thread a moment later; meanwhile the
     leak checker does not see the body it still holds (a reference inside a Swift enum). A
     call the engine thread answers comes after that end, and the body is gone. */
  size_t count;
  cxhr_cookies_free(cxhr_cookies_list(NULL, &count), count);
  if(cookies)
    cxhr_clear_cookies(true);
  cxhr_set_default_ca_certificate_file(NULL);
  cxhr_kerberos_set_allow_delegation(false);
  for(size_t i = 0; i < text_count; i++)
    free(texts[i]);
  text_count = 0;
  return 0;
}
