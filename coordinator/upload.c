// SPDX-License-Identifier: MIT
#define _GNU_SOURCE // dirfd, O_DIRECTORY, O_NOFOLLOW
#include "upload.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
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

enum { SNIPPET_MAX = 160, ENTRIES_MAX = 4096, NAME_MAX_ = 256, RUN_ID_MAX = 64 };

// meta.json of an entry: data only (see entry_parse).
#define KEY_CHARS    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
#define SPOOL_FORMAT "xqforge-spool-entry"
enum { SPOOL_FORMAT_VERSION = 2 };

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

/// Reads a whole open regular file of at most max bytes into a NUL-terminated heap buffer;
/// closes fd.
static char *slurp_fd(int fd, size_t max, size_t *len)
{
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *buf = NULL;
    struct stat sb;
    errno = 0;
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

/// Reads a whole file of at most max bytes into a NUL-terminated heap buffer.
static char *slurp(const char *path, size_t max, size_t *len)
{
    return slurp_fd(open(path, O_RDONLY | O_CLOEXEC), max, len);
}

/// Opens a file of the spool to read: a regular file (not a link) of this user that group
/// and others cannot write. -1 with errno (EPERM: another's or writable by others).
static int open_own(const char *path, struct stat *sb)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode) || sb->st_uid != geteuid() ||
        (sb->st_mode & 022)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
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

UploadStatus upload_url_check(const char *url, char *why, size_t why_len)
{
    char shown[UPLOAD_TEXT_MAX];
    upload_url_for_log(url, shown, sizeof shown);
    size_t n = strnlen(url, UPLOAD_TEXT_MAX);
    if (n == 0 || n >= UPLOAD_TEXT_MAX)
        return failf(why, why_len, UPLOAD_ERR_ARG, "a URL is empty or too long");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
            return failf(why, why_len, UPLOAD_ERR_ARG, "'%s': a space or control character", shown);
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return failf(why, why_len, UPLOAD_ERR_ARG, "'%s' is not an http:// or https:// URL", shown);
    const char *auth = strstr(url, "://") + 3;
    if (memchr(auth, '@', strcspn(auth, "/?#")))
        return failf(why, why_len, UPLOAD_ERR_ARG,
                     "'%s' has credentials in it (user:password@): give the token with "
                     "token_env or token_file instead",
                     shown);
    return UPLOAD_OK;
}

UploadStatus upload_target_check(const UploadTarget *t, char *why, size_t why_len)
{
    if (t->url_count < 1 || t->url_count > UPLOAD_URLS_MAX)
        return failf(why, why_len, UPLOAD_ERR_ARG, "%d URLs: give 1 to %d", t->url_count,
                     UPLOAD_URLS_MAX);
    if ((unsigned)t->method >= UPLOAD_METHOD_NB || t->connect_timeout_s < 1 || t->timeout_s < 1)
        return failf(why, why_len, UPLOAD_ERR_ARG, "bad method or timeouts");
    for (int i = 0; i < t->url_count; i++) {
        UploadStatus st = upload_url_check(t->urls[i], why, why_len);
        if (st != UPLOAD_OK)
            return st;
    }
    return UPLOAD_OK;
}

// ---- The spool -----------------------------------------------------------------------------
// SPOOL/MS-RUNID-VERSION-K/ (K: f final, p progress), 0700, holding copies of the report
// files (0600) and meta.json (0600): format, format_version, run_id, version, final,
// idempotency_key, files [{name, size, fnv1a}], delivered [destination ids]. Nothing in it
// says where to send or with which token; a destination id is the FNV-1a of "METHOD URL".

/// "name (uid N)", or "uid N" for a user without a name.
static void owner_text(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, len, "%s (uid %u)", res->pw_name, (unsigned)uid);
    else
        snprintf(buf, len, "uid %u", (unsigned)uid);
}

