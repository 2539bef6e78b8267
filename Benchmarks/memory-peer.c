/*
 * The raw libcurl peer of curlxhr-memory (Benchmarks/Clients/Sources/curlxhr-memory): how much
 * resident memory grows over N small synchronous GETs, one at a time, in plain C with
 * CurlXHR's structure.
 *
 *   memory-peer URL [N=200] [started|cold]
 *
 * The structure: curl_global_init, one multi handle, one share handle (DNS, TLS sessions and
 * cookies shared, as CurlXHR shares them) with an easy handle for the cookie jar (cookie
 * engine on, COOKIEFILE ""), and an engine thread that owns them all, looping
 * curl_multi_perform / curl_multi_info_read / curl_multi_poll. The main thread posts each GET
 * (a mutex, curl_multi_wakeup) and waits on a condition variable until the engine reports it
 * done, as CurlXHR's synchronous send() does. One easy handle, reused (CurlXHR keeps finished
 * handles for the next transfer), attached to the share handle, with the cookie engine on, no
 * proxy from the environment, a 30 s timeout and libcurl's default receive buffer; the body is
 * kept in a buffer grown with realloc, as CurlXHR keeps it for getReceiveBuffer(), and freed
 * after each request. A request is an error unless it ends with CURLE_OK, status 200 and a
 * non-empty body.
 *
 * The baseline is VmRSS (/proc/self/status) taken
 *   started  after all of the above was set up and the engine thread ran once (waits in
 *            curl_multi_poll): what CurlXHR's `started` baseline has;
 *   cold     when main begins: the set-up then happens at the first request, and the growth
 *            includes libcurl's one-time start-up (curl_global_init: OpenSSL reading
 *            openssl.cnf).
 * At the baseline the peak (VmHWM) is reset (writing 5 to /proc/self/clear_refs), so the peak
 * at the end is the highest resident memory while the requests ran; growth_kib is that peak
 * minus the baseline. Prints the same JSON line as curlxhr-memory, client "libcurl":
 *   {"client","workload":"memory","baseline","requests","errors","start_rss_kib",
 *    "baseline_kib","baseline_hwm_kib","peak_kib","growth_kib","end_rss_kib",
 *    "end_growth_kib","anon_growth_kib","file_growth_kib","threads","hwm_reset"[,"first_error"]}
 * The whole run is bounded by alarm(2); exits 1 on any error.
 *
 * Build: cc -O2 -o memory-peer memory-peer.c -lcurl -lpthread
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct status { long rss, hwm, anon, file, threads; };

static struct status read_status(void)
{
    struct status s = {0, 0, 0, 0, 0};
    char text[8192];
    int descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (descriptor < 0)
        return s;
    ssize_t length = 0, count;
    while (length < (ssize_t)sizeof text - 1 &&
           (count = read(descriptor, text + length, sizeof text - 1 - (size_t)length)) > 0)
        length += count;
    close(descriptor);
    text[length] = 0;
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        sscanf(line, "VmRSS: %ld", &s.rss);
        sscanf(line, "VmHWM: %ld", &s.hwm);
        sscanf(line, "RssAnon: %ld", &s.anon);
        sscanf(line, "RssFile: %ld", &s.file);
        sscanf(line, "Threads: %ld", &s.threads);
    }
    return s;
}

/* Resets VmHWM to the current VmRSS. */
static int reset_peak(void)
{
    int descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (descriptor < 0)
        return 0;
    int ok = write(descriptor, "5", 1) == 1;
    close(descriptor);
    return ok;
}

static const char *url;

/* ---- The engine ---- */

struct body { char *data; size_t size; };

static CURLM *multi;
static CURLSH *share;
static CURL *cookie_handle, *easy;
static struct body body;
static pthread_t engine_thread;
static int engine_started;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
/* Under lock: a GET to start, the engine's stop order, the engine ran, the GET's outcome. */
static int start_pending, stopping, engine_ran, done;
static CURLcode done_result;

static size_t keep(char *data, size_t size, size_t count, void *context)
{
    struct body *b = context;
    size_t n = size * count;
    char *grown = realloc(b->data, b->size + n);
    if (!grown)
        return 0;
    memcpy(grown + b->size, data, n);
    b->data = grown;
    b->size += n;
    return n;
}

static void *engine(void *unused)
{
    (void)unused;
    for (;;) { /* ends on the stop order; every wait below is bounded */
        pthread_mutex_lock(&lock);
        int start = start_pending, stop = stopping;
        start_pending = 0;
        if (!engine_ran) {
            engine_ran = 1;
            pthread_cond_broadcast(&changed);
        }
        pthread_mutex_unlock(&lock);
        if (stop)
            return NULL;
        if (start)
            curl_multi_add_handle(multi, easy);
        int running = 0, queued;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &queued))) {
            if (message->msg != CURLMSG_DONE)
                continue;
            CURLcode result = message->data.result;
            curl_multi_remove_handle(multi, message->easy_handle);
            pthread_mutex_lock(&lock);
            done = 1;
            done_result = result;
            pthread_cond_broadcast(&changed);
            pthread_mutex_unlock(&lock);
        }
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
}

