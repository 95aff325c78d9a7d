// SPDX-License-Identifier: MIT
#define _GNU_SOURCE // dirfd, O_DIRECTORY
#include "upload.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

#ifndef XQFORGE_VERSION
#define XQFORGE_VERSION "0"
#endif

enum { SNIPPET_MAX = 160, ENTRIES_MAX = 4096, NAME_MAX_ = 256 };

static const char *const METHOD_NAMES[UPLOAD_METHOD_NB] = {"post", "put", "multipart"};

const char *upload_strerror(UploadStatus st)
{
    static const char *const text[UPLOAD_STATUS_NB] = {"ok",
                                                       "out of memory",
                                                       "spool or file I/O error",
                                                       "no usable token",
                                                       "the server refused the upload",
                                                       "TLS failure (certificate or handshake)",
                                                       "still failing after the retries",
                                                       "libcurl error",
                                                       "malformed spool entry",
                                                       "another process is draining the spool",
                                                       "bad argument"};
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
    p->retry_after_max_s = 600;
    p->log = stderr;
}

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

double upload_backoff(const UploadPolicy *p, int retry, double jitter)
{
    double base = p->backoff_s;
    for (int i = 1; i < retry && base < p->backoff_max_s; i++)
        base *= 2;
    if (base > p->backoff_max_s)
        base = p->backoff_max_s;
    if (!(jitter >= 0 && jitter < 1))
        jitter = 0;
    return base / 2 + jitter * base / 2;
}

static UploadStatus failf(char *why, size_t len, UploadStatus st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static UploadStatus failf(char *why, size_t len, UploadStatus st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && len)
        vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return st;
}

/// Reads a whole file of at most max bytes into a NUL-terminated heap buffer.
static char *slurp(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size <= max &&
        (buf = malloc((size_t)sb.st_size + 1))) {
        *len = fread(buf, 1, (size_t)sb.st_size, f);
        buf[*len] = '\0';
        if (*len != (size_t)sb.st_size) {
            free(buf);
            buf = NULL;
        }
    } else if (!buf) {
        errno = errno ? errno : EFBIG;
    }
    fclose(f);
    return buf;
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
            return failf(why, why_len, UPLOAD_ERR_TOKEN, "token variable %s is unset or empty",
                         t->token_env);
    } else if (t->token_file[0]) {
        // As ssh does with keys: a token others can read is refused (it is already leaked).
        struct stat sb;
        if (stat(t->token_file, &sb) == 0 && (sb.st_mode & 077))
            return failf(why, why_len, UPLOAD_ERR_TOKEN,
                         "token file %s can be read by others (mode %03o): chmod 600 it",
                         t->token_file, (unsigned)(sb.st_mode & 0777));
        size_t n;
        if (!(owned = slurp(t->token_file, UPLOAD_TOKEN_MAX, &n)))
            return failf(why, why_len, UPLOAD_ERR_TOKEN, "token file %s: %s", t->token_file,
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
        return failf(why, why_len, UPLOAD_ERR_TOKEN,
                     "the token (from %s) is empty, too long or has control characters",
                     t->token_env[0] ? t->token_env : t->token_file);
    return UPLOAD_OK;
}

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

// ---- The spool -----------------------------------------------------------------------------

static bool run_id_ok(const char *s)
{
    if (!s[0] || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return false;
    return true;
}

/// Copies src to dst and flushes it to disk; FNV-1a of the bytes into *hash.
static bool copy_file(const char *src, const char *dst, uint64_t *hash)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    bool ok = in >= 0 && out >= 0;
    char block[65536];
    for (ssize_t n; ok && (n = read(in, block, sizeof block)) != 0;) {
        if (n < 0) {
            ok = errno == EINTR;
            continue;
        }
        *hash = files_fnv(*hash, block, (size_t)n);
        ok = write(out, block, (size_t)n) == n;
    }
    ok = ok && fsync(out) == 0;
    int err = errno;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    errno = err;
    return ok;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static json_t *target_json(const UploadTarget *t)
{
    json_t *urls = json_array(), *done = json_array();
    for (int i = 0; i < t->url_count; i++) {
        json_array_append_new(urls, json_string(t->urls[i]));
        json_array_append_new(done, json_false());
    }
    return json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:i, s:i}", "method",
                     upload_method_name(t->method), "urls", urls, "delivered", done, "token_env",
                     t->token_env, "token_file", t->token_file, "ca_file", t->ca_file,
                     "connect_timeout", t->connect_timeout_s, "timeout", t->timeout_s);
}

