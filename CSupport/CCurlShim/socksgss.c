#define _GNU_SOURCE
#include "csocksgss.h"
#include "ckerberos.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Made and freed on the engine thread; each connection's thread holds a reference while it
   runs, so the tunnel outlives the handle that made it until the last one ends. Only the
   failure changes after it is made, under the lock. */
struct cxhr_socks_gss {
  CURL *handle;
  char *proxy_host;
  char *service;
  bool remote_resolve;
  long timeout_ms;
  pthread_mutex_t lock;
  int references;
  int failure;
  char text[512];
};

/* The most a GSS-API token from the proxy may have (its length field allows 65535 bytes). */
#define TOKEN_LIMIT 16384

cxhr_socks_gss *cxhr_socks_gss_new(CURL *handle, const char *proxy_host, const char *service, bool remote_resolve,
                                   long timeout_ms)
{
  cxhr_socks_gss *tunnel = calloc(1, sizeof *tunnel);
  if(!tunnel)
    return NULL;
  tunnel->handle = handle;
  tunnel->proxy_host = strdup(proxy_host);
  tunnel->service = strdup(service ? service : "rcmd");
  tunnel->remote_resolve = remote_resolve;
  tunnel->timeout_ms = timeout_ms > 0 ? timeout_ms : 300000;
  tunnel->references = 1;
  if(!tunnel->proxy_host || !tunnel->service || pthread_mutex_init(&tunnel->lock, NULL) != 0) {
    free(tunnel->proxy_host);
    free(tunnel->service);
    free(tunnel);
    return NULL;
  }
  return tunnel;
}

static void release(cxhr_socks_gss *tunnel)
{
  pthread_mutex_lock(&tunnel->lock);
  int left = --tunnel->references;
  pthread_mutex_unlock(&tunnel->lock);
  if(left > 0)
    return;
  pthread_mutex_destroy(&tunnel->lock);
  free(tunnel->proxy_host);
  free(tunnel->service);
  free(tunnel);
}

void cxhr_socks_gss_free(cxhr_socks_gss *tunnel)
{
  if(tunnel)
    release(tunnel);
}

int cxhr_socks_gss_take_failure(cxhr_socks_gss *tunnel, char *text, size_t size)
{
  pthread_mutex_lock(&tunnel->lock);
  int failure = tunnel->failure;
  if(failure && text && size)
    snprintf(text, size, "%s", tunnel->text);
  tunnel->failure = CXHR_SOCKS_GSS_NONE;
  tunnel->text[0] = 0;
  pthread_mutex_unlock(&tunnel->lock);
  return failure;
}

CURLcode cxhr_easy_set_socks_gss(CURL *handle, cxhr_socks_gss *tunnel)
{
  return curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, tunnel);
}

/* -- failures and time -------------------------------------------------------------------- */

static int fail(cxhr_socks_gss *tunnel, int kind, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int fail(cxhr_socks_gss *tunnel, int kind, const char *format, ...)
{
  pthread_mutex_lock(&tunnel->lock);
  /* A proxy's address that cannot be reached does not hide what another one answered. */
  if(kind != CXHR_SOCKS_GSS_UNREACHABLE || tunnel->failure <= CXHR_SOCKS_GSS_UNREACHABLE) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(tunnel->text, sizeof tunnel->text, format, arguments);
    va_end(arguments);
    tunnel->failure = kind;
  }
  pthread_mutex_unlock(&tunnel->lock);
  return -1;
}

static int64_t now_ms(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* GSS-API's words for a status (major, then the mechanism's minor), at most `size` bytes. */
static void gss_words(OM_uint32 major, OM_uint32 minor, char *out, size_t size)
{
  size_t used = 0;
  out[0] = 0;
  for(int pass = 0; pass < 2; pass++) {
    OM_uint32 code = pass == 0 ? major : minor, context = 0, ignored;
    int type = pass == 0 ? GSS_C_GSS_CODE : GSS_C_MECH_CODE;
    if(pass == 1 && minor == 0)
      break;
    do {
      gss_buffer_desc words = GSS_C_EMPTY_BUFFER;
      if(GSS_ERROR(gss_display_status(&ignored, code, type, GSS_C_NO_OID, &context, &words)))
        break;
      /* A mechanism's "Success" for a minor code says nothing. */
      bool empty = pass == 1 && words.length == 7 && memcmp(words.value, "Success", 7) == 0;
      if(used < size && !empty) {
        int written = snprintf(out + used, size - used, "%s%.*s", used ? "; " : "", (int)words.length,
                               (const char *)words.value);
        used += written > 0 ? (size_t)written : 0;
      }
      gss_release_buffer(&ignored, &words);
    } while(context != 0);
  }
}

