// SPDX-License-Identifier: MIT
// The transport: report spool entries sent with libcurl, with retries, backoff and a stop
// deadline, by one pass at a time (xqforge upload) or by the Uploader's thread during a run.
// The spool itself (entries, their checks) is upload_spool.c; the contract is in upload.h.
#define _GNU_SOURCE // O_NOFOLLOW
#include "upload.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "upload_spool.h"

#ifndef XQFORGE_VERSION
#define XQFORGE_VERSION "0"
#endif

enum { SNIPPET_MAX = 160 }; // bytes of an error reply kept for the log

// The names job files and `xqforge upload --method` use; also part of a destination id, so a
// rename would make every spooled entry look undelivered.
static const char *const METHOD_NAMES[UPLOAD_METHOD_NB] = {"post", "put", "multipart"};

const char *upload_strerror(UploadStatus st)
{
    static const char *const text[UPLOAD_STATUS_NB] = {
        "ok",
        "out of memory",
        "spool or file I/O error",
        "no usable token",
        "the server refused the upload",
        "TLS failure (certificate or handshake)",
        "still failing after the retries",
        "libcurl error",
        "malformed, planted or tampered spool entry",
        "another process is draining the spool",
        "bad argument",
        "the spool is not yours alone (owner or mode)"};
    return (unsigned)st < UPLOAD_STATUS_NB ? text[st] : "unknown status";
}

const char *upload_method_name(UploadMethod m)
{
    return (unsigned)m < UPLOAD_METHOD_NB ? METHOD_NAMES[m] : "?";
}

void upload_policy_default(UploadPolicy *p, const char *spool_dir)
{
    memset(p, 0, sizeof *p);
    snprintf(p->spool_dir, sizeof p->spool_dir, "%s", spool_dir ? spool_dir : "spool");
    p->attempts = 5;
    p->backoff_s = 1;
    p->backoff_max_s = 60;
    p->retry_after_max_s = 60;
    p->log = stderr;
}

void upload_target_default(UploadTarget *t)
{
    memset(t, 0, sizeof *t);
    t->method = UPLOAD_POST;
    t->connect_timeout_s = 10;
    t->timeout_s = 60;
}

// Retried: what may pass by itself (network, timeouts, an overloaded or restarting server).
// Final: what only a person can fix (certificates, a refused request); retrying those would
// hold the pass for nothing and hammer the server.
UploadVerdict upload_classify(int curl_code, long http_status)
{
    switch ((CURLcode)curl_code) {
    case CURLE_OK: break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3: return UPLOAD_RETRY;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED: return UPLOAD_FAIL_TLS;
    default: return UPLOAD_FAIL_OTHER;
    }
    if (http_status >= 200 && http_status < 300)
        return UPLOAD_DONE;
    if (http_status == 408 || http_status == 429 || (http_status >= 500 && http_status < 600))
        return UPLOAD_RETRY;
    return UPLOAD_FAIL_HTTP;
}

// Jitter spreads the retries of many runs that lost the same server at the same moment.
double upload_backoff(const UploadPolicy *p, int retry, double jitter)
{
    double base = p->backoff_s;
    // Doubling stops at the cap, so a large retry number cannot overflow to infinity.
    for (int i = 1; i < retry && base < p->backoff_max_s; i++)
        base *= 2;
    if (base > p->backoff_max_s)
        base = p->backoff_max_s;
    if (!(jitter >= 0 && jitter < 1))
        jitter = 0;
    return base / 2 + jitter * base / 2;
}

double upload_retry_wait(const UploadPolicy *p, int retry, double jitter, double retry_after_s,
                         bool *capped)
{
    *capped = false;
    if (!(retry_after_s >= 0)) // none (negative or NaN): our own backoff
        return upload_backoff(p, retry, jitter);
    double cap = p->retry_after_max_s > 0 ? p->retry_after_max_s : 0;
    if (retry_after_s > cap) {
        *capped = true;
        return cap;
    }
    return retry_after_s;
}

/// Reads a whole file of at most max bytes into a NUL-terminated heap buffer.
static char *slurp(const char *path, size_t max, size_t *len)
{
    return spool_slurp_fd(open(path, O_RDONLY | O_CLOEXEC), max, len);
}