static bool write_meta(const char *dir, const json_t *meta)
{
    char path[UPLOAD_TEXT_MAX + 32], tmp[UPLOAD_TEXT_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.meta.json.tmp", dir);
    if (json_dump_file(meta, tmp, JSON_INDENT(2)) != 0)
        return false;
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    bool ok = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    return ok && rename(tmp, path) == 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(dir);
}

UploadStatus upload_spool_add(const char *spool_dir, const UploadTarget *t, const char *run_id,
                              uint64_t version, bool final, const char *const *files, int n,
                              char *why, size_t why_len)
{
    if (!run_id_ok(run_id) || n < 1 || n > UPLOAD_FILES_MAX || t->url_count < 1 ||
        t->url_count > UPLOAD_URLS_MAX)
        return failf(why, why_len, UPLOAD_ERR_ARG, "spool: bad run id, file or URL count");
    if (files_mkdir_p(spool_dir) != 0)
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", spool_dir, strerror(errno));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    static atomic_uint_fast64_t serial;
    char tmp[UPLOAD_TEXT_MAX + 64], dst[UPLOAD_TEXT_MAX + 128], path[UPLOAD_TEXT_MAX + 320];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%llu", spool_dir, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&serial, 1));
    // Sorting names sorts entries by age; the run and the kind are readable without meta.
    snprintf(dst, sizeof dst, "%s/%013lld-%s-%08llu-%c", spool_dir, ms, run_id,
             (unsigned long long)version, final ? 'f' : 'p');
    if (mkdir(tmp, 0777) != 0)
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", tmp, strerror(errno));
    uint64_t hash = FILES_FNV_BASIS;
    json_t *names = json_array();
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, base_name(files[i]));
        if (!copy_file(files[i], path, &hash)) {
            int err = errno;
            json_decref(names);
            remove_tree(tmp);
            return failf(why, why_len, UPLOAD_ERR_IO, "spool: cannot copy %s: %s", files[i],
                         strerror(err));
        }
        json_array_append_new(names, json_string(base_name(files[i])));
    }
    char key[160];
    snprintf(key, sizeof key, "xqforge-%s-%llu-%016llx", run_id, (unsigned long long)version,
             (unsigned long long)hash);
    json_t *meta = target_json(t);
    json_object_set_new(meta, "run_id", json_string(run_id));
    json_object_set_new(meta, "version", json_integer((json_int_t)version));
    json_object_set_new(meta, "final", json_boolean(final));
    json_object_set_new(meta, "idempotency_key", json_string(key));
    json_object_set_new(meta, "files", names);
    bool ok = write_meta(tmp, meta) && rename(tmp, dst) == 0;
    int err = errno;
    json_decref(meta);
    if (!ok) {
        remove_tree(tmp);
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", dst, strerror(err));
    }
    return UPLOAD_OK;
}

static int entry_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

int upload_spool_count(const char *spool_dir)
{
    struct dirent **list;
    int n = scandir(spool_dir, &list, entry_filter, alphasort);
    for (int i = 0; i < n; i++)
        free(list[i]);
    if (n >= 0)
        free(list);
    return n < 0 ? 0 : n;
}

// ---- Requests ------------------------------------------------------------------------------

typedef struct Uploader Uploader;

/// One pass's context: the policy, and the thread's stop/deadline when run by an Uploader.
typedef struct {
    const UploadPolicy *pol;
    Uploader *u; // NULL: a pass in the caller's thread (xqforge upload)
    UploadStats *stats;
    uint64_t rng;
} Pass;

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

