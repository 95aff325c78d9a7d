// SPDX-License-Identifier: MIT
#include "englog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { ENGINE_MAX = 64, NOTE_MAX = 1024, STAMP_MAX = 96 };

struct EngineLog {
    pthread_mutex_t lock; // guards everything below but sessions
    atomic_int sessions;
    int fd;        // -1: not open (yet, or it failed)
    bool tried;    // englog_open ran: fd or err says how it went
    uint64_t size; // bytes in the current file
    uint64_t max_bytes;
    char err[256];
    char engine[ENGINE_MAX];
    char path[ENGLOG_PATH_MAX];
};

EngineLog *englog_new(const char *path, const char *engine, uint64_t max_bytes)
{
    EngineLog *lg = calloc(1, sizeof *lg);
    if (!lg)
        return NULL;
    pthread_mutex_init(&lg->lock, NULL);
    atomic_init(&lg->sessions, 0);
    lg->fd = -1;
    lg->max_bytes = max_bytes == 0                ? ENGLOG_SIZE_DEFAULT
                    : max_bytes < ENGLOG_SIZE_MIN ? ENGLOG_SIZE_MIN
                                                  : max_bytes;
    snprintf(lg->engine, sizeof lg->engine, "%s", engine);
    snprintf(lg->path, sizeof lg->path, "%s", path);
    return lg;
}

void englog_free(EngineLog *lg)
{
    if (!lg)
        return;
    if (lg->fd >= 0)
        close(lg->fd);
    pthread_mutex_destroy(&lg->lock);
    free(lg);
}

const char *englog_path(const EngineLog *lg) { return lg->path; }

int englog_session(EngineLog *lg) { return atomic_fetch_add(&lg->sessions, 1) + 1; }

/// Writes all of the iovecs (a regular file takes them whole, but a signal may cut a write).
static void write_all(EngineLog *lg, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(lg->fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        lg->size += (uint64_t)w;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
}

/// The current UTC time, to the millisecond: 2026-12-05T06:01:02.123Z.
static void stamp(char *out, size_t cap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/// The first line of every file: what it is and how to read it.
static void write_header(EngineLog *lg)
{
    char head[STAMP_MAX + ENGINE_MAX + 256], now[STAMP_MAX];
    stamp(now, sizeof now);
    int n = snprintf(head, sizeof head,
                     "# xqforge engine log of %s, from %s: '>' to the engine, '<' from it, "
                     "'!' xqforge's notes\n",
                     lg->engine, now);
    struct iovec iov = {head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1};
    write_all(lg, &iov, 1);
}

/// Opens the file under the lock: appending to what is there, or (fresh) truncated.
static bool open_file(EngineLog *lg, bool fresh)
{
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0);
    lg->fd = open(lg->path, flags, 0644);
    if (lg->fd < 0) {
        snprintf(lg->err, sizeof lg->err, "%s", strerror(errno));
        return false;
    }
    struct stat sb;
    lg->size = fstat(lg->fd, &sb) == 0 && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
    write_header(lg);
    return true;
}

bool englog_open(EngineLog *lg, char *why, size_t why_len)
{
    pthread_mutex_lock(&lg->lock);
    if (!lg->tried) {
        lg->tried = true;
        open_file(lg, false);
    }
    bool ok = lg->fd >= 0;
    if (!ok)
        snprintf(why, why_len, "engine log %s: %s", lg->path, lg->err);
    pthread_mutex_unlock(&lg->lock);
    return ok;
}

/// The file is full: it becomes NAME.1 (replacing the older one) and NAME starts afresh (also
/// when the rename fails: the cap holds either way).
static void rotate(EngineLog *lg)
{
    char old[ENGLOG_PATH_MAX + 4];
    snprintf(old, sizeof old, "%s.1", lg->path);
    close(lg->fd);
    lg->fd = -1;
    rename(lg->path, old);
    open_file(lg, true);
}

void englog_line(EngineLog *lg, int session, char dir, const char *text, size_t len)
{
    char prefix[STAMP_MAX + ENGINE_MAX + 32];
    pthread_mutex_lock(&lg->lock); // stamped under the lock: the file's times never go back
    stamp(prefix, sizeof prefix);
    size_t n = strlen(prefix);
    snprintf(prefix + n, sizeof prefix - n, " %s#%d %c ", lg->engine, session, dir);
    n += strlen(prefix + n);
    struct iovec iov[3] = {{prefix, n}, {(char *)text, len}, {"\n", 1}};
    if (lg->fd >= 0 && lg->size > 0 && lg->size + n + len + 1 > lg->max_bytes)
        rotate(lg);
    if (lg->fd >= 0)
        write_all(lg, iov, 3);
    pthread_mutex_unlock(&lg->lock);
}

void englog_note(EngineLog *lg, int session, const char *fmt, ...)
{
    char text[NOTE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    englog_line(lg, session, '!', text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

bool englog_file_name(char *out, size_t cap, const char *base, const char *engine, int rank)
{
    char name[ENGINE_MAX], rk[24] = "";
    size_t i = 0;
    for (; engine[i] && i < sizeof name - 1; i++) {
        char c = engine[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '+' || c == '-';
        name[i] = plain ? c : '_';
    }
    name[i] = '\0';
    if (rank >= 0)
        snprintf(rk, sizeof rk, ".r%d", rank);
    size_t len = strlen(base);
    bool ext = len > 4 && strcmp(base + len - 4, ".log") == 0;
    if (ext)
        len -= 4;
    int n = snprintf(out, cap, "%.*s%s.%s%s", (int)len, base, rk, name, ext ? ".log" : "");
    return n >= 0 && (size_t)n < cap;
}
