/*
 * Raw libcurl as the baseline benchmark client.
 *
 *   curl-bench --workload NAME --url URL [--mode async|threads|handoff|xhr] [--concurrency N]
 *              [--requests N] [--expect-bytes N] [--post-bytes N] [--headers N]
 *              [--max-seconds S] [--output-file PATH] [--mime-file PATH]... [--mime-files A,B]
 *              [--cacert PATH] [--cert PATH --key PATH] [--pinnedpubkey PINS]
 *              [--expect-http-version 1.1|2] [--header "NAME: VALUE"]...
 *              [--client NAME]
 *
 * --mode async:   one multi handle with `concurrency` easy handles kept busy: when one
 *                 finishes it is removed and added again (same handle, same options, so its
 *                 connection is reused from the multi handle's cache).
 * --mode threads: `concurrency` pthreads, each with one reused easy handle, calling
 *                 curl_easy_perform in a loop.
 * --mode handoff: the async mode's work with CurlXHR's two threads: an engine thread owns
 *                 the multi handle and only adds the handles it is told to start; it hands
 *                 each round's finished handles to a callback thread (mutex and condition
 *                 variable), which counts them and posts the next starts back to the engine
 *                 (a queue, and curl_multi_wakeup when the engine waits; the engine yields
 *                 once after a hand-off that left nothing in flight, as CurlXHR's does).
 *                 What the hand-off costs in plain C, as a peer for CurlXHR async. Client name
 *                 "libcurl-handoff" unless --client.
 * --mode xhr:     the handoff mode plus an XHR-style request's least duties in plain C (see
 *                 "Xhr" below). Client name "xhr-in-c" unless --client.
 * The write callback counts body bytes and keeps none; with --output-file PATH (concurrency 1
 * only) it also writes each chunk to PATH, as a program saving a download does: PATH is
 * opened with O_TRUNC before each request (the previous download's pages are dropped) and
 * closed when the request ends, before it is counted. Each chunk is one write(2), as
 * CurlXHR's setResponseFile does, not fwrite: stdio's 4 KiB buffer turns each 16 KiB chunk
 * that does not start on a 4 KiB boundary into two system calls, which would price stdio
 * rather than libcurl. A failed write fails the transfer (CURLE_WRITE_ERROR), and so does a
 * failed close. Body bytes are counted as they arrive, as without a file.
 * --mime-file PATH (repeatable; --mime-files A,B names several at once) POSTs a
 * multipart/form-data form of those files instead of --post-bytes, one part per file named
 * "file0", "file1", … in order, each streamed from disk by libcurl, as CurlXHR's addPostFile
 * does: the form is built before each request (curl_mime_init, curl_mime_addpart,
 * curl_mime_name, curl_mime_filedata; CURLOPT_MIMEPOST) and freed when it ends. The request
 * body bytes counted are the sum of the files' sizes (stat'ed once at the start), not the
 * multipart framing around them. No Expect header is set or removed: libcurl's default for
 * a body over 1 MiB (`Expect: 100-continue`, then waiting for the 100) applies, as for
 * CurlXHR. Options: URL, NOSIGNAL, no proxy
 * from the environment (as CurlXHR), the URL parsed once with libcurl's URL API and handed
 * over as CURLOPT_CURLU besides CURLOPT_URL (as CurlXHR does for the URL `open` parsed: libcurl
 * then copies its parts for each request instead of parsing the text again), the write callback, a timeout, for POST the body
 * (POSTFIELDS, not copied) or the form (MIMEPOST), and with --headers N the first N of the request headers every
 * Swift client sends too (BenchSupport's benchRequestHeaders), as one list set on each handle;
 * --header "NAME: VALUE" (repeatable) adds a line to that list after them (client-bearer-c16:
 * `Authorization: Bearer <token>`, as curl's -H does).
 * A request always carries a User-Agent line, as CurlXHR's (which sends
 * `CurlXHR/<version> libcurl/<version>` unless the request names its own) and curl's tool do:
 * below two headers, where the list has none, `curl-bench/1.0 libcurl/<version>` joins it, so
 * raw libcurl sends the same header lines as CurlXHR and formats them at the same cost. A
 * request is an error unless it ends with CURLE_OK, status 200 and exactly --expect-bytes body
 * bytes.
 *
 * For https URLs each handle also gets CURLOPT_PIPEWAIT 1 and CURLOPT_HTTP_VERSION
 * CURL_HTTP_VERSION_2TLS (7.88's default for https, set anyway), and the multi handle (async
 * and handoff modes) has CURLMOPT_PIPELINING CURLPIPE_MULTIPLEX (its default, set anyway): as
 * CurlXHR does by default, so the requests in flight wait for the first one's connection and
 * share it as HTTP/2 streams. --cacert PATH: CURLOPT_CAINFO PATH and no CAPATH (PATH's CAs
 * are the only trust roots, as CurlXHR's caCertificateFile). --expect-http-version V: every
 * response must have come over HTTP/V (CURLINFO_HTTP_VERSION of the finished handle), else
 * it is an error; the JSON line then also has "http_version" (the protocols seen) and
 * "connections" (CURLINFO_NUM_CONNECTS summed: the connections the run opened). Without it
 * neither is read.
 *
 * Prints the same JSON line as the Swift clients (Benchmarks/BenchSupport).
 * Build: cc -O2 -o curl-bench curl-bench.c -lcurl -lpthread
 */