/* -- the wire, within the deadline --------------------------------------------------------- */

struct wire {
  cxhr_socks_gss *tunnel;
  int fd;
  int libcurl; /* libcurl's end of the connection, watched: a transfer gone ends the handshake */
  int64_t deadline;
  const char *stage; /* what the proxy was asked, for texts */
};

/* Waits until the socket can be read (POLLIN) or written (POLLOUT); -1 with the failure kept
   when the deadline passes first, and without one when libcurl closed its end. */
static int wait_for(struct wire *wire, short events)
{
  for(;;) {
    int64_t left = wire->deadline - now_ms();
    if(left <= 0)
      return fail(wire->tunnel, CXHR_SOCKS_GSS_TIMEOUT, "the proxy did not answer within %ld ms (%s)",
                  wire->tunnel->timeout_ms, wire->stage);
    struct pollfd watched[2] = { { .fd = wire->fd, .events = events }, { .fd = wire->libcurl, .events = POLLRDHUP } };
    int ready = poll(watched, 2, left > 1000 ? 1000 : (int)left);
    if(ready > 0 && watched[1].revents & (POLLRDHUP | POLLHUP | POLLERR))
      return -1;
    if(ready > 0)
      return 0;
    if(ready < 0 && errno != EINTR)
      return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "poll failed: %s", strerror(errno));
  }
}

static int send_all(struct wire *wire, const void *bytes, size_t length)
{
  const uint8_t *next = bytes;
  while(length > 0) {
    ssize_t sent = send(wire->fd, next, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    if(sent > 0) {
      next += sent;
      length -= (size_t)sent;
    }
    else if(sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if(wait_for(wire, POLLOUT))
        return -1;
    }
    else {
      return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the connection to the proxy broke (%s): %s", wire->stage,
                  strerror(errno));
    }
  }
  return 0;
}

static int receive_all(struct wire *wire, void *bytes, size_t length)
{
  uint8_t *next = bytes;
  while(length > 0) {
    ssize_t got = recv(wire->fd, next, length, MSG_DONTWAIT);
    if(got > 0) {
      next += got;
      length -= (size_t)got;
    }
    else if(got == 0) {
      return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy closed the connection (%s)", wire->stage);
    }
    else if(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if(wait_for(wire, POLLIN))
        return -1;
    }
    else {
      return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the connection to the proxy broke (%s): %s", wire->stage,
                  strerror(errno));
    }
  }
  return 0;
}

/* RFC 1961 message: version 1, MTYP, a 16-bit length, the token. */
static int send_message(struct wire *wire, uint8_t type, const gss_buffer_desc *token)
{
  if(token->length > 0xFFFF)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the GSS-API token for the proxy is too long (%zu bytes)",
                token->length);
  uint8_t head[4] = { 1, type, (uint8_t)(token->length >> 8), (uint8_t)token->length };
  if(send_all(wire, head, sizeof head))
    return -1;
  return send_all(wire, token->value, token->length);
}

/* The proxy's RFC 1961 message of `type` (1 context, 2 protection level); its token is
   malloc'ed into `token`. An abort (MTYP 0xFF) is the proxy refusing the authentication. */
static int receive_message(struct wire *wire, uint8_t type, gss_buffer_desc *token)
{
  uint8_t head[4];
  if(receive_all(wire, head, 2))
    return -1;
  if(head[0] == 1 && head[1] == 0xFF)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy refused the GSS-API authentication (%s)", wire->stage);
  if(head[0] != 1 || head[1] != type)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE,
                "the proxy's answer is no RFC 1961 message (version %d, type %d where 1, %d was due; %s)", head[0], head[1],
                type, wire->stage);
  if(receive_all(wire, head + 2, 2))
    return -1;
  size_t length = (size_t)head[2] << 8 | head[3];
  if(length == 0 || length > TOKEN_LIMIT)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's GSS-API token has %zu bytes (1 to %d taken; %s)",
                length, TOKEN_LIMIT, wire->stage);
  token->value = malloc(length);
  if(!token->value)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "out of memory for the proxy's GSS-API token");
  token->length = length;
  if(receive_all(wire, token->value, length)) {
    free(token->value);
    token->value = NULL;
    token->length = 0;
    return -1;
  }
  return 0;
}