static void perform(const Request *rq, Outcome *out)
{
    char path[UPLOAD_TEXT_MAX * 2], auth[UPLOAD_TOKEN_MAX + 32], key[256], cerr[CURL_ERROR_SIZE];
    Snippet snip = {"", 0};
    *out = (Outcome){CURLE_OK, 0, -1, ""};
    cerr[0] = '\0';
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    curl_mime *mime = NULL;
    FILE *body = NULL;
    char *post = NULL;
    if (!h) {
        out->curl_code = CURLE_OUT_OF_MEMORY;
        snprintf(out->error, sizeof out->error, "cannot create a libcurl handle");
        return;
    }
    snprintf(key, sizeof key, "Idempotency-Key: %s", rq->key);
    hdr = curl_slist_append(hdr, key);
    hdr = curl_slist_append(hdr, "Expect:");
    if (rq->token[0]) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", rq->token);
        hdr = curl_slist_append(hdr, auth);
        memset(auth, 0, sizeof auth);
    }
    snprintf(path, sizeof path, "%s/%s", rq->entry_dir, rq->files[0]);
    const char *type = strstr(rq->files[0], ".json")   ? "application/json"
                       : strstr(rq->files[0], ".html") ? "text/html; charset=utf-8"
                                                       : "application/octet-stream";
    char ctype[96];
    snprintf(ctype, sizeof ctype, "Content-Type: %s", type);
    CURLcode rc = CURLE_OK;
    if (rq->method == UPLOAD_POST) {
        size_t len = 0;
        if (!(post = slurp(path, UPLOAD_BODY_MAX, &len)))
            rc = CURLE_READ_ERROR;
        hdr = curl_slist_append(hdr, ctype);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (rq->method == UPLOAD_PUT) {
        struct stat sb;
        if (!(body = fopen(path, "rb")) || fstat(fileno(body), &sb) != 0)
            rc = CURLE_READ_ERROR;
        hdr = curl_slist_append(hdr, ctype);
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READDATA, body);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)(body ? sb.st_size : 0));
    } else {
        mime = curl_mime_init(h);
        for (int i = 0; mime && i < rq->file_count; i++) {
            curl_mimepart *part = curl_mime_addpart(mime);
            snprintf(path, sizeof path, "%s/%s", rq->entry_dir, rq->files[i]);
            curl_mime_name(part, rq->files[i]);
            if (curl_mime_filedata(part, path) != CURLE_OK)
                rc = CURLE_READ_ERROR;
        }
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    }
    curl_easy_setopt(h, CURLOPT_URL, rq->url);
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
    if (body)
        fclose(body);
    free(post);
}

// ---- The thread's clock and waits ---------------------------------------------------------

enum { REFUSED_MAX = 32 }; // refused entries remembered per run; more are simply asked again

struct Uploader {
    UploadPolicy pol;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool kicked, stopping;
    double deadline; // monotonic seconds; meaningful once stopping
    UploadStats stats;
    // Entries refused for good (4xx, TLS, no token) earlier in this process: later passes of
    // the thread leave them to the next run or `xqforge upload` rather than ask again.
    char refused[REFUSED_MAX][NAME_MAX_];
    int refused_n; // touched by the upload thread only
};

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
        double wait = upload_backoff(p->pol, attempt, jitter(p));
        bool server = o.retry_after_s >= 0;
        if (server)
            wait = o.retry_after_s < p->pol->retry_after_max_s ? o.retry_after_s
                                                               : p->pol->retry_after_max_s;
        logf_(p, "%s: %s; attempt %d/%d, retry in %.2f s%s", what, o.error, attempt,
              p->pol->attempts, wait, server ? " (Retry-After)" : "");
        if (!pause_for(p, wait)) {
            logf_(p, "%s: out of time for retries; kept in the spool", what);
            return UPLOAD_ERR_TRANSIENT;
        }
    }
}

// ---- Delivering one entry ------------------------------------------------------------------

typedef struct {
    UploadTarget target;
    const char *files[UPLOAD_FILES_MAX];
    int file_count;
    bool delivered[UPLOAD_URLS_MAX];
    const char *key, *run_id;
    json_int_t version;
    json_t *meta; // owns the strings above
} Entry;