#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_ASYNC, MODE_THREADS, MODE_HANDOFF, MODE_XHR };

struct options {
    const char *client, *workload, *url; /* client NULL: by the mode (see main) */
    enum mode mode;
    long concurrency, requests, expect_bytes, post_bytes, headers;
    double max_seconds;
};

static struct options opt = {NULL, NULL, NULL, MODE_ASYNC, 1, 1000, 100, 0, 0, 60.0};

/* The same list as BenchSupport's benchRequestHeaders. */
static const char *const request_headers[] = {
    "Accept: application/json",
    "User-Agent: CurlXHR-bench/1.0 (Linux x86_64)",
    "X-Request-Id: 3f2a9c1e-7b44-4d1a-9e2f-0c8d5b6a7e91",
    "Accept-Language: en-GB,en;q=0.9",
    "Cache-Control: no-cache",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl",
    "X-Client-Version: 5.4.2",
    "If-None-Match: \"5f1d-2a3b4c5d\"",
};
static struct curl_slist *header_list;
/* opt.url parsed once (curl_url_set), shared by every handle: libcurl only reads it (it
 * copies it as each request starts). */
static CURLU *parsed_url;
static pthread_once_t parse_url_once = PTHREAD_ONCE_INIT;

static void parse_url(void)
{
    parsed_url = curl_url();
    if (!parsed_url || curl_url_set(parsed_url, CURLUPART_URL, opt.url, 0) != CURLUE_OK) {
        fprintf(stderr, "libcurl cannot parse the URL %s\n", opt.url);
        exit(1);
    }
}
/* --header: lines added to the list after the --headers ones. */
#define MAX_EXTRA_HEADERS 16
static const char *extra_headers[MAX_EXTRA_HEADERS];
static int extra_header_count;
/* --cacert: the trusted CAs (NULL: libcurl's default store). */
static const char *ca_file;
/* --cert, --key: a client certificate and its key in PEM; --pinnedpubkey: the server's key
 * pinned (CURLOPT_PINNEDPUBLICKEY). */
static const char *cert_file, *key_file, *pinned_keys;
/* --expect-http-version: the CURL_HTTP_VERSION_* every response must have (0: not checked,
 * and neither the version nor the connection count is read). */
static long expect_version;
static char *post_body;
/* --output-file: where each response body is written (NULL: nowhere). */
static const char *output_path;
/* --mime-file: the files of the multipart form (none: no form), and the sum of their sizes. */
#define MAX_MIME_FILES 16
static const char *mime_files[MAX_MIME_FILES];
static int mime_file_count;
static long mime_bytes;

/* ---- The tally: count and time bounds, outcomes ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long issued, finished, errors, bytes_moved;
/* With --expect-http-version: the CURL_HTTP_VERSION_* values seen (bit = value, all < 64),
 * and CURLINFO_NUM_CONNECTS summed. */
static unsigned long long versions_seen;
static long connections;
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

static const char *version_name(long version)
{
    switch (version) {
    case CURL_HTTP_VERSION_1_0: return "HTTP/1.0";
    case CURL_HTTP_VERSION_1_1: return "HTTP/1.1";
    case CURL_HTTP_VERSION_2_0: return "HTTP/2";
    case CURL_HTTP_VERSION_3: return "HTTP/3";
    default: return "no HTTP version";
    }
}

/* version and connects: CURLINFO_HTTP_VERSION and CURLINFO_NUM_CONNECTS of the finished
 * handle (read only with --expect-http-version). */