/* -- the steps ------------------------------------------------------------------------------ */

/* Connects a new socket (the wire's) to one of the proxy's addresses within the deadline. */
static int connect_address(struct wire *wire, const struct sockaddr *address, socklen_t length)
{
  if(wire->fd >= 0)
    close(wire->fd);
  wire->fd = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if(wire->fd < 0)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_UNREACHABLE, "cannot open a socket for the proxy: %s", strerror(errno));
  if(connect(wire->fd, address, length) == 0)
    return 0;
  if(errno != EINPROGRESS && errno != EINTR)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_UNREACHABLE, "cannot connect to the proxy: %s", strerror(errno));
  if(wait_for(wire, POLLOUT))
    return -1;
  int error = 0;
  socklen_t size = sizeof error;
  if(getsockopt(wire->fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0)
    error = errno;
  if(error)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_UNREACHABLE, "cannot connect to the proxy: %s", strerror(error));
  return 0;
}

/* Connects to the proxy: at the address libcurl resolved first, else at the name's others
   (libcurl, handed a connection to the relay, tries no other). */
static int connect_proxy(struct wire *wire, const struct sockaddr *first, socklen_t first_length)
{
  wire->stage = "connecting";
  if(connect_address(wire, first, first_length) == 0)
    return 0;
  if(now_ms() >= wire->deadline)
    return -1;
  char port[8];
  uint16_t number = first->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)first)->sin6_port
                                                 : ((const struct sockaddr_in *)first)->sin_port;
  snprintf(port, sizeof port, "%u", ntohs(number));
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *found = NULL;
  if(getaddrinfo(wire->tunnel->proxy_host, port, &hints, &found) != 0)
    return -1;
  int result = -1;
  for(struct addrinfo *each = found; each && result != 0 && now_ms() < wire->deadline; each = each->ai_next) {
    if(each->ai_addrlen == first_length && memcmp(each->ai_addr, first, first_length) == 0)
      continue;
    result = connect_address(wire, each->ai_addr, each->ai_addrlen);
  }
  freeaddrinfo(found);
  return result;
}

/* The SOCKS5 greeting, offering GSS-API (method 1) alone. */
static int choose_method(struct wire *wire)
{
  wire->stage = "choosing the method";
  static const uint8_t greeting[3] = { 5, 1, 1 };
  uint8_t answer[2];
  if(send_all(wire, greeting, sizeof greeting) || receive_all(wire, answer, sizeof answer))
    return -1;
  if(answer[0] != 5)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's answer is not SOCKS5 (version %d)", answer[0]);
  if(answer[1] == 0xFF)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy does not accept GSS-API authentication");
  if(answer[1] != 1)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy chose method %d, not GSS-API (1)", answer[1]);
  return 0;
}

/* The service principal SERVICE@HOST (a host-based service), or a whole principal. */
static int import_service(struct wire *wire, gss_name_t *name)
{
  const char *service = wire->tunnel->service, *host = wire->tunnel->proxy_host;
  size_t length = strlen(service) + strlen(host) + 2;
  char *text = malloc(length);
  if(!text)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "out of memory for the proxy's service name");
  bool whole = strchr(service, '/') != NULL;
  if(whole)
    snprintf(text, length, "%s", service);
  else
    snprintf(text, length, "%s@%s", service, host);
  gss_buffer_desc buffer = { strlen(text), text };
  OM_uint32 minor = 0;
  OM_uint32 major = gss_import_name(&minor, &buffer, whole ? GSS_C_NO_OID : GSS_C_NT_HOSTBASED_SERVICE, name);
  if(GSS_ERROR(major)) {
    char words[256];
    gss_words(major, minor, words, sizeof words);
    fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's service name '%s' is not one GSS-API takes: %s", text, words);
    free(text);
    return -1;
  }
  free(text);
  return 0;
}