static UploadStatus entry_load(const char *dir, Entry *e, char *why, size_t len)
{
    char path[UPLOAD_TEXT_MAX + 320];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    memset(e, 0, sizeof *e);
    size_t n;
    char *text = slurp(path, UPLOAD_META_MAX, &n);
    json_error_t err;
    e->meta = text ? json_loadb(text, n, 0, &err) : NULL;
    free(text);
    const char *method, *te, *tf, *ca;
    json_t *urls, *done, *files;
    if (!e->meta ||
        json_unpack(e->meta, "{s:s, s:o, s:o, s:s, s:s, s:s, s:i, s:i, s:s, s:I, s:s, s:o}",
                    "method", &method, "urls", &urls, "delivered", &done, "token_env", &te,
                    "token_file", &tf, "ca_file", &ca, "connect_timeout",
                    &e->target.connect_timeout_s, "timeout", &e->target.timeout_s, "run_id",
                    &e->run_id, "version", &e->version, "idempotency_key", &e->key, "files",
                    &files) ||
        !json_is_array(urls) || !json_is_array(done) || !json_is_array(files) ||
        json_array_size(urls) != json_array_size(done) || json_array_size(urls) < 1 ||
        json_array_size(urls) > UPLOAD_URLS_MAX || json_array_size(files) < 1 ||
        json_array_size(files) > UPLOAD_FILES_MAX) {
        json_decref(e->meta);
        e->meta = NULL;
        return failf(why, len, UPLOAD_ERR_SPOOL, "%s: unreadable or incomplete", path);
    }
    e->target.method = UPLOAD_METHOD_NB;
    for (int m = 0; m < UPLOAD_METHOD_NB; m++)
        if (!strcmp(method, METHOD_NAMES[m]))
            e->target.method = (UploadMethod)m;
    e->target.url_count = (int)json_array_size(urls);
    e->file_count = (int)json_array_size(files);
    bool ok = e->target.method != UPLOAD_METHOD_NB;
    for (int i = 0; ok && i < e->target.url_count; i++) {
        const char *u = json_string_value(json_array_get(urls, (size_t)i));
        ok = u && (!strncmp(u, "http://", 7) || !strncmp(u, "https://", 8));
        snprintf(e->target.urls[i], UPLOAD_TEXT_MAX, "%s", u ? u : "");
        e->delivered[i] = json_is_true(json_array_get(done, (size_t)i));
    }
    for (int i = 0; ok && i < e->file_count; i++) {
        e->files[i] = json_string_value(json_array_get(files, (size_t)i));
        ok = e->files[i] && e->files[i][0] && !strchr(e->files[i], '/') && e->files[i][0] != '.';
    }
    snprintf(e->target.token_env, UPLOAD_TEXT_MAX, "%s", te);
    snprintf(e->target.token_file, UPLOAD_TEXT_MAX, "%s", tf);
    snprintf(e->target.ca_file, UPLOAD_TEXT_MAX, "%s", ca);
    if (!ok) {
        json_decref(e->meta);
        e->meta = NULL;
        return failf(why, len, UPLOAD_ERR_SPOOL, "%s: bad method, URL or file name", path);
    }
    return UPLOAD_OK;
}

/// Every URL not yet delivered; true when the entry is done.
static bool entry_deliver(Pass *p, const char *dir, const char *name, bool *refused)
{
    Entry e;
    *refused = false;
    char why[512], token[UPLOAD_TOKEN_MAX];
    if (entry_load(dir, &e, why, sizeof why) != UPLOAD_OK) {
        logf_(p, "%s (left in place)", why);
        return false;
    }
    bool all = true;
    if (upload_token_load(&e.target, token, sizeof token, why, sizeof why) != UPLOAD_OK) {
        logf_(p, "%s: %s; kept in the spool", name, why);
        json_decref(e.meta);
        *refused = true;
        return false;
    }
    bool transient = false;
    for (int i = 0; i < e.target.url_count; i++) {
        if (e.delivered[i])
            continue;
        char shown[UPLOAD_TEXT_MAX], what[UPLOAD_TEXT_MAX + 160];
        upload_url_for_log(e.target.urls[i], shown, sizeof shown);
        UploadStatus st = UPLOAD_OK;
        // PUT: each file to URL/NAME; POST: report.json; multipart: every file at once.
        int requests = e.target.method == UPLOAD_PUT ? e.file_count : 1;
        for (int f = 0; f < requests && st == UPLOAD_OK; f++) {
            char url[UPLOAD_TEXT_MAX + NAME_MAX_ + 2];
            size_t ul = strlen(e.target.urls[i]);
            if (e.target.method == UPLOAD_PUT)
                snprintf(url, sizeof url, "%s%s%s", e.target.urls[i],
                         ul && e.target.urls[i][ul - 1] == '/' ? "" : "/", e.files[f]);
            else
                snprintf(url, sizeof url, "%s", e.target.urls[i]);
            snprintf(what, sizeof what, "%s %s%s%s (run %s v%lld)",
                     e.target.method == UPLOAD_PUT ? "PUT" : "POST", shown,
                     e.target.method == UPLOAD_PUT ? "/" : "",
                     e.target.method == UPLOAD_PUT ? e.files[f] : "", e.run_id,
                     (long long)e.version);
            bool multi = e.target.method == UPLOAD_MULTIPART;
            Request rq = {.url = url,
                          .entry_dir = dir,
                          .files = multi ? e.files : &e.files[f],
                          .file_count = multi ? e.file_count : 1,
                          .method = e.target.method,
                          .target = &e.target,
                          .token = token,
                          .key = e.key};
            st = send_with_retries(p, &rq, what);
        }
        if (st == UPLOAD_OK) {
            e.delivered[i] = true;
            json_array_set_new(json_object_get(e.meta, "delivered"), (size_t)i, json_true());
            if (!write_meta(dir, e.meta))
                logf_(p, "%s: cannot record the delivery to %s: %s", name, shown, strerror(errno));
        }
        all &= st == UPLOAD_OK;
        transient |= st == UPLOAD_ERR_TRANSIENT;
    }
    *refused = !all && !transient;
    memset(token, 0, sizeof token);
    json_decref(e.meta);
    return all;
}