/// mkdir -p of the parent, then the spool itself with mode 0700.
static int make_spool(const char *dir)
{
    char parent[UPLOAD_TEXT_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (files_mkdir_p(parent) != 0)
            return -1;
    }
    return mkdir(dir, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

UploadStatus upload_spool_check(const char *dir, bool create, char *why, size_t why_len)
{
    struct stat sb;
    int rc = stat(dir, &sb);
    if (rc != 0 && errno == ENOENT && create && make_spool(dir) == 0)
        rc = stat(dir, &sb); // and checked below: another may have made it meanwhile
    if (rc != 0) {
        int err = errno;
        failf(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", dir, strerror(err));
        errno = err;
        return UPLOAD_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: not a directory", dir);
    }
    bool theirs = sb.st_uid != geteuid();
    if (theirs || (sb.st_mode & 022)) {
        // Whoever can write in it can plant reports that we would send as ours.
        char owner[300];
        owner_text(sb.st_uid, owner, sizeof owner);
        return failf(why, why_len, UPLOAD_ERR_UNSAFE,
                     "spool %s is refused: mode %04o, owner %s: %s (a spool must be yours "
                     "and writable by you alone: chmod 700 it, or use another)",
                     dir, (unsigned)(sb.st_mode & 07777), owner,
                     theirs ? "not yours" : "group or others can write in it");
    }
    if (create && (sb.st_mode & 077) && chmod(dir, 0700) != 0)
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: chmod 700: %s", dir, strerror(errno));
    return UPLOAD_OK;
}

static bool run_id_ok(const char *s)
{
    if (!s[0] || strlen(s) > RUN_ID_MAX)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return false;
    return true;
}

/// A plain file name: letters, digits, '.', '-', '_', not starting with '.'.
static bool file_name_ok(const char *s)
{
    if (!s[0] || s[0] == '.' || strlen(s) >= NAME_MAX_)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '-' && *s != '_')
            return false;
    return true;
}

/// Copies src to dst (created 0600) and flushes it to disk; FNV-1a of the bytes continued
/// into *all and from the basis into *own, the size into *size.
static bool copy_file(const char *src, const char *dst, uint64_t *all, uint64_t *own,
                      long long *size)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    bool ok = in >= 0 && out >= 0;
    char block[65536];
    *own = FILES_FNV_BASIS;
    *size = 0;
    for (ssize_t n; ok && (n = read(in, block, sizeof block)) != 0;) {
        if (n < 0) {
            ok = errno == EINTR;
            continue;
        }
        *all = files_fnv(*all, block, (size_t)n);
        *own = files_fnv(*own, block, (size_t)n);
        *size += n;
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

typedef struct {
    char name[NAME_MAX_];
    long long size;
    uint64_t fnv;
} EntryFile;

/// What meta.json holds: data only.
typedef struct {
    char run_id[RUN_ID_MAX + 1];
    long long version;
    bool final;
    char key[160];
    EntryFile files[UPLOAD_FILES_MAX];
    int file_count;
    uint64_t delivered[UPLOAD_DELIVERED_MAX]; // destination ids that took it
    int delivered_count;
} Entry;

static void entry_key(const char *run_id, long long version, uint64_t hash, char *buf, size_t len)
{
    snprintf(buf, len, "xqforge-%s-%llu-%016llx", run_id, (unsigned long long)version,
             (unsigned long long)hash);
}

/// The entry's directory name: sorting names sorts entries by age; the run and the kind are
/// readable without meta.json.
static void entry_suffix(const Entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "-%s-%08llu-%c", e->run_id, (unsigned long long)e->version,
             e->final ? 'f' : 'p');
}

static json_t *entry_json(const Entry *e)
{
    char hex[17];
    json_t *files = json_array(), *done = json_array();
    for (int i = 0; i < e->file_count; i++) {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)e->files[i].fnv);
        json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "name", e->files[i].name, "size",
                                               (json_int_t)e->files[i].size, "fnv1a", hex));
    }
    for (int i = 0; i < e->delivered_count; i++) {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)e->delivered[i]);
        json_array_append_new(done, json_string(hex));
    }
    return json_pack("{s:s, s:i, s:s, s:I, s:b, s:s, s:o, s:o}", "format", SPOOL_FORMAT,
                     "format_version", SPOOL_FORMAT_VERSION, "run_id", e->run_id, "version",
                     (json_int_t)e->version, "final", e->final, "idempotency_key", e->key, "files",
                     files, "delivered", done);
}