/* RFC 1961 §3-4: context tokens (MTYP 1) until GSS-API is done, mutual authentication. */
static int establish_context(struct wire *wire, gss_ctx_id_t *context)
{
  gss_name_t service = GSS_C_NO_NAME;
  if(import_service(wire, &service))
    return -1;
  wire->stage = "GSS-API authentication";
  gss_buffer_desc input = GSS_C_EMPTY_BUFFER;
  int result = -1;
  for(int round = 0; round < 8; round++) {
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0, ignored, flags = 0;
    OM_uint32 major = gss_init_sec_context(&minor, GSS_C_NO_CREDENTIAL, context, service, (gss_OID)gss_mech_krb5,
                                           GSS_C_MUTUAL_FLAG | GSS_C_REPLAY_FLAG | GSS_C_INTEG_FLAG, 0,
                                           GSS_C_NO_CHANNEL_BINDINGS, input.length ? &input : GSS_C_NO_BUFFER, NULL,
                                           &output, &flags, NULL);
    free(input.value);
    input.value = NULL;
    input.length = 0;
    if(GSS_ERROR(major)) {
      char words[384];
      gss_words(major, minor, words, sizeof words);
      gss_release_buffer(&ignored, &output);
      /* RFC 1961 §3: a client that fails tells the server so. */
      static const uint8_t abort_message[2] = { 1, 0xFF };
      (void)send(wire->fd, abort_message, sizeof abort_message, MSG_NOSIGNAL | MSG_DONTWAIT);
      fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "Kerberos (GSS-API) authentication to the proxy failed: %s", words);
      goto done;
    }
    int sent = output.length > 0 ? send_message(wire, 1, &output) : 0;
    gss_release_buffer(&ignored, &output);
    if(sent)
      goto done;
    if(major == GSS_S_COMPLETE) {
      if(!(flags & GSS_C_MUTUAL_FLAG)) {
        fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy did not authenticate itself (no mutual authentication)");
        goto done;
      }
      result = 0;
      goto done;
    }
    if(receive_message(wire, 1, &input))
      goto done;
  }
  fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's GSS-API authentication did not end after 8 rounds");
done:
  free(input.value);
  {
    OM_uint32 ignored;
    gss_release_name(&ignored, &service);
  }
  return result;
}

/* RFC 1961 §4: the protection level, asked for and answered in wrapped one-byte messages
   (MTYP 2). The library asks for none (0: no per-message protection, as curl and dante
   speak it) and takes nothing else: the SOCKS request and the data then go unwrapped. */
static int agree_protection(struct wire *wire, gss_ctx_id_t context)
{
  wire->stage = "agreeing on the protection level";
  uint8_t level = 0;
  gss_buffer_desc plain = { 1, &level }, wrapped = GSS_C_EMPTY_BUFFER, answer = GSS_C_EMPTY_BUFFER, unwrapped = GSS_C_EMPTY_BUFFER;
  OM_uint32 minor = 0, ignored;
  int confidential = 0, result = -1;
  OM_uint32 major = gss_wrap(&minor, context, 0, GSS_C_QOP_DEFAULT, &plain, &confidential, &wrapped);
  if(GSS_ERROR(major)) {
    char words[256];
    gss_words(major, minor, words, sizeof words);
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "GSS-API could not wrap the protection level: %s", words);
  }
  int sent = send_message(wire, 2, &wrapped);
  gss_release_buffer(&ignored, &wrapped);
  if(sent || receive_message(wire, 2, &answer))
    return -1;
  major = gss_unwrap(&minor, context, &answer, &unwrapped, &confidential, NULL);
  free(answer.value);
  if(GSS_ERROR(major)) {
    char words[256];
    gss_words(major, minor, words, sizeof words);
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's protection level does not unwrap: %s", words);
  }
  if(unwrapped.length != 1)
    fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's protection level has %zu bytes, not 1", unwrapped.length);
  else if(((const uint8_t *)unwrapped.value)[0] != 0)
    fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE,
         "the proxy requires GSS-API per-message protection (level %d), which the library does not provide",
         ((const uint8_t *)unwrapped.value)[0]);
  else
    result = 0;
  gss_release_buffer(&ignored, &unwrapped);
  return result;
}

