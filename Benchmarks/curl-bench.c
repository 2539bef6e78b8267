/*
 * Raw libcurl as the baseline benchmark client.
 *
 *   curl-bench --workload NAME --url URL [--mode async|threads] [--concurrency N]
 *              [--requests N] [--expect-bytes N] [--post-bytes N] [--max-seconds S]
 *              [--client NAME]
 *
 * --mode async:   one multi handle with `concurrency` easy handles kept busy: when one
 *                 finishes it is removed and added again (same handle, same options, so its
 *                 connection is reused from the multi handle's cache).
 * --mode threads: `concurrency` pthreads, each with one reused easy handle, calling
 *                 curl_easy_perform in a loop.
 * The write callback counts body bytes and keeps none. Options: URL, NOSIGNAL, no proxy
 * from the environment (as CurlXHR), the write callback, a timeout and, for POST, the body
 * (POSTFIELDS, not copied). A request is an error unless it ends with CURLE_OK, status 200
 * and exactly --expect-bytes body bytes.
 *
 * Prints the same JSON line as the Swift clients (Benchmarks/BenchSupport).
 * Build: cc -O2 -o curl-bench curl-bench.c -lcurl -lpthread
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct options {
    const char *client, *workload, *url;
    int threads; /* 0: async (multi handle), 1: threads (easy handles) */
    long concurrency, requests, expect_bytes, post_bytes;
    double max_seconds;
};

static struct options opt = {"libcurl", NULL, NULL, 0, 1, 1000, 100, 0, 60.0};
static char *post_body;

/* ---- The tally: count and time bounds, outcomes ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long issued, finished, errors, bytes_moved;
static char first_error[512];
static double start_time, deadline, start_user, start_sys;
static long start_switches;
static int reported;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double timeval_seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

/* Takes the right to issue one more request; 0 once the count is reached or time is up. */
static int claim(void)
{
    double now = now_seconds();
    int ok;
    pthread_mutex_lock(&lock);
    ok = issued < opt.requests && now < deadline;
    if (ok)
        issued++;
    pthread_mutex_unlock(&lock);
    return ok;
}

static void finish(CURLcode result, long status, long body_bytes)
{
    int good = result == CURLE_OK && status == 200 && body_bytes == opt.expect_bytes;
    pthread_mutex_lock(&lock);
    finished++;
    bytes_moved += body_bytes + opt.post_bytes;
    if (!good) {
        errors++;
        if (!first_error[0]) {
            if (result != CURLE_OK)
                snprintf(first_error, sizeof first_error, "curl error %d: %s", (int)result,
                         curl_easy_strerror(result));
            else
                snprintf(first_error, sizeof first_error,
                         "status %ld, %ld body bytes (expected 200, %ld)", status, body_bytes,
                         opt.expect_bytes);
        }
    }
    pthread_mutex_unlock(&lock);
}

static void report(long extra_errors, const char *note)
{
    double seconds = now_seconds() - start_time;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    pthread_mutex_lock(&lock);
    if (reported) {
        pthread_mutex_unlock(&lock);
        return;
    }
    reported = 1;
    const char *problem = note ? note : (first_error[0] ? first_error : NULL);
    printf("{\"client\":\"%s\",\"workload\":\"%s\",\"requests\":%ld,\"seconds\":%.6f,"
           "\"req_per_s\":%.3f,\"bytes_per_s\":%.1f,\"cpu_user_s\":%.6f,\"cpu_sys_s\":%.6f,"
           "\"context_switches\":%ld,\"peak_rss_kib\":%ld,\"errors\":%ld,\"timed_out\":%s",
           opt.client, opt.workload, finished, seconds, finished / seconds,
           bytes_moved / seconds, timeval_seconds(usage.ru_utime) - start_user,
           timeval_seconds(usage.ru_stime) - start_sys,
           usage.ru_nvcsw + usage.ru_nivcsw - start_switches, usage.ru_maxrss, errors + extra_errors,
           (issued < opt.requests || note) ? "true" : "false");
    if (problem) {
        /* The texts are ours or libcurl's: no quotes or backslashes to escape. */
        printf(",\"first_error\":\"%s\"", problem);
        fprintf(stderr, "%s %s: %s\n", opt.client, opt.workload, problem);
    }
    printf("}\n");
    fflush(stdout);
    pthread_mutex_unlock(&lock);
}

/* A last resort against a hung run: 30 s after the deadline, report and exit. */
static void *watchdog(void *unused)
{
    (void)unused;
    sleep((unsigned)(opt.max_seconds + 30));
    static char note[128];
    pthread_mutex_lock(&lock);
    long stuck = issued - finished;
    pthread_mutex_unlock(&lock);
    snprintf(note, sizeof note, "watchdog: %ld request(s) still in flight", stuck);
    report(stuck, note);
    _exit(2);
    return NULL;
}

/* ---- One easy handle ---- */

struct slot {
    CURL *easy;
    long received;
};

static size_t discard(char *data, size_t size, size_t count, void *context)
{
    (void)data;
    ((struct slot *)context)->received += (long)(size * count);
    return size * count;
}