/* Everything CurlXHR's engine sets up when it starts, then the engine thread, which has run
 * once when this returns. */
static void start_engine(void)
{
    if (engine_started)
        return;
    engine_started = 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    multi = curl_multi_init();
    share = curl_share_init();
    cookie_handle = curl_easy_init();
    easy = curl_easy_init();
    if (!multi || !share || !cookie_handle || !easy) {
        fprintf(stderr, "memory-peer: libcurl could not allocate its handles\n");
        exit(1);
    }
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    curl_easy_setopt(cookie_handle, CURLOPT_SHARE, share);
    curl_easy_setopt(cookie_handle, CURLOPT_COOKIEFILE, "");

    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_SHARE, share);
    curl_easy_setopt(easy, CURLOPT_COOKIEFILE, "");
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);

    if (pthread_create(&engine_thread, NULL, engine, NULL) != 0) {
        fprintf(stderr, "memory-peer: pthread_create failed\n");
        exit(1);
    }
    pthread_mutex_lock(&lock);
    while (!engine_ran)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static void stop_engine(void)
{
    if (!engine_started)
        return;
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_mutex_unlock(&lock);
    curl_multi_wakeup(multi);
    pthread_join(engine_thread, NULL);
    curl_easy_cleanup(easy);
    curl_easy_cleanup(cookie_handle);
    curl_multi_cleanup(multi);
    curl_share_cleanup(share);
    curl_global_cleanup();
}

/* One synchronous GET: posts it to the engine and waits (at most 40 s) until it is done.
 * Returns NULL or what went wrong. */
static const char *get(void)
{
    static char problem[256];
    start_engine();
    pthread_mutex_lock(&lock);
    start_pending = 1;
    done = 0;
    pthread_mutex_unlock(&lock);
    curl_multi_wakeup(multi);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 40;
    int waited = 0;
    pthread_mutex_lock(&lock);
    while (!done && waited != ETIMEDOUT)
        waited = pthread_cond_timedwait(&changed, &lock, &deadline);
    int finished = done;
    CURLcode result = done_result;
    pthread_mutex_unlock(&lock);
    if (!finished) {
        fprintf(stderr, "memory-peer: a GET did not finish in 40 s\n");
        exit(2); /* the engine still owns the handle */
    }
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    const char *outcome = NULL;
    if (result != CURLE_OK) {
        snprintf(problem, sizeof problem, "curl error %d: %s", (int)result, curl_easy_strerror(result));
        outcome = problem;
    } else if (status != 200 || body.size == 0) {
        snprintf(problem, sizeof problem, "status %ld, %zu bytes", status, body.size);
        outcome = problem;
    }
    free(body.data);
    body.data = NULL;
    body.size = 0;
    return outcome;
}

int main(int argc, char **argv)
{
    struct status start = read_status();
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: memory-peer URL [N=200] [started|cold]\n");
        return 64;
    }
    url = argv[1];
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    const char *kind = argc > 3 ? argv[3] : "started";
    if (count <= 0 || (strcmp(kind, "started") != 0 && strcmp(kind, "cold") != 0)) {
        fprintf(stderr, "memory-peer: N must be positive and the baseline started or cold\n");
        return 64;
    }
    alarm((unsigned)(60 + count / 10)); /* the bound of the whole run */

    if (strcmp(kind, "started") == 0)
        start_engine();
    struct status before_reset = read_status();
    int peak_reset = reset_peak();
    struct status baseline = read_status();

    long errors = 0;
    char first_error[256] = "";
    for (long i = 0; i < count; i++) {
        const char *problem = get();
        if (problem) {
            if (!errors)
                snprintf(first_error, sizeof first_error, "%s", problem);
            errors++;
        }
    }
    struct status end = read_status();

    printf("{\"client\":\"libcurl\",\"workload\":\"memory\",\"baseline\":\"%s\",\"requests\":%ld,"
           "\"errors\":%ld,\"start_rss_kib\":%ld,\"baseline_kib\":%ld,\"baseline_hwm_kib\":%ld,"
           "\"peak_kib\":%ld,\"growth_kib\":%ld,\"end_rss_kib\":%ld,\"end_growth_kib\":%ld,"
           "\"anon_growth_kib\":%ld,\"file_growth_kib\":%ld,\"threads\":%ld,\"hwm_reset\":%s",
           kind, count, errors, start.rss, baseline.rss, before_reset.hwm, end.hwm,
           end.hwm - baseline.rss, end.rss, end.rss - baseline.rss, end.anon - baseline.anon,
           end.file - baseline.file, end.threads,
           peak_reset ? "true" : "false");
    /* The texts are ours or libcurl's: no quotes or backslashes to escape. */
    if (errors)
        printf(",\"first_error\":\"%s\"", first_error);
    printf("}\n");
    fflush(stdout);
    stop_engine();
    return errors ? 1 : 0;
}