/* The origin of the handle's current URL: its host (IPv6 without brackets) and port. Engine
   thread (it reads the handle). */
static int origin_of(cxhr_socks_gss *tunnel, char *host, size_t host_size, int *port)
{
  const char *url = NULL;
  if(curl_easy_getinfo(tunnel->handle, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || !url)
    return fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the request has no URL to reach through the proxy");
  CURLU *parsed = curl_url();
  char *name = NULL, *number = NULL;
  int result = -1;
  if(parsed && curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK &&
     curl_url_get(parsed, CURLUPART_HOST, &name, 0) == CURLUE_OK &&
     curl_url_get(parsed, CURLUPART_PORT, &number, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    size_t length = strlen(name);
    const char *start = name;
    if(length >= 2 && name[0] == '[' && name[length - 1] == ']') {
      start++;
      length -= 2;
    }
    *port = atoi(number);
    if(length == 0 || length > 255 || length >= host_size || *port <= 0 || *port > 65535) {
      fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the request's host cannot be named to the proxy");
    }
    else {
      memcpy(host, start, length);
      host[length] = 0;
      result = 0;
    }
  }
  else {
    fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the request's URL cannot be read");
  }
  curl_free(name);
  curl_free(number);
  curl_url_cleanup(parsed);
  return result;
}

static const char *reply_words(uint8_t reply)
{
  switch(reply) {
  case 1: return "general SOCKS server failure";
  case 2: return "connection not allowed by ruleset";
  case 3: return "network unreachable";
  case 4: return "host unreachable";
  case 5: return "connection refused";
  case 6: return "TTL expired";
  case 7: return "command not supported";
  case 8: return "address type not supported";
  default: return "unknown reply";
  }
}

/* The SOCKS5 CONNECT to the origin `host` and `port` (by name for socks5h, else by an address
   of the origin looked up here) and its reply. */
static int connect_origin(struct wire *wire, const char *host, int port)
{
  wire->stage = "asking for the connection";
  uint8_t request[4 + 1 + 255 + 2] = { 5, 1, 0 };
  size_t length = 4;
  struct in_addr v4;
  struct in6_addr v6;
  if(inet_pton(AF_INET, host, &v4) == 1) {
    request[3] = 1;
    memcpy(request + 4, &v4, 4);
    length += 4;
  }
  else if(inet_pton(AF_INET6, host, &v6) == 1) {
    request[3] = 4;
    memcpy(request + 4, &v6, 16);
    length += 16;
  }
  else if(wire->tunnel->remote_resolve) {
    size_t name_length = strlen(host);
    request[3] = 3;
    request[4] = (uint8_t)name_length;
    memcpy(request + 5, host, name_length);
    length += 1 + name_length;
  }
  else {
    /* socks5: the name is resolved here (blocking, as the handshake is). */
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *found = NULL;
    int code = getaddrinfo(host, NULL, &hints, &found);
    if(code != 0 || !found)
      return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "cannot resolve %s for the proxy: %s", host, gai_strerror(code));
    /* An IPv4 address when the name has one (loopback names often list ::1 first, where
       servers may not listen), else the first. */
    struct addrinfo *chosen = found;
    for(struct addrinfo *each = found; each; each = each->ai_next)
      if(each->ai_family == AF_INET) {
        chosen = each;
        break;
      }
    if(chosen->ai_family == AF_INET) {
      request[3] = 1;
      memcpy(request + 4, &((struct sockaddr_in *)chosen->ai_addr)->sin_addr, 4);
      length += 4;
    }
    else {
      request[3] = 4;
      memcpy(request + 4, &((struct sockaddr_in6 *)chosen->ai_addr)->sin6_addr, 16);
      length += 16;
    }
    freeaddrinfo(found);
  }
  request[length++] = (uint8_t)(port >> 8);
  request[length++] = (uint8_t)port;
  if(send_all(wire, request, length))
    return -1;
  wire->stage = "waiting for the connection";
  uint8_t reply[4];
  if(receive_all(wire, reply, sizeof reply))
    return -1;
  if(reply[0] != 5)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's reply is not SOCKS5 (version %d)", reply[0]);
  if(reply[1] != 0)
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy did not connect to %s port %d: %s (%d)", host, port,
                reply_words(reply[1]), reply[1]);
  /* The bound address and port, which the library has no use for. */
  uint8_t rest[1 + 255 + 2];
  size_t rest_length;
  switch(reply[3]) {
  case 1: rest_length = 4 + 2; break;
  case 4: rest_length = 16 + 2; break;
  case 3:
    if(receive_all(wire, rest, 1))
      return -1;
    rest_length = (size_t)rest[0] + 2;
    break;
  default:
    return fail(wire->tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "the proxy's reply has an unknown address type (%d)", reply[3]);
  }
  return receive_all(wire, rest, rest_length);
}