/// meta.json of dir replaced atomically (mode 0600).
static bool write_meta(const char *dir, const Entry *e)
{
    char path[UPLOAD_TEXT_MAX + 32], tmp[UPLOAD_TEXT_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.meta.json.tmp", dir);
    json_t *meta = entry_json(e);
    char *text = meta ? json_dumps(meta, JSON_INDENT(2)) : NULL;
    json_decref(meta);
    if (!text) {
        errno = ENOMEM;
        return false;
    }
    size_t len = strlen(text);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    free(text);
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        err = errno ? errno : err;
        unlink(tmp);
    }
    errno = err;
    return ok;
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

UploadStatus upload_spool_add(const char *spool_dir, const char *run_id, uint64_t version,
                              bool final, const char *const *files, int n, char *why,
                              size_t why_len)
{
    if (!run_id_ok(run_id) || n < 1 || n > UPLOAD_FILES_MAX || version > INT64_MAX)
        return failf(why, why_len, UPLOAD_ERR_ARG, "spool: bad run id, version or file count");
    for (int i = 0; i < n; i++)
        if (!file_name_ok(base_name(files[i])))
            return failf(why, why_len, UPLOAD_ERR_ARG, "spool: '%s' is not a plain file name",
                         base_name(files[i]));
    UploadStatus st = upload_spool_check(spool_dir, true, why, why_len);
    if (st != UPLOAD_OK)
        return st;
    Entry e = {.version = (long long)version, .final = final, .file_count = n};
    snprintf(e.run_id, sizeof e.run_id, "%s", run_id);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    static atomic_uint_fast64_t serial;
    char tmp[UPLOAD_TEXT_MAX + 64], dst[UPLOAD_TEXT_MAX + 128], path[UPLOAD_TEXT_MAX + 320];
    char suffix[RUN_ID_MAX + 40];
    entry_suffix(&e, suffix, sizeof suffix);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%llu", spool_dir, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&serial, 1));
    snprintf(dst, sizeof dst, "%s/%013lld%s", spool_dir, ms, suffix);
    if (mkdir(tmp, 0700) != 0)
        return failf(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", tmp, strerror(errno));
    uint64_t hash = FILES_FNV_BASIS;
    for (int i = 0; i < n; i++) {
        EntryFile *f = &e.files[i];
        snprintf(f->name, sizeof f->name, "%s", base_name(files[i]));
        snprintf(path, sizeof path, "%s/%s", tmp, f->name);
        if (!copy_file(files[i], path, &hash, &f->fnv, &f->size)) {
            int err = errno;
            remove_tree(tmp);
            return failf(why, why_len, UPLOAD_ERR_IO, "spool: cannot copy %s: %s", files[i],
                         strerror(err));
        }
    }
    entry_key(run_id, e.version, hash, e.key, sizeof e.key);
    bool ok = write_meta(tmp, &e) && rename(tmp, dst) == 0;
    int err = errno;
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

// ---- Reading an entry back: nothing in it is trusted until checked ------------------------

static bool hex64(const char *s, uint64_t *out)
{
    if (!s || strlen(s) != 16)
        return false;
    for (int i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    *out = strtoull(s, NULL, 16);
    return true;
}

/// meta.json's text into e: only the keys of SPOOL_FORMAT, each of its type and range. One
/// that names where to send or a token source is refused by name: the spool never says so.
static UploadStatus entry_parse(const char *text, size_t n, Entry *e, char *why, size_t len)
{
    static const char *const directions[] = {"urls",     "url",        "method",  "token_env",
                                             "token",    "token_file", "ca_file", "headers",
                                             "password", "user"};
    memset(e, 0, sizeof *e);
    json_error_t err;
    json_t *m = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(m)) {
        json_decref(m);
        return failf(why, len, UPLOAD_ERR_SPOOL, "meta.json is not a JSON object");
    }
    for (size_t i = 0; i < sizeof directions / sizeof *directions; i++)
        if (json_object_get(m, directions[i])) {
            json_decref(m);
            return failf(why, len, UPLOAD_ERR_SPOOL,
                         "meta.json names '%s', but a spool entry carries data only (where "
                         "to send and with which token come from the job or xqforge upload's "
                         "options): planted, tampered with, or from an older xqforge",
                         directions[i]);
        }
    const char *format, *run_id, *key;
    json_int_t format_version, version;
    int final;
    json_t *files, *done;
    bool ok = json_unpack_ex(m, &err, JSON_STRICT, "{s:s, s:I, s:s, s:I, s:b, s:s, s:o, s:o}",
                             "format", &format, "format_version", &format_version, "run_id",
                             &run_id, "version", &version, "final", &final, "idempotency_key", &key,
                             "files", &files, "delivered", &done) == 0 &&
              !strcmp(format, SPOOL_FORMAT) && format_version == SPOOL_FORMAT_VERSION &&
              run_id_ok(run_id) && version >= 0 && strlen(key) < sizeof e->key &&
              strspn(key, KEY_CHARS) == strlen(key) && json_is_array(files) &&
              json_array_size(files) >= 1 && json_array_size(files) <= UPLOAD_FILES_MAX &&
              json_is_array(done) && json_array_size(done) <= UPLOAD_DELIVERED_MAX;
    if (ok) {
        snprintf(e->run_id, sizeof e->run_id, "%s", run_id);
        snprintf(e->key, sizeof e->key, "%s", key);
        e->version = (long long)version;
        e->final = final;
        e->file_count = (int)json_array_size(files);
        e->delivered_count = (int)json_array_size(done);
    }
    for (int i = 0; ok && i < e->file_count; i++) {
        const char *name, *hex;
        json_int_t size;
        EntryFile *f = &e->files[i];
        ok = json_unpack_ex(json_array_get(files, (size_t)i), &err, JSON_STRICT, "{s:s, s:I, s:s}",
                            "name", &name, "size", &size, "fnv1a", &hex) == 0 &&
             file_name_ok(name) && size >= 0 && size <= UPLOAD_BODY_MAX && hex64(hex, &f->fnv);
        if (ok) {
            snprintf(f->name, sizeof f->name, "%s", name);
            f->size = (long long)size;
        }
        for (int k = 0; ok && k < i; k++)
            ok = strcmp(e->files[k].name, f->name) != 0;
    }
    for (int i = 0; ok && i < e->delivered_count; i++)
        ok = hex64(json_string_value(json_array_get(done, (size_t)i)), &e->delivered[i]);
    json_decref(m);
    if (!ok)
        return failf(why, len, UPLOAD_ERR_SPOOL,
                     "meta.json is not an entry of format %s %d (keys, types or values)",
                     SPOOL_FORMAT, SPOOL_FORMAT_VERSION);
    return UPLOAD_OK;
}

/// Whether the entry's files are the ones it recorded (size, hash) and its key theirs.
static UploadStatus entry_verify(const char *dir, const Entry *e, char *why, size_t len)
{
    char path[UPLOAD_TEXT_MAX + 320], key[sizeof e->key];
    char block[65536];
    uint64_t all = FILES_FNV_BASIS;
    for (int i = 0; i < e->file_count; i++) {
        const EntryFile *f = &e->files[i];
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        struct stat sb;
        int fd = open_own(path, &sb);
        if (fd < 0)
            return failf(why, len, UPLOAD_ERR_SPOOL, "%s: %s", f->name,
                         errno == EPERM ? "not a plain file of yours that only you can write"
                                        : strerror(errno));
        uint64_t own = FILES_FNV_BASIS;
        long long size = 0;
        for (ssize_t n; (n = read(fd, block, sizeof block)) != 0;) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break;
            own = files_fnv(own, block, (size_t)n);
            all = files_fnv(all, block, (size_t)n);
            size += n;
        }
        close(fd);
        if (size != f->size || own != f->fnv)
            return failf(why, len, UPLOAD_ERR_SPOOL,
                         "%s is not the file spooled (%lld bytes, recorded %lld, or another hash)",
                         f->name, size, f->size);
    }
    entry_key(e->run_id, e->version, all, key, sizeof key);
    if (strcmp(key, e->key))
        return failf(why, len, UPLOAD_ERR_SPOOL, "the idempotency key is not the files'");
    return UPLOAD_OK;
}

/// The entry in dir (named name in the spool), trusted only when it is ours alone, its name
/// agrees with meta.json and its files are the ones recorded.
static UploadStatus entry_load(const char *dir, const char *name, Entry *e, char *why, size_t len)
{
    struct stat sb;
    memset(e, 0, sizeof *e);
    if (lstat(dir, &sb) != 0)
        return failf(why, len, UPLOAD_ERR_SPOOL, "%s", strerror(errno));
    if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022))
        return failf(why, len, UPLOAD_ERR_SPOOL,
                     "not a directory of yours that only you can write (mode %04o, uid %u)",
                     (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid);
    char path[UPLOAD_TEXT_MAX + 320];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    size_t n = 0;
    char *text = slurp_fd(open_own(path, &sb), UPLOAD_META_MAX, &n);
    if (!text)
        return failf(why, len, UPLOAD_ERR_SPOOL, "meta.json: %s",
                     errno == EPERM ? "not a plain file of yours that only you can write"
                                    : strerror(errno ? errno : EIO));
    UploadStatus st = entry_parse(text, n, e, why, len);
    free(text);
    if (st != UPLOAD_OK)
        return st;
    char suffix[RUN_ID_MAX + 40];
    entry_suffix(e, suffix, sizeof suffix);
    size_t nl = strlen(name), sl = strlen(suffix);
    bool named = nl == 13 + sl && !strcmp(name + 13, suffix);
    for (size_t i = 0; named && i < 13; i++)
        named = isdigit((unsigned char)name[i]);
    if (!named)
        return failf(why, len, UPLOAD_ERR_SPOOL, "its name does not match meta.json");
    return entry_verify(dir, e, why, len);
}

/// Which destination a delivery went to: FNV-1a of "METHOD URL".
static uint64_t destination_id(UploadMethod m, const char *url)
{
    uint64_t h = files_fnv(FILES_FNV_BASIS, upload_method_name(m), strlen(upload_method_name(m)));
    h = files_fnv(h, " ", 1);
    return files_fnv(h, url, strlen(url));
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

/// Content-Type of a spooled file, from its name.
static const char *file_type(const char *name)
{
    return strstr(name, ".json")   ? "application/json"
           : strstr(name, ".html") ? "text/html; charset=utf-8"
                                   : "application/octet-stream";
}

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
    int fd = open_own(path, &sb);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f && fd >= 0)
        close(fd);
    *size = f ? (curl_off_t)sb.st_size : 0;
    return f;
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
    FILE *body[UPLOAD_FILES_MAX] = {NULL};
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
    char ctype[96];
    snprintf(ctype, sizeof ctype, "Content-Type: %s", file_type(rq->files[0]));
    CURLcode rc = CURLE_OK;
    if (rq->method == UPLOAD_POST) {
        size_t len = 0;
        struct stat sb;
        if (!(post = slurp_fd(open_own(path, &sb), UPLOAD_BODY_MAX, &len)))
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

static bool was_delivered(const Entry *e, uint64_t id)
{
    for (int i = 0; i < e->delivered_count; i++)
        if (e->delivered[i] == id)
            return true;
    return false;
}

/// One URL of the target: every file PUT to URL/NAME, or one POST.
static UploadStatus deliver_to(Pass *p, const char *dir, const Entry *e, const char *url_base,
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
        char url[UPLOAD_TEXT_MAX + NAME_MAX_ + 2];
        size_t ul = strlen(url_base);
        if (put)
            snprintf(url, sizeof url, "%s%s%s", url_base, ul && url_base[ul - 1] == '/' ? "" : "/",
                     names[f]);
        else
            snprintf(url, sizeof url, "%s", url_base);
        snprintf(what, sizeof what, "%s %s%s%s (run %s v%lld)", put ? "PUT" : "POST", shown,
                 put ? "/" : "", put ? names[f] : "", e->run_id, e->version);
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
    Entry e;
    char why[512], token[UPLOAD_TOKEN_MAX];
    // Checked again just before sending: the pass's first look may be minutes old.
    if (entry_load(dir, name, &e, why, sizeof why) != UPLOAD_OK) {
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
        uint64_t id = destination_id(p->target->method, url);
        if (was_delivered(&e, id))
            continue;
        UploadStatus st = deliver_to(p, dir, &e, url, token);
        if (st == UPLOAD_OK && e.delivered_count < UPLOAD_DELIVERED_MAX) {
            e.delivered[e.delivered_count++] = id;
            if (!write_meta(dir, &e))
                logf_(p, "%s: cannot record a delivery: %s", name, strerror(errno));
        }
        all &= st == UPLOAD_OK;
        transient |= st == UPLOAD_ERR_TRANSIENT;
    }
    memset(token, 0, sizeof token);
    return all ? ENTRY_DONE : transient ? ENTRY_KEPT : ENTRY_REFUSED;
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

static void remember_refused(Uploader *u, const char *name)
{
    if (u && u->refused_n < REFUSED_MAX && !refused_before(u, name))
        snprintf(u->refused[u->refused_n++], NAME_MAX_, "%s", name);
}

/// Which entries of list[0..n) are trusted (entry_load); the others are said once (per
/// Uploader) and counted. NULL when out of memory.
static bool *trusted_entries(Pass *p, struct dirent **list, int n)
{
    bool *ok = calloc((size_t)(n > 0 ? n : 1), sizeof *ok);
    char path[UPLOAD_TEXT_MAX + 320], why[512];
    for (int i = 0; ok && i < n; i++) {
        const char *name = list[i]->d_name;
        snprintf(path, sizeof path, "%s/%s", p->pol->spool_dir, name);
        Entry e;
        ok[i] = entry_load(path, name, &e, why, sizeof why) == UPLOAD_OK;
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
        newer = trusted[k] && same_run(name, list[k]->d_name);
    if (len > 2 && !strcmp(name + len - 2, "-p") && newer) {
        // A newer report of the same run says everything this one says.
        remove_tree(path);
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
        remove_tree(path);
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
    int n = scandir(spool, &list, entry_filter, alphasort);
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
