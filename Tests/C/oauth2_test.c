/* Checks the OAuth2 authorizer as a C program uses it, against the loopback OAuth2 server:
 * misuse is refused, a token is set on requests and kept in a 0600 file, a refused token is
 * renewed once for many threads, a revoked refresh token gives CXHR_OAUTH2_REJECTED and leaves
 * no file, and a logout ends the session.
 *   oauth2_test BASE_URL CLIENT_ID CLIENT_SECRET USER PASSWORD TOKEN_SECONDS DIRECTORY
 * (BASE_URL serves /o/token/, /o/revoke_token/, /api/me and /stats.)
 * Prints one line per failed check and a last line "N passed, M failed". */
#define _GNU_SOURCE /* nanosleep, strndup */
#include <curlxhr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond)                                                   \
  do {                                                                \
    pthread_mutex_lock(&count_lock);                                  \
    if(cond)                                                          \
      passed++;                                                       \
    else {                                                            \
      failed++;                                                       \
      printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
    }                                                                 \
    pthread_mutex_unlock(&count_lock);                                \
  } while(0)

static const char *base, *client_id, *client_secret, *user, *password;
static char token_url[512], revoke_url[512], resource_url[512], stats_url[512], token_file[512];
static double token_seconds;

static void sleep_seconds(double seconds)
{
  struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  nanosleep(&pause, NULL);
}

/* The body of the request's response as a string (the caller frees it). */
static char *body_text(cxhr_request *request)
{
  size_t length = 0;
  const char *bytes = cxhr_get_receive_buffer(request, &length);
  char *text = calloc(1, length + 1);
  if(bytes)
    memcpy(text, bytes, length);
  return text;
}

/* GETs a URL with no token; its body (the caller frees it). */
static char *get(const char *url)
{
  cxhr_request *request = cxhr_request_create();
  cxhr_open(request, "GET", url, false, NULL, NULL, NULL);
  cxhr_send(request, NULL, 0, 30);
  char *text = body_text(request);
  cxhr_request_destroy(request);
  return text;
}

static bool stats_contain(const char *fragment)
{
  char *stats = get(stats_url);
  bool found = strstr(stats, fragment) != NULL;
  if(!found)
    printf("stats: %s (looked for %s)\n", stats, fragment);
  free(stats);
  return found;
}

static void reset_stats(void)
{
  char url[600];
  snprintf(url, sizeof url, "%s/reset", stats_url);
  free(get(url));
}

static cxhr_oauth2_config password_config(void)
{
  cxhr_oauth2_config config;
  memset(&config, 0, sizeof config);
  config.token_url = token_url;
  config.client_id = client_id;
  config.client_secret = client_secret;
  config.grant = CXHR_OAUTH2_PASSWORD;
  config.username = user;
  config.password = password;
  config.token_file = token_file;
  config.revocation_url = revoke_url;
  return config;
}

static void misuse_is_refused(void)
{
  cxhr_oauth2_config config = password_config();
  CHECK(cxhr_oauth2_create(NULL) == NULL);
  config.token_url = NULL;
  CHECK(cxhr_oauth2_create(&config) == NULL);
  config = password_config();
  config.password = NULL;
  CHECK(cxhr_oauth2_create(&config) == NULL);                      /* the grant needs it */
  config = password_config();
  config.grant = CXHR_OAUTH2_REFRESH_TOKEN;
  CHECK(cxhr_oauth2_create(&config) == NULL);                      /* no refresh_token */
  config = password_config();
  config.grant = (cxhr_oauth2_grant)7;
  CHECK(cxhr_oauth2_create(&config) == NULL);

  config = password_config();
  config.token_file = NULL;
  cxhr_oauth2 *oauth = cxhr_oauth2_create(&config);
  CHECK(oauth != NULL);
  cxhr_request *request = cxhr_request_create();
  CHECK(cxhr_oauth2_authorize(oauth, NULL, false) == CXHR_OAUTH2_INVALID);
  CHECK(cxhr_oauth2_authorize(NULL, request, false) == CXHR_OAUTH2_INVALID);
  CHECK(cxhr_get_last_error(request) != NULL);
  CHECK(cxhr_oauth2_authorize(oauth, request, false) == CXHR_OAUTH2_INVALID);   /* not opened */
  CHECK(cxhr_get_last_error_code(request) == CXHR_ERROR_INVALID_STATE);
  cxhr_oauth2_destroy(oauth);
  CHECK(cxhr_open(request, "GET", resource_url, false, NULL, NULL, NULL));
  CHECK(cxhr_oauth2_authorize(oauth, request, false) == CXHR_OAUTH2_INVALID);   /* destroyed */
  CHECK(cxhr_oauth2_logout(oauth) == CXHR_OAUTH2_INVALID);
  cxhr_oauth2_destroy(NULL);
  cxhr_request_destroy(request);
}

/* Opens, authorizes and sends a GET of the resource; the status. */
static int fetch_resource(cxhr_oauth2 *oauth, cxhr_request *request, bool refused, cxhr_oauth2_result *result)
{
  cxhr_open(request, "GET", resource_url, false, NULL, NULL, NULL);
  *result = cxhr_oauth2_authorize(oauth, request, refused);
  if(*result != CXHR_OAUTH2_OK)
    return -1;
  cxhr_send(request, NULL, 0, 30);
  return cxhr_get_status(request);
}