/* -- one connection, on a thread of its own ------------------------------------------------ */

/* libcurl is handed a loopback connection to a listener of the connection's thread, which
   accepts it (from the port the socket handed to libcurl is bound to, no other), connects to
   the proxy, runs the handshake, and then copies bytes between the two until either ends.
   The engine thread never waits on the proxy: a proxy that is slow or silent holds its own
   connection's thread, not every transfer. What libcurl sends meanwhile waits in the
   loopback connection; a handshake that fails keeps its failure on the tunnel, then closes
   libcurl's end. */
struct connection {
  cxhr_socks_gss *tunnel; /* a reference of its own */
  struct sockaddr_storage proxy;
  socklen_t proxy_length;
  char host[256];
  int port;
  char *ccache; /* the FILE cache GSS-API uses on this thread; NULL: the default one */
  int listener;
  uint16_t client_port;
  int64_t deadline;
};

/* Copies what `from` has into `to`; 0 when `from` ended or either broke. */
static int pass_on(int from, int to)
{
  char buffer[65536];
  ssize_t got = recv(from, buffer, sizeof buffer, MSG_DONTWAIT);
  if(got < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 1 : 0;
  if(got == 0)
    return 0;
  for(ssize_t sent = 0; sent < got;) {
    ssize_t now = send(to, buffer + sent, (size_t)(got - sent), MSG_NOSIGNAL);
    if(now < 0) {
      if(errno == EINTR)
        continue;
      return 0;
    }
    sent += now;
  }
  return 1;
}

/* libcurl's connection to the listener (in its backlog once libcurl connected, right after
   the open-socket callback), or -1 when none came within 10 s or by the deadline. */
static int accept_libcurl(struct connection *connection)
{
  int client = -1;
  int64_t until = now_ms() + 10000;
  if(until > connection->deadline)
    until = connection->deadline;
  while(client < 0) {
    int64_t left = until - now_ms();
    if(left <= 0)
      break;
    struct pollfd watched = { .fd = connection->listener, .events = POLLIN };
    int ready = poll(&watched, 1, left > 1000 ? 1000 : (int)left);
    if(ready < 0 && errno != EINTR)
      break;
    if(ready <= 0)
      continue;
    struct sockaddr_in peer;
    socklen_t size = sizeof peer;
    int accepted = accept4(connection->listener, (struct sockaddr *)&peer, &size, SOCK_CLOEXEC);
    if(accepted < 0)
      continue;
    if(peer.sin_family == AF_INET && ntohs(peer.sin_port) == connection->client_port)
      client = accepted;
    else
      close(accepted); /* not libcurl's */
  }
  return client;
}

/* The handshake, then the relay. */
static void *run_connection(void *argument)
{
  struct connection *connection = argument;
  cxhr_socks_gss *tunnel = connection->tunnel;
  struct wire wire = { .tunnel = tunnel, .fd = -1, .libcurl = accept_libcurl(connection),
                       .deadline = connection->deadline };
  close(connection->listener);
  if(wire.libcurl >= 0) {
    (void)cxhr_gss_use_ccache(connection->ccache);
    gss_ctx_id_t context = GSS_C_NO_CONTEXT;
    int ok = connect_proxy(&wire, (const struct sockaddr *)&connection->proxy, connection->proxy_length) == 0 &&
             choose_method(&wire) == 0 && establish_context(&wire, &context) == 0 &&
             agree_protection(&wire, context) == 0 && connect_origin(&wire, connection->host, connection->port) == 0;
    if(context != GSS_C_NO_CONTEXT) {
      OM_uint32 ignored;
      gss_delete_sec_context(&ignored, &context, GSS_C_NO_BUFFER);
    }
    /* The relay copies with blocking calls. */
    int flags = ok ? fcntl(wire.fd, F_GETFL) : -1;
    if(flags >= 0 && fcntl(wire.fd, F_SETFL, flags & ~O_NONBLOCK) == 0) {
      struct pollfd ends[2] = { { .fd = wire.libcurl, .events = POLLIN }, { .fd = wire.fd, .events = POLLIN } };
      for(;;) {
        if(poll(ends, 2, -1) < 0) {
          if(errno == EINTR)
            continue;
          break;
        }
        if(ends[0].revents && !pass_on(wire.libcurl, wire.fd))
          break;
        if(ends[1].revents && !pass_on(wire.fd, wire.libcurl))
          break;
      }
    }
    else if(ok) {
      fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "cannot relay the connection through the proxy: %s", strerror(errno));
    }
    close(wire.libcurl);
  }
  if(wire.fd >= 0)
    close(wire.fd);
  free(connection->ccache);
  free(connection);
  release(tunnel);
  return NULL;
}