/// Name layout: MS-RUNID-VERSION-K (K: f final, p progress). Same run: RUNID equal.
static bool same_run(const char *a, const char *b)
{
    const char *ra = strchr(a, '-'), *rb = strchr(b, '-');
    const char *ea = strrchr(a, '-'), *eb = strrchr(b, '-');
    if (!ra || !rb || !ea || !eb)
        return false;
    // Strip "-VERSION-K" from both ends.
    const char *va = ea - 1, *vb = eb - 1;
    while (va > ra && *va != '-')
        va--;
    while (vb > rb && *vb != '-')
        vb--;
    return va - ra == vb - rb && !strncmp(ra, rb, (size_t)(va - ra));
}

static bool refused_before(const Uploader *u, const char *name)
{
    for (int i = 0; u && i < u->refused_n; i++)
        if (!strcmp(u->refused[i], name))
            return true;
    return false;
}

/// One pass: lock the spool, drop superseded progress entries, deliver the rest in order.
static UploadStatus drain_pass(Pass *p)
{
    const char *spool = p->pol->spool_dir;
    char path[UPLOAD_TEXT_MAX + 320];
    snprintf(path, sizeof path, "%s/.lock", spool);
    int lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0)
        return errno == ENOENT ? UPLOAD_OK : UPLOAD_ERR_IO; // no spool: nothing to do
    if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
        close(lock);
        return UPLOAD_ERR_BUSY;
    }
    struct dirent **list;
    int n = scandir(spool, &list, entry_filter, alphasort);
    UploadStatus st = n < 0 ? UPLOAD_ERR_IO : UPLOAD_OK;
    bool refused = false;
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        size_t len = strlen(name);
        snprintf(path, sizeof path, "%s/%s", spool, name);
        bool newer = false;
        for (int k = i + 1; k < n && !newer; k++)
            newer = same_run(name, list[k]->d_name);
        if (len > 2 && !strcmp(name + len - 2, "-p") && newer) {
            // A newer report of the same run says everything this one says.
            remove_tree(path);
            if (p->stats)
                p->stats->superseded++;
        } else if (time_left(p) <= 0) {
            if (p->stats)
                p->stats->kept++;
        } else if (refused_before(p->u, name)) {
            if (p->stats)
                p->stats->kept++;
        } else if (entry_deliver(p, path, name, &refused)) {
            remove_tree(path);
            if (p->stats)
                p->stats->delivered++;
        } else {
            if (refused && p->u && p->u->refused_n < REFUSED_MAX)
                snprintf(p->u->refused[p->u->refused_n++], NAME_MAX_, "%s", name);
            if (p->stats)
                p->stats->kept++;
        }
        free(list[i]);
    }
    if (n >= 0)
        free(list);
    close(lock);
    return st;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_start(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

UploadStatus upload_spool_drain(const UploadPolicy *pol, UploadStats *stats)
{
    pthread_once(&curl_once, curl_start);
    Pass p = {pol, NULL, stats, 0};
    p.rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
    return drain_pass(&p);
}

// ---- The thread ----------------------------------------------------------------------------

static void *upload_thread(void *arg)
{
    Uploader *u = arg;
    Pass p = {&u->pol, u, NULL, (uint64_t)time(NULL) ^ 0x9E3779B97F4A7C15ull};
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
        u->stats.kept = s.kept; // what the latest pass left
        if (last)
            break;
    }
    pthread_mutex_unlock(&u->lock);
    return NULL;
}

Uploader *upload_start(const UploadPolicy *pol)
{
    pthread_once(&curl_once, curl_start); // here, before any other thread uses libcurl
    Uploader *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->pol = *pol;
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