UploadStatus upload_token_load(const UploadTarget *t, char *buf, size_t len, char *why,
                               size_t why_len)
{
    buf[0] = '\0';
    const char *src;
    char *owned = NULL;
    if (t->token_env[0]) {
        src = getenv(t->token_env);
        if (!src || !src[0])
            return upload_fail(why, why_len, UPLOAD_ERR_TOKEN,
                               "token variable %s is unset or empty", t->token_env);
    } else if (t->token_file[0]) {
        // As ssh does with keys: a token others can read is refused (it is already leaked).
        struct stat sb;
        if (stat(t->token_file, &sb) == 0 && (sb.st_mode & 077))
            return upload_fail(why, why_len, UPLOAD_ERR_TOKEN,
                               "token file %s can be read by others (mode %03o): chmod 600 it",
                               t->token_file, (unsigned)(sb.st_mode & 0777));
        size_t n;
        if (!(owned = slurp(t->token_file, UPLOAD_TOKEN_MAX, &n)))
            return upload_fail(why, why_len, UPLOAD_ERR_TOKEN, "token file %s: %s", t->token_file,
                               strerror(errno ? errno : EIO));
        src = owned;
    } else {
        return UPLOAD_OK;
    }
    size_t n = strlen(src);
    while (n > 0 && isspace((unsigned char)src[n - 1]))
        n--;
    bool ok = n > 0 && n < len;
    for (size_t i = 0; ok && i < n; i++)
        ok = src[i] >= 0x20 && src[i] != 0x7f; // a line break would forge headers
    if (ok)
        snprintf(buf, len, "%.*s", (int)n, src);
    free(owned);
    if (!ok)
        return upload_fail(why, why_len, UPLOAD_ERR_TOKEN,
                           "the token (from %s) is empty, too long or has control characters",
                           t->token_env[0] ? t->token_env : t->token_file);
    return UPLOAD_OK;
}

// Queries often carry keys (?token=...), and user info carries passwords: neither is logged.
void upload_url_for_log(const char *url, char *buf, size_t len)
{
    const char *scheme = strstr(url, "://");
    const char *auth = scheme ? scheme + 3 : url;
    size_t host_end = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', host_end);
    const char *host = at ? at + 1 : auth;
    size_t rest = strcspn(host, "?#");
    snprintf(buf, len, "%.*s%.*s", (int)(auth - url), url, (int)rest, host);
}

UploadStatus upload_url_check(const char *url, char *why, size_t why_len)
{
    char shown[UPLOAD_TEXT_MAX];
    upload_url_for_log(url, shown, sizeof shown);
    size_t n = strnlen(url, UPLOAD_TEXT_MAX);
    if (n == 0 || n >= UPLOAD_TEXT_MAX)
        return upload_fail(why, why_len, UPLOAD_ERR_ARG, "a URL is empty or too long");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
            return upload_fail(why, why_len, UPLOAD_ERR_ARG, "'%s': a space or control character",
                               shown);
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return upload_fail(why, why_len, UPLOAD_ERR_ARG, "'%s' is not an http:// or https:// URL",
                           shown);
    const char *auth = strstr(url, "://") + 3;
    if (memchr(auth, '@', strcspn(auth, "/?#")))
        return upload_fail(why, why_len, UPLOAD_ERR_ARG,
                           "'%s' has credentials in it (user:password@): give the token with "
                           "token_env or token_file instead",
                           shown);
    return UPLOAD_OK;
}

UploadStatus upload_target_check(const UploadTarget *t, char *why, size_t why_len)
{
    if (t->url_count < 1 || t->url_count > UPLOAD_URLS_MAX)
        return upload_fail(why, why_len, UPLOAD_ERR_ARG, "%d URLs: give 1 to %d", t->url_count,
                           UPLOAD_URLS_MAX);
    if ((unsigned)t->method >= UPLOAD_METHOD_NB || t->connect_timeout_s < 1 || t->timeout_s < 1)
        return upload_fail(why, why_len, UPLOAD_ERR_ARG, "bad method or timeouts");
    for (int i = 0; i < t->url_count; i++) {
        UploadStatus st = upload_url_check(t->urls[i], why, why_len);
        if (st != UPLOAD_OK)
            return st;
    }
    return UPLOAD_OK;
}