int cxhr_socks_gss_open(cxhr_socks_gss *tunnel, struct curl_sockaddr *address, const char *ccache)
{
  /* What an earlier connection of the handle left. */
  pthread_mutex_lock(&tunnel->lock);
  tunnel->failure = CXHR_SOCKS_GSS_NONE;
  tunnel->text[0] = 0;
  pthread_mutex_unlock(&tunnel->lock);
  if(address->addrlen > sizeof(struct sockaddr_storage) ||
     (address->addr.sa_family != AF_INET && address->addr.sa_family != AF_INET6))
    return fail(tunnel, CXHR_SOCKS_GSS_UNREACHABLE, "the proxy's address is not an IP address");
  struct connection *connection = calloc(1, sizeof *connection);
  if(!connection)
    return fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "out of memory for the connection through the proxy");
  if(origin_of(tunnel, connection->host, sizeof connection->host, &connection->port)) {
    free(connection);
    return -1;
  }
  memcpy(&connection->proxy, &address->addr, address->addrlen);
  connection->proxy_length = address->addrlen;
  connection->deadline = now_ms() + tunnel->timeout_ms;
  struct sockaddr_in loopback = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  struct sockaddr_in listening = loopback, bound = loopback;
  socklen_t size = sizeof loopback;
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  pthread_t thread;
  pthread_attr_t attributes;
  int started = -1;
  if((ccache && !(connection->ccache = strdup(ccache))) || listener < 0 || client < 0 ||
     bind(listener, (struct sockaddr *)&loopback, size) != 0 || listen(listener, 4) != 0 ||
     getsockname(listener, (struct sockaddr *)&listening, &size) != 0 ||
     bind(client, (struct sockaddr *)&loopback, sizeof loopback) != 0 ||
     getsockname(client, (struct sockaddr *)&bound, &(socklen_t){ sizeof bound }) != 0)
    goto failed;
  connection->listener = listener;
  connection->client_port = ntohs(bound.sin_port);
  connection->tunnel = tunnel;
  pthread_mutex_lock(&tunnel->lock);
  tunnel->references++;
  pthread_mutex_unlock(&tunnel->lock);
  if(pthread_attr_init(&attributes) == 0) {
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&thread, &attributes, run_connection, connection);
    pthread_attr_destroy(&attributes);
  }
  if(started != 0) {
    errno = started > 0 ? started : errno;
    release(tunnel);
    goto failed;
  }
  address->family = AF_INET;
  address->socktype = SOCK_STREAM;
  address->protocol = IPPROTO_TCP;
  address->addrlen = sizeof listening;
  memcpy(&address->addr, &listening, sizeof listening);
  return client;
failed:
  fail(tunnel, CXHR_SOCKS_GSS_HANDSHAKE, "cannot relay the connection through the proxy: %s", strerror(errno));
  free(connection->ccache);
  free(connection);
  if(listener >= 0)
    close(listener);
  if(client >= 0)
    close(client);
  return -1;
}
