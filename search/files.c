// SPDX-License-Identifier: MIT
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int files_mkdir_p(const char *path)
{
    char buf[4096];
    if (!path[0] || snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = path[0] ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        if (!c)
            break;
        *p = c;
    }
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

FILE *files_open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int err = errno;
        close(fd);
        errno = S_ISREG(sb.st_mode) ? err : S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        return NULL;
    }
    // Back to blocking reads: a regular file never blocks anyway, stdio expects it.
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

bool files_hash(const char *path, uint64_t *h)
{
    FILE *f = files_open_regular(path);
    if (!f)
        return false;
    char block[65536];
    size_t n;
    while ((n = fread(block, 1, sizeof block, f)) > 0)
        *h = files_fnv(*h, block, n);
    bool ok = !ferror(f);
    fclose(f);
    return ok;
}

/// "HOST PID START\n": who holds a lock, read by the run that finds it held.
static int lock_text(char *text, size_t len)
{
    char host[256] = "?";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    return snprintf(text, len, "%s %ld %lld\n", host, (long)getpid(), (long long)time(NULL));
}

static void lock_parse(const char *text, FilesLockHolder *h)
{
    *h = (FilesLockHolder){0};
    if (sscanf(text, "%255s %ld %lld", h->host, &h->pid, &h->started) != 3) {
        *h = (FilesLockHolder){0};
        h->pid = strtol(text, NULL, 10); // an older run's file: its pid alone
    }
}

static bool lock_read_fd(int fd, FilesLockHolder *h)
{
    char text[400] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n < 0)
        return false;
    text[n] = '\0';
    lock_parse(text, h);
    return true;
}

/// false (errno set, ENOENT when there is no such file) when path cannot be read.
static bool lock_read(const char *path, FilesLockHolder *h)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = lock_read_fd(fd, h);
    close(fd);
    return ok;
}

/// When process pid of this host started (seconds since the epoch); -1 when unknown.
static long long proc_started(long pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *p = strrchr(text, ')'); // the command name may hold spaces
    unsigned long long ticks = 0;
    // Fields 3..22 after the name: state, then 18 numbers, then the start time in ticks.
    if (!p || sscanf(p + 1,
                     " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                     "%*d %*d %*d %llu",
                     &ticks) != 1)
        return -1;
    f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    long long boot = -1;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &boot) == 1)
            break;
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return boot < 0 || hz <= 0 ? -1 : boot + (long long)(ticks / (unsigned long long)hz);
}

/// A lock of this host whose process is gone (or whose pid now names a later process).
static bool lock_stale(const FilesLockHolder *h)
{
    char host[256] = "?";
    if (gethostname(host, sizeof host) != 0)
        return false;
    host[sizeof host - 1] = '\0';
    if (h->pid <= 0 || strcmp(h->host, host) != 0)
        return false;
    if (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
        return true;
    long long began = proc_started(h->pid);
    return began >= 0 && began > h->started + 1; // the pid was reused after the lock
}

/// The fallback: path.excl made with O_EXCL (atomic on NFS v3+ and Lustre), removed at the end.
static int lock_excl(const char *path, FilesLock *lock, FilesLockHolder *holder)
{
    if (snprintf(lock->excl_path, sizeof lock->excl_path, "%s.excl", path) >=
        (int)sizeof lock->excl_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    char text[400];
    int n = lock_text(text, sizeof text);
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd = open(lock->excl_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write(fd, text, (size_t)n) != n || fsync(fd) != 0) {
                int e = errno ? errno : EIO;
                close(fd);
                unlink(lock->excl_path);
                errno = e;
                return -1;
            }
            close(fd);
            lock->excl = true;
            return 0;
        }
        FilesLockHolder h;
        if (errno != EEXIST)
            return -1;
        if (!lock_read(lock->excl_path, &h)) {
            if (errno == ENOENT)
                continue; // released meanwhile: try again
            return -1;
        }
        if (!lock_stale(&h)) {
            *holder = h;
            errno = EWOULDBLOCK;
            return -1;
        }
        // Taken over by moving it to a name of this process's own: of two runs that found
        // the same stale file one moves it; the other finds it gone, or finds the winner's.
        char aside[4500], host[256] = "?";
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        snprintf(aside, sizeof aside, "%s.%s.%ld", lock->excl_path, host, (long)getpid());
        if (rename(lock->excl_path, aside) != 0) {
            if (errno == ENOENT)
                continue;
            return -1;
        }
        FilesLockHolder moved;
        bool same = lock_read(aside, &moved) && moved.pid == h.pid && moved.started == h.started &&
                    strcmp(moved.host, h.host) == 0;
        if (!same) {                            // a live lock made since it was read: put it back
            (void)link(aside, lock->excl_path); // fails when another run made one: it holds it
            unlink(aside);
            *holder = moved;
            errno = EWOULDBLOCK;
            return -1;
        }
        unlink(aside);
        *holder = h;
        holder->stale = true;
    }
    errno = EWOULDBLOCK;
    return -1;
}

int files_lock(const char *path, FilesLock *lock, FilesLockHolder *holder)
{
    *lock = (FilesLock){.fd = -1};
    *holder = (FilesLockHolder){0};
    const char *hook = getenv("XQ_LOCK_NO_FLOCK");
    bool no_flock = hook && strcmp(hook, "1") == 0;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int e = 0;
    if (no_flock)
        e = ENOLCK;
    else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        e = errno;
    if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS) {
        close(fd);
        return lock_excl(path, lock, holder);
    }
    if (e != 0) {
        lock_read_fd(fd, holder);
        close(fd);
        errno = e;
        return -1;
    }
    // A run on a mount of the same directory without flock holds the .excl file.
    char excl[4200];
    FilesLockHolder h;
    if (snprintf(excl, sizeof excl, "%s.excl", path) < (int)sizeof excl && lock_read(excl, &h) &&
        !lock_stale(&h)) {
        *holder = h;
        close(fd);
        errno = EWOULDBLOCK;
        return -1;
    }
    char text[400];
    int n = lock_text(text, sizeof text);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    lock->fd = fd;
    return 0;
}

void files_unlock(FilesLock *lock)
{
    if (lock->excl)
        unlink(lock->excl_path);
    if (lock->fd >= 0)
        close(lock->fd);
    *lock = (FilesLock){.fd = -1};
}

int files_write_atomic(const char *path, const void *data, size_t len)
{
    // A temporary name of this writer's own (process and call): two writers of one file (the
    // fleet and `xqforge stop` rewriting the queue's page) never write into each other's.
    static atomic_uint seq;
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(),
                 atomic_fetch_add(&seq, 1)) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            errno = e ? e : EIO;
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}
