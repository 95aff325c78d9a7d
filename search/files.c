// SPDX-License-Identifier: MIT
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

bool files_hash(const char *path, uint64_t *h)
{
    FILE *f = fopen(path, "rb");
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

int files_lock(const char *path, long *holder)
{
    *holder = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char text[32] = "";
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        if (n > 0)
            *holder = strtol(text, NULL, 10);
        close(fd);
        errno = e;
        return -1;
    }
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int files_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