static void *thread_after_expiry(void *oauth)
{
  cxhr_request *request = cxhr_request_create();
  cxhr_oauth2_result result;
  CHECK(fetch_resource(oauth, request, false, &result) == 200);
  char *text = body_text(request);
  CHECK(strstr(text, "\"user\": \"alice\"") != NULL || strstr(text, "\"user\":\"alice\"") != NULL);
  free(text);
  cxhr_request_destroy(request);
  return NULL;
}

/* The refresh token in the token file, for the revocation (the caller frees it). */
static char *stored_refresh_token(void)
{
  FILE *file = fopen(token_file, "r");
  if(!file)
    return NULL;
  char content[8192] = {0};
  size_t length = fread(content, 1, sizeof content - 1, file);
  fclose(file);
  content[length] = '\0';
  char *start = strstr(content, "\"refresh_token\":\"");
  if(!start)
    return NULL;
  start += strlen("\"refresh_token\":\"");
  char *end = strchr(start, '"');
  return end ? strndup(start, (size_t)(end - start)) : NULL;
}

static void tokens_on_requests(void)
{
  reset_stats();
  cxhr_oauth2_config config = password_config();
  cxhr_oauth2 *oauth = cxhr_oauth2_create(&config);
  cxhr_request *request = cxhr_request_create();
  cxhr_oauth2_result result;
  CHECK(fetch_resource(oauth, request, false, &result) == 200 && result == CXHR_OAUTH2_OK);
  CHECK(stats_contain("\"password\": 1"));
  struct stat info;
  CHECK(stat(token_file, &info) == 0 && (info.st_mode & 0777) == 0600);

  /* The server refused the token (say): one new token, and the request goes through with it. */
  reset_stats();
  CHECK(fetch_resource(oauth, request, true, &result) == 200 && result == CXHR_OAUTH2_OK);
  CHECK(stats_contain("\"token_posts\": 1, \"grants\": {\"password\": 0, \"client_credentials\": 0, \"refresh_token\": 1}"));

  /* Eight threads after the token expired: one refresh for all of them. */
  sleep_seconds(token_seconds + 0.3);
  reset_stats();
  pthread_t threads[8];
  for(int i = 0; i < 8; i++)
    pthread_create(&threads[i], NULL, thread_after_expiry, oauth);
  for(int i = 0; i < 8; i++)
    pthread_join(threads[i], NULL);
  CHECK(stats_contain("\"token_posts\": 1,"));
  CHECK(stats_contain("\"resource_200\": 8"));
  cxhr_oauth2_destroy(oauth);

  /* A new authorizer on the same file (a program started again): no new grant. */
  reset_stats();
  oauth = cxhr_oauth2_create(&config);
  CHECK(fetch_resource(oauth, request, false, &result) == 200);
  CHECK(stats_contain("\"password\": 0"));

  /* The refresh token revoked at the server: the renewal is rejected, the file removed. */
  char *refresh = stored_refresh_token();
  CHECK(refresh != NULL);
  if(refresh) {
    char form[1024];
    snprintf(form, sizeof form, "token=%s&token_type_hint=refresh_token", refresh);
    cxhr_request *revoke = cxhr_request_create();
    CHECK(cxhr_open(revoke, "POST", revoke_url, false, client_id, client_secret, CXHR_AUTH_BASIC));
    CHECK(cxhr_set_request_header(revoke, "Content-Type", "application/x-www-form-urlencoded"));
    CHECK(cxhr_send(revoke, form, strlen(form), 30) && cxhr_get_status(revoke) == 200);
    cxhr_request_destroy(revoke);
    free(refresh);
  }
  CHECK(fetch_resource(oauth, request, false, &result) == 401);          /* its access token went too */
  CHECK(fetch_resource(oauth, request, true, &result) == -1 && result == CXHR_OAUTH2_REJECTED);
  CHECK(cxhr_get_last_error(request) && strstr(cxhr_get_last_error(request), "invalid_grant") != NULL);
  CHECK(access(token_file, F_OK) != 0);

  /* A new call starts from the password grant again; then the logout ends the session. */
  CHECK(fetch_resource(oauth, request, false, &result) == 200);
  CHECK(access(token_file, F_OK) == 0);
  CHECK(cxhr_oauth2_logout(oauth) == CXHR_OAUTH2_OK);
  CHECK(access(token_file, F_OK) != 0);
  CHECK(fetch_resource(oauth, request, false, &result) == -1 && result == CXHR_OAUTH2_LOGGED_OUT);
  cxhr_oauth2_destroy(oauth);
  cxhr_request_destroy(request);
}

int main(int argc, char **argv)
{
  if(argc != 8) {
    fprintf(stderr, "usage: %s BASE_URL CLIENT_ID CLIENT_SECRET USER PASSWORD TOKEN_SECONDS DIRECTORY\n", argv[0]);
    return 2;
  }
  base = argv[1];
  client_id = argv[2];
  client_secret = argv[3];
  user = argv[4];
  password = argv[5];
  token_seconds = atof(argv[6]);
  snprintf(token_url, sizeof token_url, "%s/o/token/", base);
  snprintf(revoke_url, sizeof revoke_url, "%s/o/revoke_token/", base);
  snprintf(resource_url, sizeof resource_url, "%s/api/me", base);
  snprintf(stats_url, sizeof stats_url, "%s/stats", base);
  snprintf(token_file, sizeof token_file, "%s/tokens.json", argv[7]);
  misuse_is_refused();
  tokens_on_requests();
  char lock[600];
  snprintf(lock, sizeof lock, "%s.lock", token_file);
  unlink(lock);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