// ---- Requests ------------------------------------------------------------------------------

typedef struct Uploader Uploader;

/// One pass's context: the policy and target, and the thread's stop/deadline when run by an
/// Uploader.
typedef struct {
    const UploadPolicy *pol;
    const UploadTarget *target; // where to, from the caller: never from the spool
    Uploader *u;                // NULL: a pass in the caller's thread (xqforge upload)
    UploadStats *stats;
    uint64_t rng;
} Pass;

/// The start of a reply body, one printable line: a hostile server cannot flood or forge the
/// log through it.
typedef struct {
    char text[SNIPPET_MAX + 1];
    size_t len;
} Snippet;

static size_t on_reply(char *data, size_t size, size_t n, void *ctx)
{
    // The reply body is only for the error message: keep its start, drop the rest.
    Snippet *s = ctx;
    for (size_t i = 0; i < size * n && s->len < SNIPPET_MAX; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        if (c == ' ' && (s->len == 0 || s->text[s->len - 1] == ' '))
            continue;
        s->text[s->len++] = (char)c;
    }
    s->text[s->len] = '\0';
    return size * n;
}

/// What an error reply says, for the log: an HTML page's title, else the text.
static const char *reply_text(Snippet *s)
{
    char *t = strstr(s->text, "<title>"), *end = t ? strstr(t, "</title>") : NULL;
    if (t && end) {
        *end = '\0';
        return t + 7;
    }
    return s->text;
}

/// One HTTP request, built by deliver_to from the caller's target and a trusted entry.
typedef struct {
    const char *url;          // where this request goes
    const char *entry_dir;    // the spool entry
    const char *const *files; // names in entry_dir
    int file_count;           // POST, PUT: 1; multipart: all
    UploadMethod method;
    const UploadTarget *target;
    const char *token, *key;
    long timeout_ms;            // 0: the target's
    bool (*expired)(void *ctx); // polled during the transfer: true aborts it
    void *ctx;
} Request;

/// What a request came to: send_with_retries classifies it and logs error.
typedef struct {
    int curl_code;
    long status;
    double retry_after_s; // -1: none
    char error[CURL_ERROR_SIZE + SNIPPET_MAX + 64];
} Outcome;

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    const Request *rq = ctx;
    return rq->expired && rq->expired(rq->ctx); // non-zero aborts the transfer
}

/// Content-Type of a spooled file, from its name.
static const char *file_type(const char *name)
{
    return strstr(name, ".json")   ? "application/json"
           : strstr(name, ".html") ? "text/html; charset=utf-8"
                                   : "application/octet-stream";
}

// Multipart parts are read from the open files, not slurped: a report may be large, and
// libcurl may rewind a part (part_seek) when it has to resend it.
static size_t part_read(char *buf, size_t size, size_t n, void *arg)
{
    size_t got = fread(buf, size, n, arg);
    return got == 0 && ferror((FILE *)arg) ? CURL_READFUNC_ABORT : got;
}

static int part_seek(void *arg, curl_off_t offset, int origin)
{
    return fseeko(arg, (off_t)offset, origin) == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

/// A spooled file opened to send (a plain file of ours, never a link), with its size.
static FILE *open_part(const char *path, curl_off_t *size)
{
    struct stat sb;
    int fd = spool_open_own(path, &sb);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f && fd >= 0)
        close(fd);
    *size = f ? (curl_off_t)sb.st_size : 0;
    return f;
}