static void set_up(struct slot *slot)
{
    slot->easy = curl_easy_init();
    if (!slot->easy) {
        fprintf(stderr, "curl_easy_init failed\n");
        exit(1);
    }
    curl_easy_setopt(slot->easy, CURLOPT_URL, opt.url);
    curl_easy_setopt(slot->easy, CURLOPT_NOSIGNAL, 1L);
    /* As CurlXHR does: no proxy from http_proxy and friends in the environment. */
    curl_easy_setopt(slot->easy, CURLOPT_PROXY, "");
    curl_easy_setopt(slot->easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(slot->easy, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(slot->easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(slot->easy, CURLOPT_TIMEOUT_MS, (long)((opt.max_seconds + 10) * 1000));
    if (opt.post_bytes > 0) {
        curl_easy_setopt(slot->easy, CURLOPT_POSTFIELDS, post_body);
        curl_easy_setopt(slot->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)opt.post_bytes);
    }
}

static long status_of(CURL *easy)
{
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* ---- The two modes ---- */

static void run_multi(void)
{
    CURLM *multi = curl_multi_init();
    struct slot *slots = calloc((size_t)opt.concurrency, sizeof *slots);
    long active = 0;
    for (long i = 0; i < opt.concurrency; i++) {
        set_up(&slots[i]);
        if (claim()) {
            curl_multi_add_handle(multi, slots[i].easy);
            active++;
        }
    }
    while (active > 0) {
        int running = 0, queued = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &queued))) {
            if (message->msg != CURLMSG_DONE)
                continue;
            CURL *easy = message->easy_handle;
            CURLcode result = message->data.result;
            struct slot *slot;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
            finish(result, status_of(easy), slot->received);
            curl_multi_remove_handle(multi, easy);
            active--;
            if (claim()) {
                slot->received = 0;
                curl_multi_add_handle(multi, easy);
                active++;
            }
        }
        if (active > 0)
            curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    for (long i = 0; i < opt.concurrency; i++)
        curl_easy_cleanup(slots[i].easy);
    curl_multi_cleanup(multi);
    free(slots);
}

static void *blocking_loop(void *unused)
{
    (void)unused;
    struct slot slot = {0};
    set_up(&slot);
    while (claim()) {
        slot.received = 0;
        CURLcode result = curl_easy_perform(slot.easy);
        finish(result, status_of(slot.easy), slot.received);
    }
    curl_easy_cleanup(slot.easy);
    return NULL;
}

static void run_threads(void)
{
    pthread_t *threads = calloc((size_t)opt.concurrency, sizeof *threads);
    for (long i = 0; i < opt.concurrency; i++)
        if (pthread_create(&threads[i], NULL, blocking_loop, NULL) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    for (long i = 0; i < opt.concurrency; i++)
        pthread_join(threads[i], NULL);
    free(threads);
}

/* ---- Command line ---- */

static void usage(const char *problem)
{
    fprintf(stderr,
            "%s\nusage: curl-bench --workload NAME --url URL [--mode async|threads] "
            "[--concurrency N] [--requests N] [--expect-bytes N] [--post-bytes N] "
            "[--max-seconds S] [--client NAME]\n",
            problem);
    exit(64);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (i + 1 >= argc)
            usage("an option needs a value");
        const char *value = argv[++i];
        if (!strcmp(name, "--client"))
            opt.client = value;
        else if (!strcmp(name, "--workload"))
            opt.workload = value;
        else if (!strcmp(name, "--url"))
            opt.url = value;
        else if (!strcmp(name, "--mode") && (!strcmp(value, "async") || !strcmp(value, "threads")))
            opt.threads = !strcmp(value, "threads");
        else if (!strcmp(name, "--concurrency"))
            opt.concurrency = atol(value) > 0 ? atol(value) : 1;
        else if (!strcmp(name, "--requests"))
            opt.requests = atol(value);
        else if (!strcmp(name, "--expect-bytes"))
            opt.expect_bytes = atol(value);
        else if (!strcmp(name, "--post-bytes"))
            opt.post_bytes = atol(value);
        else if (!strcmp(name, "--max-seconds") && atof(value) > 0)
            opt.max_seconds = atof(value);
        else
            usage("unknown option or bad value");
    }
    if (!opt.url || !opt.workload)
        usage("--url and --workload are required");

    curl_global_init(CURL_GLOBAL_DEFAULT);
    post_body = malloc((size_t)opt.post_bytes + 1);
    for (long i = 0; i < opt.post_bytes; i++)
        post_body[i] = (char)(i % 251);

    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    start_user = timeval_seconds(usage.ru_utime);
    start_sys = timeval_seconds(usage.ru_stime);
    start_switches = usage.ru_nvcsw + usage.ru_nivcsw;
    start_time = now_seconds();
    deadline = start_time + opt.max_seconds;
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);
    pthread_detach(dog);

    if (opt.threads)
        run_threads();
    else
        run_multi();
    report(0, NULL);
    curl_global_cleanup();
    return 0;
}