static void finish(CURLcode result, long status, long body_bytes, long version, long connects)
{
    int answered = result == CURLE_OK && status == 200 && body_bytes == opt.expect_bytes;
    int right_protocol = !expect_version || version == expect_version;
    pthread_mutex_lock(&lock);
    finished++;
    bytes_moved += body_bytes + opt.post_bytes + mime_bytes;
    if (expect_version) {
        if (version > 0 && version < 64)
            versions_seen |= 1ULL << version;
        connections += connects;
    }
    if (!answered || !right_protocol) {
        errors++;
        if (!first_error[0]) {
            if (result != CURLE_OK)
                snprintf(first_error, sizeof first_error, "curl error %d: %s", (int)result,
                         curl_easy_strerror(result));
            else if (!answered)
                snprintf(first_error, sizeof first_error,
                         "status %ld, %ld body bytes (expected 200, %ld)", status, body_bytes,
                         opt.expect_bytes);
            else
                snprintf(first_error, sizeof first_error, "response over %s, expected %s",
                         version_name(version), version_name(expect_version));
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
    if (versions_seen) { /* the protocols seen, as "HTTP/2" or "HTTP/1.1,HTTP/2" */
        const char *separator = ",\"http_version\":\"";
        for (long version = 1; version < 64; version++)
            if (versions_seen & (1ULL << version)) {
                printf("%s%s", separator, version_name(version));
                separator = ",";
            }
        printf("\"");
    }
    if (expect_version)
        printf(",\"connections\":%ld", connections);
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
    /* --output-file: the file of the request in flight (-1 between requests). */
    int file;
    /* --mime-file: the form of the request in flight (NULL between requests). */
    curl_mime *mime;
    /* Handoff mode: how the transfer ended, read by the engine thread for the callback thread. */
    CURLcode result;
    long status, version, connects;
    /* Xhr mode: the request object (see "Xhr" below). */
    struct xhr *xhr;
};

static size_t discard(char *data, size_t size, size_t count, void *context)
{
    (void)data;
    ((struct slot *)context)->received += (long)(size * count);
    return size * count;
}

/* --output-file's write callback: the chunk goes to the file (and is counted as above). */
static size_t save(char *data, size_t size, size_t count, void *context)
{
    struct slot *slot = context;
    size_t bytes = size * count, left = bytes;
    slot->received += (long)bytes;
    while (left > 0) {
        ssize_t written = write(slot->file, data, left);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return 0; /* CURLE_WRITE_ERROR */
        }
        data += written;
        left -= (size_t)written;
    }
    return bytes;
}

/* --mime-file: the request's form, built as an application builds one for each upload
 * (libcurl opens each file when it sends its part). */
static void build_form(struct slot *slot)
{
    slot->mime = curl_mime_init(slot->easy);
    if (!slot->mime) {
        fprintf(stderr, "curl-bench: curl_mime_init failed\n");
        exit(1);
    }
    for (int i = 0; i < mime_file_count; i++) {
        char name[16];
        snprintf(name, sizeof name, "file%d", i);
        curl_mimepart *part = curl_mime_addpart(slot->mime);
        if (!part || curl_mime_name(part, name) != CURLE_OK
            || curl_mime_filedata(part, mime_files[i]) != CURLE_OK) {
            fprintf(stderr, "curl-bench: cannot add %s to the form\n", mime_files[i]);
            exit(1);
        }
    }
    curl_easy_setopt(slot->easy, CURLOPT_MIMEPOST, slot->mime);
}

/* Before each request: the counter reset, with --mime-file the form built, and with
 * --output-file the file opened (truncated). */
static void start_request(struct slot *slot)
{
    slot->received = 0;
    if (mime_file_count > 0)
        build_form(slot);
    if (!output_path)
        return;
    slot->file = open(output_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (slot->file < 0) {
        fprintf(stderr, "curl-bench: cannot open %s: %s\n", output_path, strerror(errno));
        exit(1);
    }
}

/* When a request ended (its handle out of the multi handle), before it is counted: the form
 * freed and the file closed. Returns the request's result, or CURLE_WRITE_ERROR if closing
 * the file failed. */
static CURLcode end_request(struct slot *slot, CURLcode result)
{
    if (slot->mime) {
        curl_easy_setopt(slot->easy, CURLOPT_MIMEPOST, NULL);
        curl_mime_free(slot->mime);
        slot->mime = NULL;
    }
    if (slot->file < 0)
        return result;
    int closed = close(slot->file) == 0;
    slot->file = -1;
    return closed || result != CURLE_OK ? result : CURLE_WRITE_ERROR;
}

static void set_up(struct slot *slot)
{
    slot->file = -1;
    slot->easy = curl_easy_init();
    if (!slot->easy) {
        fprintf(stderr, "curl_easy_init failed\n");
        exit(1);
    }
    curl_easy_setopt(slot->easy, CURLOPT_URL, opt.url);
    pthread_once(&parse_url_once, parse_url);
    curl_easy_setopt(slot->easy, CURLOPT_CURLU, parsed_url);
    curl_easy_setopt(slot->easy, CURLOPT_NOSIGNAL, 1L);
    /* Redirects followed, as every other client does by default (the redirect workload). */
    curl_easy_setopt(slot->easy, CURLOPT_FOLLOWLOCATION, 1L);
    /* As CurlXHR does: no proxy from http_proxy and friends in the environment. */
    curl_easy_setopt(slot->easy, CURLOPT_PROXY, "");
    /* As CurlXHR does by default (curl --compressed): ask for every encoding libcurl decodes. */
    curl_easy_setopt(slot->easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(slot->easy, CURLOPT_WRITEFUNCTION, output_path ? save : discard);
    curl_easy_setopt(slot->easy, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(slot->easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(slot->easy, CURLOPT_TIMEOUT_MS, (long)((opt.max_seconds + 10) * 1000));
    if (header_list)
        curl_easy_setopt(slot->easy, CURLOPT_HTTPHEADER, header_list);
    /* https: wait for a connection being set up to learn whether it multiplexes, and offer h2
     * (CurlXHR's defaults for https). */
    if (!strncasecmp(opt.url, "https:", 6)) {
        curl_easy_setopt(slot->easy, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(slot->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    }
    if (ca_file) {
        curl_easy_setopt(slot->easy, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(slot->easy, CURLOPT_CAPATH, NULL);
    }
    if (cert_file) {
        curl_easy_setopt(slot->easy, CURLOPT_SSLCERT, cert_file);
        curl_easy_setopt(slot->easy, CURLOPT_SSLKEY, key_file);
    }
    if (pinned_keys)
        curl_easy_setopt(slot->easy, CURLOPT_PINNEDPUBLICKEY, pinned_keys);
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

/* With --expect-http-version: the protocol the response came over, and the connections the
 * transfer opened (0 when not asked). */
static long version_of(CURL *easy)
{
    long version = 0;
    if (expect_version)
        curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
    return version;
}

static long connects_of(CURL *easy)
{
    long connects = 0;
    if (expect_version)
        curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
    return connects;
}

/* The multi handle of the async and handoff modes: HTTP/2 multiplexing allowed (libcurl's
 * default since 7.62; set as CurlXHR sets it). */
static CURLM *new_multi(void)
{
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return multi;
}

/* ---- The three modes ---- */

static void run_multi(void)
{
    CURLM *multi = new_multi();
    struct slot *slots = calloc((size_t)opt.concurrency, sizeof *slots);
    long active = 0;
    for (long i = 0; i < opt.concurrency; i++) {
        set_up(&slots[i]);
        if (claim()) {
            start_request(&slots[i]);
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
            curl_multi_remove_handle(multi, easy);
            active--;
            result = end_request(slot, result);
            finish(result, status_of(easy), slot->received, version_of(easy), connects_of(easy));
            if (claim()) {
                start_request(slot);
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
        start_request(&slot);
        CURLcode result = end_request(&slot, curl_easy_perform(slot.easy));
        finish(result, status_of(slot.easy), slot.received, version_of(slot.easy), connects_of(slot.easy));
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

/*
 * Handoff: the threads of CurlXHR async. The engine thread owns the multi handle: each round
 * it adds the handles posted to it, runs curl_multi_perform, removes the finished handles
 * and hands them, as one batch, to the callback thread, then waits in curl_multi_poll. The
 * callback thread counts each finished request and, while there are more to make, posts its
 * slot back to the engine. Each slot is in at most one of the two queues at a time, so
 * `concurrency` entries are enough for either.
 */

static struct {
    CURLM *multi;
    /* To the engine: slots to start, and the order to stop. */
    pthread_mutex_t commands_lock;
    struct slot **commands;
    long command_count;
    int stopping;
    /* The engine found no command and waits (or is about to wait) in curl_multi_poll. */
    int loop_waits;
    /* To the callback thread: finished slots. */
    pthread_mutex_t done_lock;
    pthread_cond_t done_posted;
    struct slot **done;
    long done_count;
    /* Slots started and not yet retired; the callback thread's after it starts. */
    long in_flight;
} handoff = {NULL, PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER,
             PTHREAD_COND_INITIALIZER, NULL, 0, 0};

/* Queues a start; wakes the engine only if it waits (or is about to wait) in curl_multi_poll
 * and no earlier post woke it, as CurlXHR does: an engine still busy with its round finds the
 * command before it would wait. */
static void post_start(struct slot *slot)
{
    pthread_mutex_lock(&handoff.commands_lock);
    handoff.commands[handoff.command_count++] = slot;
    int wake = handoff.loop_waits;
    handoff.loop_waits = 0;
    pthread_mutex_unlock(&handoff.commands_lock);
    if (wake)
        curl_multi_wakeup(handoff.multi);
}

/*
 * Xhr (--mode xhr): the handoff's threads and transfers, plus what an XHR-style request must
 * do besides its transfer, in plain C and at its least: a floor under CurlXHR's own cost.
 * Each slot is a request object with its own mutex, a ready state and a queue of reports:
 *   - open (callback thread): the URL checked for bytes outside ASCII and the method for a
 *     token, the last response forgotten (its buffers kept), OPENED; send: SENT, and the start
 *     posted to the engine. Both reports are delivered on the callback thread, as CurlXHR's.
 *   - the engine copies the header lines libcurl hands its header callback into a buffer
 *     (Set-Cookie noted, Content-Length read); at the head's end (interim 1xx heads skipped)
 *     it reads the status and copies the head into the request (HEADERS_RECEIVED); body bytes
 *     are copied into the request's buffer, sized from Content-Length (LOADING, one report
 *     while one waits); at the end it reads the metrics CurlXHR keeps (connect, first byte and
 *     total times, the connection's two ports) and marks DONE.
 *   - each round the engine hands the requests with new reports to the callback thread (each
 *     queued once), which takes a request's reports under its lock and calls the
 *     application's callback for each, through a pointer; at DONE the callback reads the
 *     status and the body's length under the lock, then opens and sends the request again.
 * Nothing else CurlXHR does (cookies, the cache, redirects, timeouts, error texts, checks of
 * header values) is done here: what this mode costs over handoff is a lower bound of what
 * CurlXHR's request costs over it. Client name "xhr-in-c" unless --client.
 */

enum { XHR_UNSENT, XHR_OPENED, XHR_SENT, XHR_HEADERS_RECEIVED, XHR_LOADING, XHR_DONE };
#define XHR_MAX_REPORTS 8

struct xhr {
    pthread_mutex_t lock;
    int state;
    unsigned char reports[XHR_MAX_REPORTS];
    int report_count;
    /* The response: its head's lines, status and announced length (-1: none), its body. */
    char *head;
    size_t head_length, head_capacity;
    long status, content_length;
    char *body;
    size_t body_length, body_capacity;
    curl_off_t connect_time, first_byte_time, total_time;
    long local_port, remote_port;
    /* Engine thread: the head being read (its Content-Length, -1: none), and whether the
     * request is due this round. */
    char *lines;
    size_t lines_length, lines_capacity;
    long announced;
    int saw_set_cookie, due;
    /* In the callback thread's queue (under handoff.done_lock). */
    int queued;
    /* The application's callback, and the state it is called for. */
    void (*callback)(struct slot *slot);
    int callback_state;
};

/* Room for `more` bytes after `length` in *buffer (the capacity doubles); 0: out of memory. */
static int reserve(char **buffer, size_t *capacity, size_t length, size_t more)
{
    if (length + more <= *capacity)
        return 1;
    size_t larger = *capacity ? *capacity * 2 : 1024;
    if (larger < length + more)
        larger = length + more;
    char *grown = realloc(*buffer, larger);
    if (!grown)
        return 0;
    *buffer = grown;
    *capacity = larger;
    return 1;
}

/* Under the request's lock: the new state, and its report (a LOADING waiting takes the next).
 * A full queue (many redirects' heads and bodies) keeps its newest report last, so DONE is
 * never lost. */
static void xhr_report(struct xhr *x, int state)
{
    x->state = state;
    if (state == XHR_LOADING && x->report_count > 0 && x->reports[x->report_count - 1] == XHR_LOADING)
        return;
    if (x->report_count == XHR_MAX_REPORTS)
        x->report_count--;
    x->reports[x->report_count++] = (unsigned char)state;
}

/* Engine thread: the requests with new reports this round (each once). */
static struct slot **xhr_due;
static long xhr_due_count;

static void xhr_mark_due(struct slot *slot)
{
    if (slot->xhr->due)
        return;
    slot->xhr->due = 1;
    xhr_due[xhr_due_count++] = slot;
}

static size_t xhr_header(char *data, size_t size, size_t count, void *context)
{
    struct slot *slot = context;
    struct xhr *x = slot->xhr;
    size_t length = size * count;
    if (length > 0 && data[0] != '\r' && data[0] != '\n') {
        if (!reserve(&x->lines, &x->lines_capacity, x->lines_length, length))
            return 0;
        /* Lines end in CRLF: strtol stops there. */
        if (length > 11 && (data[0] | 0x20) == 's' && strncasecmp(data, "set-cookie:", 11) == 0)
            x->saw_set_cookie = 1;
        else if (length > 15 && (data[0] | 0x20) == 'c'
                 && strncasecmp(data, "content-length:", 15) == 0)
            x->announced = strtol(data + 15, NULL, 10);
        memcpy(x->lines + x->lines_length, data, length);
        x->lines_length += length;
        return length;
    }
    /* The head ended: its status ("HTTP/1.1 200 OK"). */
    long status = 0;
    const char *space = memchr(x->lines, ' ', x->lines_length);
    if (space && x->lines + x->lines_length - space > 3)
        status = (space[1] - '0') * 100 + (space[2] - '0') * 10 + (space[3] - '0');
    long announced = x->announced;
    x->announced = -1;
    if (status >= 100 && status < 200) {
        x->lines_length = 0;
        return length;
    }
    pthread_mutex_lock(&x->lock);
    int ok = reserve(&x->head, &x->head_capacity, 0, x->lines_length);
    if (ok) {
        memcpy(x->head, x->lines, x->lines_length);
        x->head_length = x->lines_length;
        x->status = status;
        x->content_length = announced;
        xhr_report(x, XHR_HEADERS_RECEIVED);
    }
    pthread_mutex_unlock(&x->lock);
    x->lines_length = 0;
    if (!ok)
        return 0;
    xhr_mark_due(slot);
    return length;
}

static size_t xhr_write(char *data, size_t size, size_t count, void *context)
{
    struct slot *slot = context;
    struct xhr *x = slot->xhr;
    size_t length = size * count;
    pthread_mutex_lock(&x->lock);
    size_t wanted = length;
    if (x->content_length > 0 && (size_t)x->content_length > x->body_length + length)
        wanted = (size_t)x->content_length - x->body_length;
    int ok = reserve(&x->body, &x->body_capacity, x->body_length, wanted);
    if (ok) {
        memcpy(x->body + x->body_length, data, length);
        x->body_length += length;
        xhr_report(x, XHR_LOADING);
    }
    pthread_mutex_unlock(&x->lock);
    if (!ok)
        return 0;
    xhr_mark_due(slot);
    return length;
}

/* Engine thread: a send starts. (Its URL is the one the handle has: an implementation that
 * remembers a handle's URL sets it only when it changes.) */
static void xhr_begin(struct slot *slot)
{
    slot->xhr->lines_length = 0;
    slot->xhr->announced = -1;
    slot->xhr->saw_set_cookie = 0;
}

/* Engine thread: a send ended (its handle out of the multi handle). */
static void xhr_end(struct slot *slot, CURLcode result)
{
    struct xhr *x = slot->xhr;
    curl_off_t connect = 0, first_byte = 0, total = 0;
    long local = 0, remote = 0;
    curl_easy_getinfo(slot->easy, CURLINFO_CONNECT_TIME_T, &connect);
    curl_easy_getinfo(slot->easy, CURLINFO_STARTTRANSFER_TIME_T, &first_byte);
    curl_easy_getinfo(slot->easy, CURLINFO_TOTAL_TIME_T, &total);
    curl_easy_getinfo(slot->easy, CURLINFO_LOCAL_PORT, &local);
    curl_easy_getinfo(slot->easy, CURLINFO_PRIMARY_PORT, &remote);
    pthread_mutex_lock(&x->lock);
    x->connect_time = connect;
    x->first_byte_time = first_byte;
    x->total_time = total;
    x->local_port = local;
    x->remote_port = remote;
    slot->result = result;
    if (result != CURLE_OK)
        x->status = 0;
    xhr_report(x, XHR_DONE);
    pthread_mutex_unlock(&x->lock);
    xhr_mark_due(slot);
}

/* Engine thread, under handoff.done_lock: queues this round's due requests for the callback
 * thread (those not queued already). */
static void xhr_hand_over(void)
{
    for (long i = 0; i < xhr_due_count; i++) {
        struct slot *slot = xhr_due[i];
        slot->xhr->due = 0;
        if (slot->xhr->queued)
            continue;
        slot->xhr->queued = 1;
        handoff.done[handoff.done_count++] = slot;
    }
    xhr_due_count = 0;
}

/* open: 0 when refused (a URL with bytes outside ASCII, a method that is not a token). */
static int xhr_open(struct slot *slot, const char *method, const char *url)
{
    for (const unsigned char *c = (const unsigned char *)url; *c; c++)
        if (*c >= 0x80)
            return 0;
    for (const char *c = method; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("!#$%&'*+-.^_`|~", *c))
            return 0;
    struct xhr *x = slot->xhr;
    pthread_mutex_lock(&x->lock);
    x->head_length = 0;
    x->body_length = 0;
    x->status = 0;
    x->content_length = -1;
    xhr_report(x, XHR_OPENED);
    pthread_mutex_unlock(&x->lock);
    return 1;
}

/* send: 0 unless OPENED. */
static int xhr_send(struct slot *slot)
{
    struct xhr *x = slot->xhr;
    pthread_mutex_lock(&x->lock);
    int ok = x->state == XHR_OPENED;
    if (ok)
        xhr_report(x, XHR_SENT);
    pthread_mutex_unlock(&x->lock);
    if (ok)
        post_start(slot);
    return ok;
}

/* The application's callback: at DONE it counts the response, then sends the next request. */
static void xhr_on_state(struct slot *slot)
{
    struct xhr *x = slot->xhr;
    if (x->callback_state != XHR_DONE)
        return;
    pthread_mutex_lock(&x->lock);
    long status = x->status, bytes = (long)x->body_length;
    pthread_mutex_unlock(&x->lock);
    finish(slot->result, status, bytes, slot->version, slot->connects);
    if (!(claim() && xhr_open(slot, "GET", opt.url) && xhr_send(slot)))
        handoff.in_flight--;
}

/* Callback thread: the request's reports, taken under its lock, a callback each, until none
 * is left (a callback's open and send add theirs). */
static void xhr_deliver(struct slot *slot)
{
    struct xhr *x = slot->xhr;
    unsigned char taken[XHR_MAX_REPORTS];
    for (;;) {
        pthread_mutex_lock(&x->lock);
        int count = x->report_count;
        memcpy(taken, x->reports, (size_t)count);
        x->report_count = 0;
        pthread_mutex_unlock(&x->lock);
        if (count == 0)
            return;
        for (int i = 0; i < count; i++) {
            x->callback_state = taken[i];
            x->callback(slot);
        }
    }
}

static void *engine_loop(void *unused)
{
    (void)unused;
    struct slot **pending = calloc((size_t)opt.concurrency, sizeof *pending);
    struct slot **batch = calloc((size_t)opt.concurrency, sizeof *batch);
    for (;;) {
        pthread_mutex_lock(&handoff.commands_lock);
        long count = handoff.command_count;
        memcpy(pending, handoff.commands, (size_t)count * sizeof *pending);
        handoff.command_count = 0;
        handoff.loop_waits = 0;
        int stopping = handoff.stopping;
        pthread_mutex_unlock(&handoff.commands_lock);
        for (long i = 0; i < count; i++) {
            if (opt.mode == MODE_XHR)
                xhr_begin(pending[i]);
            curl_multi_add_handle(handoff.multi, pending[i]->easy);
        }
        if (stopping)
            break;

        int running = 0, queued = 0;
        long finished_now = 0;
        curl_multi_perform(handoff.multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(handoff.multi, &queued))) {
            if (message->msg != CURLMSG_DONE)
                continue;
            CURL *easy = message->easy_handle;
            struct slot *slot;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
            if (opt.mode == MODE_XHR) {
                CURLcode result = message->data.result;
                slot->version = version_of(easy);
                slot->connects = connects_of(easy);
                curl_multi_remove_handle(handoff.multi, easy);
                xhr_end(slot, result);
                continue;
            }
            slot->result = message->data.result;
            slot->status = status_of(easy);
            slot->version = version_of(easy);
            slot->connects = connects_of(easy);
            curl_multi_remove_handle(handoff.multi, easy);
            batch[finished_now++] = slot;
        }
        if (finished_now > 0 || xhr_due_count > 0) {
            /* The callback thread sleeps only on an empty queue: wake it only then (after
             * unlocking, so it does not wake only to wait for the lock). */
            pthread_mutex_lock(&handoff.done_lock);
            int was_empty = handoff.done_count == 0;
            if (opt.mode == MODE_XHR) {
                xhr_hand_over();
            } else {
                memcpy(handoff.done + handoff.done_count, batch, (size_t)finished_now * sizeof *batch);
                handoff.done_count += finished_now;
            }
            pthread_mutex_unlock(&handoff.done_lock);
            if (was_empty)
                pthread_cond_signal(&handoff.done_posted);
            /* Nothing left in flight: let the callback thread run first (where it shares
             * this core), so it posts while the engine is busy, without a wake-up. */
            if (running == 0)
                sched_yield();
        }
        pthread_mutex_lock(&handoff.commands_lock);
        int waits = handoff.loop_waits = handoff.command_count == 0;
        pthread_mutex_unlock(&handoff.commands_lock);
        if (waits)
            curl_multi_poll(handoff.multi, NULL, 0, 1000, NULL);
    }
    free(pending);
    free(batch);
    return NULL;
}

/* Returns once every started slot is retired (finished with no request left to make). */
static void *callback_loop(void *unused)
{
    (void)unused;
    struct slot **batch = calloc((size_t)opt.concurrency, sizeof *batch);
    while (handoff.in_flight > 0) {
        pthread_mutex_lock(&handoff.done_lock);
        while (handoff.done_count == 0)
            pthread_cond_wait(&handoff.done_posted, &handoff.done_lock);
        long count = handoff.done_count;
        memcpy(batch, handoff.done, (size_t)count * sizeof *batch);
        handoff.done_count = 0;
        if (opt.mode == MODE_XHR)
            for (long i = 0; i < count; i++)
                batch[i]->xhr->queued = 0;
        pthread_mutex_unlock(&handoff.done_lock);
        for (long i = 0; i < count; i++) {
            struct slot *slot = batch[i];
            if (opt.mode == MODE_XHR) {
                xhr_deliver(slot);
                continue;
            }
            finish(end_request(slot, slot->result), slot->status, slot->received, slot->version,
                   slot->connects);
            if (claim()) {
                start_request(slot);
                post_start(slot);
            } else {
                handoff.in_flight--;
            }
        }
    }
    free(batch);
    return NULL;
}

/* Xhr mode: the slot's request object, and libcurl's callbacks pointed at it. */
static void xhr_set_up(struct slot *slot)
{
    slot->xhr = calloc(1, sizeof *slot->xhr);
    if (!slot->xhr) {
        fprintf(stderr, "curl-bench: out of memory\n");
        exit(1);
    }
    pthread_mutex_init(&slot->xhr->lock, NULL);
    slot->xhr->content_length = -1;
    slot->xhr->callback = xhr_on_state;
    curl_easy_setopt(slot->easy, CURLOPT_HEADERFUNCTION, xhr_header);
    curl_easy_setopt(slot->easy, CURLOPT_HEADERDATA, slot);
    curl_easy_setopt(slot->easy, CURLOPT_WRITEFUNCTION, xhr_write);
}

static void run_handoff(void)
{
    handoff.multi = new_multi();
    handoff.commands = calloc((size_t)opt.concurrency, sizeof *handoff.commands);
    handoff.done = calloc((size_t)opt.concurrency, sizeof *handoff.done);
    struct slot *slots = calloc((size_t)opt.concurrency, sizeof *slots);
    long claimed = 0;
    if (opt.mode == MODE_XHR)
        xhr_due = calloc((size_t)opt.concurrency, sizeof *xhr_due);
    for (long i = 0; i < opt.concurrency; i++) {
        set_up(&slots[i]);
        if (opt.mode == MODE_XHR)
            xhr_set_up(&slots[i]);
        if (claim())
            claimed++;
    }
    handoff.in_flight = claimed; /* before the callback thread reads it */
    pthread_t engine, callbacks;
    if (pthread_create(&engine, NULL, engine_loop, NULL) != 0 ||
        pthread_create(&callbacks, NULL, callback_loop, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(1);
    }
    for (long i = 0; i < claimed; i++) {
        if (opt.mode == MODE_XHR) {
            if (!xhr_open(&slots[i], "GET", opt.url) || !xhr_send(&slots[i])) {
                fprintf(stderr, "curl-bench: open or send refused\n");
                exit(1);
            }
            continue;
        }
        start_request(&slots[i]);
        post_start(&slots[i]);
    }

    /* Nothing is in flight once the callback thread returns: stop the engine. */
    pthread_join(callbacks, NULL);
    pthread_mutex_lock(&handoff.commands_lock);
    handoff.stopping = 1;
    pthread_mutex_unlock(&handoff.commands_lock);
    curl_multi_wakeup(handoff.multi);
    pthread_join(engine, NULL);

    for (long i = 0; i < opt.concurrency; i++) {
        curl_easy_cleanup(slots[i].easy);
        struct xhr *x = slots[i].xhr;
        if (x) {
            pthread_mutex_destroy(&x->lock);
            free(x->head);
            free(x->body);
            free(x->lines);
            free(x);
        }
    }
    free(xhr_due);
    curl_multi_cleanup(handoff.multi);
    free(slots);
    free(handoff.commands);
    free(handoff.done);
}

/* ---- Command line ---- */

static void usage(const char *problem)
{
    fprintf(stderr,
            "%s\nusage: curl-bench --workload NAME --url URL [--mode async|threads|handoff|xhr] "
            "[--concurrency N] [--requests N] [--expect-bytes N] [--post-bytes N] "
            "[--headers N] [--max-seconds S] [--output-file PATH] [--mime-file PATH]... "
            "[--mime-files A,B] [--cacert PATH] [--cert PATH --key PATH] [--pinnedpubkey PINS] [--expect-http-version 1.1|2] "
            "[--header \"NAME: VALUE\"]... [--client NAME]\n",
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
        else if (!strcmp(name, "--mode") && !strcmp(value, "async"))
            opt.mode = MODE_ASYNC;
        else if (!strcmp(name, "--mode") && !strcmp(value, "threads"))
            opt.mode = MODE_THREADS;
        else if (!strcmp(name, "--mode") && !strcmp(value, "handoff"))
            opt.mode = MODE_HANDOFF;
        else if (!strcmp(name, "--mode") && !strcmp(value, "xhr"))
            opt.mode = MODE_XHR;
        else if (!strcmp(name, "--concurrency"))
            opt.concurrency = atol(value) > 0 ? atol(value) : 1;
        else if (!strcmp(name, "--requests"))
            opt.requests = atol(value);
        else if (!strcmp(name, "--expect-bytes"))
            opt.expect_bytes = atol(value);
        else if (!strcmp(name, "--post-bytes"))
            opt.post_bytes = atol(value);
        else if (!strcmp(name, "--headers") && atol(value) >= 0
                 && atol(value) <= (long)(sizeof request_headers / sizeof *request_headers))
            opt.headers = atol(value);
        else if (!strcmp(name, "--max-seconds") && atof(value) > 0)
            opt.max_seconds = atof(value);
        else if (!strcmp(name, "--cacert") && value[0] && access(value, R_OK) == 0)
            ca_file = value;
        else if (!strcmp(name, "--cert") && value[0] && access(value, R_OK) == 0)
            cert_file = value;
        else if (!strcmp(name, "--key") && value[0] && access(value, R_OK) == 0)
            key_file = value;
        else if (!strcmp(name, "--pinnedpubkey") && value[0])
            pinned_keys = value;
        else if (!strcmp(name, "--expect-http-version") && !strcmp(value, "1.1"))
            expect_version = CURL_HTTP_VERSION_1_1;
        else if (!strcmp(name, "--expect-http-version") && !strcmp(value, "2"))
            expect_version = CURL_HTTP_VERSION_2_0;
        else if (!strcmp(name, "--output-file") && value[0])
            output_path = value;
        else if (!strcmp(name, "--header") && strchr(value, ':') && value[0] != ':'
                 && extra_header_count < MAX_EXTRA_HEADERS)
            extra_headers[extra_header_count++] = value;
        else if (!strcmp(name, "--mime-file") && value[0] && mime_file_count < MAX_MIME_FILES)
            mime_files[mime_file_count++] = value;
        else if (!strcmp(name, "--mime-files") && value[0]) {
            char *list = strdup(value), *rest = list, *path;
            while ((path = strsep(&rest, ",")))
                if (path[0] && mime_file_count < MAX_MIME_FILES)
                    mime_files[mime_file_count++] = path;
                else
                    usage("--mime-files needs paths separated by commas (at most 16 files in all)");
        }
        else
            usage("unknown option or bad value");
    }
    if (!opt.url || !opt.workload)
        usage("--url and --workload are required");
    if (output_path && opt.concurrency != 1)
        usage("--output-file needs --concurrency 1 (one file, one request at a time)");
    if (mime_file_count > 0 && opt.post_bytes > 0)
        usage("--mime-file and --post-bytes exclude each other (the form is the body)");
    for (int i = 0; i < mime_file_count; i++) {
        struct stat info;
        if (stat(mime_files[i], &info) != 0 || !S_ISREG(info.st_mode)) {
            fprintf(stderr, "curl-bench: %s is not a readable file\n", mime_files[i]);
            exit(64);
        }
        mime_bytes += (long)info.st_size;
    }
    if (!opt.client)
        opt.client = opt.mode == MODE_HANDOFF ? "libcurl-handoff" : opt.mode == MODE_XHR ? "xhr-in-c" : "libcurl";

    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (long i = 0; i < opt.headers; i++)
        header_list = curl_slist_append(header_list, request_headers[i]);
    for (int i = 0; i < extra_header_count; i++)
        header_list = curl_slist_append(header_list, extra_headers[i]);
    if (opt.headers < 2) { /* the list's second line is its User-Agent */
        char line[128];
        snprintf(line, sizeof line, "User-Agent: curl-bench/1.0 libcurl/%s", curl_version_info(CURLVERSION_NOW)->version);
        header_list = curl_slist_append(header_list, line);
    }
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

    if (opt.mode == MODE_THREADS)
        run_threads();
    else if (opt.mode == MODE_HANDOFF || opt.mode == MODE_XHR)
        run_handoff();
    else
        run_multi();
    report(0, NULL);
    if (output_path)
        unlink(output_path);
    curl_global_cleanup();
    return 0;
}