/// One attempt of rq, with a fresh handle each time (no state survives a failed attempt, and
/// no handle is shared between threads).
static void perform(const Request *rq, Outcome *out)
{
    char path[UPLOAD_TEXT_MAX * 2], auth[UPLOAD_TOKEN_MAX + 32], key[256], cerr[CURL_ERROR_SIZE];
    Snippet snip = {"", 0};
    *out = (Outcome){CURLE_OK, 0, -1, ""};
    cerr[0] = '\0';
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    curl_mime *mime = NULL;
    FILE *body[UPLOAD_FILES_MAX] = {NULL};
    char *post = NULL;
    if (!h) {
        out->curl_code = CURLE_OUT_OF_MEMORY;
        snprintf(out->error, sizeof out->error, "cannot create a libcurl handle");
        return;
    }
    // The same key on every retry lets a server drop the copy of a request whose reply we lost.
    // An empty "Expect:" stops libcurl waiting for a 100-continue many servers never send.
    snprintf(key, sizeof key, "Idempotency-Key: %s", rq->key);
    hdr = curl_slist_append(hdr, key);
    hdr = curl_slist_append(hdr, "Expect:");
    if (rq->token[0]) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", rq->token);
        hdr = curl_slist_append(hdr, auth);
        memset(auth, 0, sizeof auth); // the slist holds its own copy; ours goes at once
    }
    snprintf(path, sizeof path, "%s/%s", rq->entry_dir, rq->files[0]);
    char ctype[96];
    snprintf(ctype, sizeof ctype, "Content-Type: %s", file_type(rq->files[0]));
    CURLcode rc = CURLE_OK;
    // POST sends one file as the body; PUT streams one file; multipart streams them all.
    if (rq->method == UPLOAD_POST) {
        size_t len = 0;
        struct stat sb;
        if (!(post = spool_slurp_fd(spool_open_own(path, &sb), UPLOAD_BODY_MAX, &len)))
            rc = CURLE_READ_ERROR;
        hdr = curl_slist_append(hdr, ctype);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (rq->method == UPLOAD_PUT) {
        curl_off_t size;
        if (!(body[0] = open_part(path, &size)))
            rc = CURLE_READ_ERROR;
        hdr = curl_slist_append(hdr, ctype);
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READDATA, body[0]);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, size);
    } else {
        mime = curl_mime_init(h);
        for (int i = 0; mime && i < rq->file_count && rc == CURLE_OK; i++) {
            curl_mimepart *part = curl_mime_addpart(mime);
            snprintf(path, sizeof path, "%s/%s", rq->entry_dir, rq->files[i]);
            curl_off_t size;
            if (!(body[i] = open_part(path, &size)) || !part ||
                curl_mime_name(part, rq->files[i]) != CURLE_OK ||
                curl_mime_filename(part, rq->files[i]) != CURLE_OK ||
                curl_mime_type(part, file_type(rq->files[i])) != CURLE_OK ||
                curl_mime_data_cb(part, size, part_read, part_seek, NULL, body[i]) != CURLE_OK)
                rc = CURLE_READ_ERROR;
        }
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    }
    curl_easy_setopt(h, CURLOPT_URL, rq->url);
    // Only http(s), never a redirect, and always verified TLS: the token must not reach a
    // host or scheme the user did not name.
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); // a redirect would re-send the token
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (rq->target->ca_file[0])
        curl_easy_setopt(h, CURLOPT_CAINFO, rq->target->ca_file);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L * rq->target->connect_timeout_s);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                     rq->timeout_ms > 0 ? rq->timeout_ms : 1000L * rq->target->timeout_s);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "xqforge/" XQFORGE_VERSION);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_reply);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &snip);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    // A transfer started before the stop must still end by the stop's deadline.
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)rq);
    if (rc == CURLE_OK)
        rc = curl_easy_perform(h);
    out->curl_code = rc;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
    curl_off_t ra = -1;
    if (rc == CURLE_OK && curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
        out->retry_after_s = (double)ra;
    if (rc == CURLE_READ_ERROR)
        snprintf(out->error, sizeof out->error, "cannot read %.400s", path);
    else if (rc != CURLE_OK)
        snprintf(out->error, sizeof out->error, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
    else
        snprintf(out->error, sizeof out->error, "HTTP %ld%s%s", out->status, snip.len ? ": " : "",
                 reply_text(&snip));
    // The token lives in the header list: wipe it before freeing.
    for (struct curl_slist *s = hdr; s; s = s->next)
        if (!strncmp(s->data, "Authorization:", 14))
            memset(s->data, 0, strlen(s->data));
    curl_slist_free_all(hdr);
    curl_mime_free(mime);
    curl_easy_cleanup(h);
    for (int i = 0; i < UPLOAD_FILES_MAX; i++)
        if (body[i])
            fclose(body[i]);
    free(post);
}

// ---- The thread's clock and waits ---------------------------------------------------------

enum { REFUSED_MAX = 32 }; // refused entries remembered per run; more are simply asked again

struct Uploader {
    UploadPolicy pol;
    UploadTarget target;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool kicked, stopping;
    double deadline; // monotonic seconds; meaningful once stopping
    UploadStats stats;
    // Entries refused for good (4xx, TLS, no token, not trusted) earlier in this process:
    // later passes of the thread leave them to the next run or `xqforge upload` rather than
    // ask (or say) again.
    char refused[REFUSED_MAX][SPOOL_NAME_MAX];
    int refused_n; // touched by the upload thread only
};

/// The monotonic clock: deadlines must not move when the wall clock is set.
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/// Seconds this pass may still spend (infinity while not stopping).
static double time_left(Pass *p)
{
    if (!p->u)
        return INFINITY;
    pthread_mutex_lock(&p->u->lock);
    double left = p->u->stopping ? p->u->deadline - mono_now() : INFINITY;
    pthread_mutex_unlock(&p->u->lock);
    return left;
}

/// Waits s seconds; false (at once) when the pass would run past its stop deadline.
static bool pause_for(Pass *p, double s)
{
    if (!p->u) {
        struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        return true;
    }
    double until = mono_now() + s;
    pthread_mutex_lock(&p->u->lock);
    bool ok = true;
    for (;;) {
        if (p->u->stopping && until > p->u->deadline) {
            ok = false;
            break;
        }
        double now = mono_now();
        if (now >= until)
            break;
        struct timespec ts = {(time_t)until, (long)((until - floor(until)) * 1e9)};
        pthread_cond_timedwait(&p->u->cond, &p->u->lock, &ts);
    }
    pthread_mutex_unlock(&p->u->lock);
    return ok;
}

/// A uniform value in [0, 1) from the pass's own state, so that threads share no generator.
static double jitter(Pass *p)
{
    // xorshift64*: the jitter needs spread, not quality.
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return (double)((p->rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static void logf_(Pass *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(Pass *p, const char *fmt, ...)
{
    if (!p->pol->log)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(p->pol->log, "upload: %s\n", line); // one call: lines from threads do not mix
    fflush(p->pol->log);
}

/// perform's abort test: a transfer in progress ends when the stop's grace time runs out.
static bool pass_expired(void *ctx) { return time_left(ctx) <= 0; }

/// One request with retries. what names it in the log ("report v3 to URL").
static UploadStatus send_with_retries(Pass *p, Request *rq, const char *what)
{
    for (int attempt = 1;; attempt++) {
        double left = time_left(p);
        if (left <= 0)
            return UPLOAD_ERR_TRANSIENT;
        long cap_ms = 1000L * rq->target->timeout_s;
        rq->timeout_ms = isfinite(left) && left * 1000 < cap_ms ? (long)(left * 1000) + 1 : 0;
        Outcome o;
        rq->expired = pass_expired;
        rq->ctx = p;
        perform(rq, &o);
        if (p->stats) {
            p->stats->attempts++;
            p->stats->retries += attempt > 1;
        }
        UploadVerdict v = upload_classify(o.curl_code, o.status);
        if (v == UPLOAD_DONE) {
            logf_(p, "%s: delivered (HTTP %ld, attempt %d)", what, o.status, attempt);
            return UPLOAD_OK;
        }
        if (v != UPLOAD_RETRY) {
            logf_(p, "%s: %s (%s); not retried, kept in the spool", what, o.error,
                  v == UPLOAD_FAIL_TLS    ? "TLS"
                  : v == UPLOAD_FAIL_HTTP ? "refused"
                                          : "libcurl");
            return v == UPLOAD_FAIL_TLS    ? UPLOAD_ERR_TLS
                   : v == UPLOAD_FAIL_HTTP ? UPLOAD_ERR_HTTP
                                           : UPLOAD_ERR_CURL;
        }
        if (attempt >= p->pol->attempts) {
            logf_(p, "%s: %s; attempt %d/%d, giving up for now (kept in the spool)", what, o.error,
                  attempt, p->pol->attempts);
            return UPLOAD_ERR_TRANSIENT;
        }
        bool capped;
        double wait = upload_retry_wait(p->pol, attempt, jitter(p), o.retry_after_s, &capped);
        char said[96] = "";
        if (capped)
            snprintf(said, sizeof said, " (Retry-After %.0f s, capped at %.0f s)", o.retry_after_s,
                     wait);
        else if (o.retry_after_s >= 0)
            snprintf(said, sizeof said, " (Retry-After)");
        logf_(p, "%s: %s; attempt %d/%d, retry in %.2f s%s", what, o.error, attempt,
              p->pol->attempts, wait, said);
        if (!pause_for(p, wait)) {
            logf_(p, "%s: out of time for retries; kept in the spool", what);
            return UPLOAD_ERR_TRANSIENT;
        }
    }
}

// ---- Delivering one entry ------------------------------------------------------------------

/// Whether a destination took the entry in an earlier pass: each URL gets a report once,
/// even when another URL of the target keeps failing.
static bool was_delivered(const SpoolEntry *e, uint64_t id)
{
    for (int i = 0; i < e->delivered_count; i++)
        if (e->delivered[i] == id)
            return true;
    return false;
}

/// One URL of the target: every file PUT to URL/NAME, or one POST.
static UploadStatus deliver_to(Pass *p, const char *dir, const SpoolEntry *e, const char *url_base,
                               const char *token)
{
    const UploadTarget *t = p->target;
    const char *names[UPLOAD_FILES_MAX];
    for (int f = 0; f < e->file_count; f++)
        names[f] = e->files[f].name;
    char shown[UPLOAD_TEXT_MAX], what[UPLOAD_TEXT_MAX + 400];
    upload_url_for_log(url_base, shown, sizeof shown);
    UploadStatus st = UPLOAD_OK;
    bool put = t->method == UPLOAD_PUT, multi = t->method == UPLOAD_MULTIPART;
    int requests = put ? e->file_count : 1;
    for (int f = 0; f < requests && st == UPLOAD_OK; f++) {
        char url[UPLOAD_TEXT_MAX + SPOOL_NAME_MAX + 2];
        size_t ul = strlen(url_base);
        if (put)
            snprintf(url, sizeof url, "%s%s%s", url_base, ul && url_base[ul - 1] == '/' ? "" : "/",
                     names[f]);
        else
            snprintf(url, sizeof url, "%s", url_base);
        size_t sl = strlen(shown); // the log's URL as the one requested: one '/' before NAME
        snprintf(what, sizeof what, "%s %s%s%s (run %s v%lld)", put ? "PUT" : "POST", shown,
                 put && !(sl && shown[sl - 1] == '/') ? "/" : "", put ? names[f] : "", e->run_id,
                 e->version);
        Request rq = {.url = url,
                      .entry_dir = dir,
                      .files = multi ? names : &names[f],
                      .file_count = multi ? e->file_count : 1,
                      .method = t->method,
                      .target = t,
                      .token = token,
                      .key = e->key};
        st = send_with_retries(p, &rq, what);
    }
    return st;
}

/// What became of an entry in a pass.
typedef enum {
    ENTRY_DONE,      // every URL of the target took it
    ENTRY_KEPT,      // some failed for now (retried next pass)
    ENTRY_REFUSED,   // a failure retrying soon will not cure (4xx, TLS, no token)
    ENTRY_UNTRUSTED, // planted or tampered: left in place, not sent
} EntryOutcome;

/// Every URL of the pass's target that has not taken the entry yet.
static EntryOutcome entry_deliver(Pass *p, const char *dir, const char *name)
{
    SpoolEntry e;
    char why[512], token[UPLOAD_TOKEN_MAX];
    // Checked again just before sending: the pass's first look may be minutes old.
    if (spool_entry_load(dir, name, &e, why, sizeof why) != UPLOAD_OK) {
        logf_(p, "%s: not trusted, left in place and not sent: %s", name, why);
        return ENTRY_UNTRUSTED;
    }
    if (upload_token_load(p->target, token, sizeof token, why, sizeof why) != UPLOAD_OK) {
        logf_(p, "%s: %s; kept in the spool", name, why);
        return ENTRY_REFUSED;
    }
    bool all = true, transient = false;
    for (int i = 0; i < p->target->url_count; i++) {
        const char *url = p->target->urls[i];
        uint64_t id = spool_destination_id(p->target->method, url);
        if (was_delivered(&e, id))
            continue;
        UploadStatus st = deliver_to(p, dir, &e, url, token);
        if (st == UPLOAD_OK && e.delivered_count < UPLOAD_DELIVERED_MAX) {
            e.delivered[e.delivered_count++] = id;
            if (!spool_entry_write(dir, &e))
                logf_(p, "%s: cannot record a delivery: %s", name, strerror(errno));
        }
        all &= st == UPLOAD_OK;
        transient |= st == UPLOAD_ERR_TRANSIENT;
    }
    memset(token, 0, sizeof token);
    return all ? ENTRY_DONE : transient ? ENTRY_KEPT : ENTRY_REFUSED;
}

/// Whether this Uploader already gave up on the entry; NULL (a one-off pass) never has.
static bool refused_before(const Uploader *u, const char *name)
{
    for (int i = 0; u && i < u->refused_n; i++)
        if (!strcmp(u->refused[i], name))
            return true;
    return false;
}

static void remember_refused(Uploader *u, const char *name)
{
    if (u && u->refused_n < REFUSED_MAX && !refused_before(u, name))
        snprintf(u->refused[u->refused_n++], SPOOL_NAME_MAX, "%s", name);
}

/// Which entries of list[0..n) are trusted (spool_entry_load); the others are said once (per
/// Uploader) and counted. NULL when out of memory.
static bool *trusted_entries(Pass *p, struct dirent **list, int n)
{
    bool *ok = calloc((size_t)(n > 0 ? n : 1), sizeof *ok);
    char path[UPLOAD_TEXT_MAX + 320], why[512];
    for (int i = 0; ok && i < n; i++) {
        const char *name = list[i]->d_name;
        snprintf(path, sizeof path, "%s/%s", p->pol->spool_dir, name);
        SpoolEntry e;
        ok[i] = spool_entry_load(path, name, &e, why, sizeof why) == UPLOAD_OK;
        if (ok[i])
            continue;
        if (p->stats)
            p->stats->untrusted++;
        if (!refused_before(p->u, name))
            logf_(p, "%s: not trusted, left in place and not sent: %s", name, why);
        remember_refused(p->u, name);
    }
    return ok;
}

/// Entry i of the pass, trusted: superseded, delivered, or kept.
static void pass_entry(Pass *p, struct dirent **list, const bool *trusted, int i, int n)
{
    const char *name = list[i]->d_name;
    char path[UPLOAD_TEXT_MAX + 320];
    snprintf(path, sizeof path, "%s/%s", p->pol->spool_dir, name);
    size_t len = strlen(name);
    bool newer = false;
    for (int k = i + 1; k < n && !newer; k++)
        newer = trusted[k] && spool_same_run(name, list[k]->d_name);
    if (len > 2 && !strcmp(name + len - 2, "-p") && newer) {
        // A newer report of the same run says everything this one says.
        spool_entry_remove(path);
        if (p->stats)
            p->stats->superseded++;
        return;
    }
    if (time_left(p) <= 0 || refused_before(p->u, name)) {
        if (p->stats)
            p->stats->kept++;
        return;
    }
    EntryOutcome o = entry_deliver(p, path, name);
    if (o == ENTRY_DONE)
        spool_entry_remove(path);
    if (o == ENTRY_REFUSED || o == ENTRY_UNTRUSTED)
        remember_refused(p->u, name);
    if (p->stats) {
        p->stats->delivered += o == ENTRY_DONE;
        p->stats->untrusted += o == ENTRY_UNTRUSTED;
        p->stats->kept += o == ENTRY_KEPT || o == ENTRY_REFUSED;
    }
}

/// One pass: check the spool and target, lock the spool, drop superseded progress entries,
/// deliver the rest in order; entries that are not trusted stay as they are.
static UploadStatus drain_pass(Pass *p)
{
    const char *spool = p->pol->spool_dir;
    char path[UPLOAD_TEXT_MAX + 320], why[UPLOAD_TEXT_MAX + 400];
    struct stat sb;
    if (stat(spool, &sb) != 0 && errno == ENOENT)
        return UPLOAD_OK; // no spool: nothing to do
    UploadStatus st = upload_spool_check(spool, false, why, sizeof why);
    if (st == UPLOAD_OK)
        st = upload_target_check(p->target, why, sizeof why);
    if (st != UPLOAD_OK) {
        logf_(p, "%s; nothing sent", why);
        return st;
    }
    snprintf(path, sizeof path, "%s/.lock", spool);
    int lock = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lock < 0)
        return UPLOAD_ERR_IO;
    if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
        close(lock);
        return UPLOAD_ERR_BUSY;
    }
    struct dirent **list;
    int n = scandir(spool, &list, spool_entry_filter, alphasort);
    bool *trusted = n >= 0 ? trusted_entries(p, list, n) : NULL;
    st = n < 0 ? UPLOAD_ERR_IO : trusted ? UPLOAD_OK : UPLOAD_ERR_NOMEM;
    for (int i = 0; trusted && i < n; i++)
        if (trusted[i])
            pass_entry(p, list, trusted, i, n);
    for (int i = 0; i < n; i++)
        free(list[i]);
    if (n >= 0)
        free(list);
    free(trusted);
    close(lock);
    return st;
}

// curl_global_init is not thread-safe: it runs once, before any request, from whichever
// entry point comes first.
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_start(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

UploadStatus upload_spool_drain(const UploadPolicy *pol, const UploadTarget *t, UploadStats *stats)
{
    pthread_once(&curl_once, curl_start);
    Pass p = {pol, t, NULL, stats, 0};
    p.rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
    return drain_pass(&p);
}

// ---- The thread ----------------------------------------------------------------------------

/// The Uploader's loop: a pass per kick, and a last pass once stopping. Statistics are
/// gathered per pass without the lock and merged under it.
static void *upload_thread(void *arg)
{
    Uploader *u = arg;
    Pass p = {&u->pol, &u->target, u, NULL, (uint64_t)time(NULL) ^ 0x9E3779B97F4A7C15ull};
    pthread_mutex_lock(&u->lock);
    for (;;) {
        while (!u->kicked && !u->stopping)
            pthread_cond_wait(&u->cond, &u->lock);
        bool last = u->stopping;
        u->kicked = false;
        pthread_mutex_unlock(&u->lock);
        UploadStats s = {0};
        p.stats = &s;
        UploadStatus st = drain_pass(&p);
        if (st == UPLOAD_ERR_BUSY)
            logf_(&p, "spool %s is being drained by another process; left to it", u->pol.spool_dir);
        pthread_mutex_lock(&u->lock);
        u->stats.attempts += s.attempts;
        u->stats.retries += s.retries;
        u->stats.delivered += s.delivered;
        u->stats.superseded += s.superseded;
        u->stats.kept = s.kept;           // what the latest pass left
        u->stats.untrusted = s.untrusted; // and refused to touch
        if (last)
            break;
    }
    pthread_mutex_unlock(&u->lock);
    return NULL;
}

Uploader *upload_start(const UploadPolicy *pol, const UploadTarget *t)
{
    pthread_once(&curl_once, curl_start); // here, before any other thread uses libcurl
    Uploader *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->pol = *pol;
    u->target = *t;
    u->kicked = true; // what earlier runs left goes first
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&u->lock, NULL);
    pthread_cond_init(&u->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&u->tid, NULL, upload_thread, u) != 0) {
        pthread_mutex_destroy(&u->lock);
        pthread_cond_destroy(&u->cond);
        free(u);
        return NULL;
    }
    return u;
}

void upload_kick(Uploader *u)
{
    if (!u)
        return;
    pthread_mutex_lock(&u->lock);
    u->kicked = true;
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

void upload_stop(Uploader *u, double grace_s, UploadStats *stats)
{
    if (!u)
        return;
    pthread_mutex_lock(&u->lock);
    u->stopping = true;
    u->deadline = mono_now() + (grace_s > 0 ? grace_s : 0);
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
    pthread_join(u->tid, NULL);
    if (stats)
        *stats = u->stats;
    pthread_mutex_destroy(&u->lock);
    pthread_cond_destroy(&u->cond);
    free(u);
}
