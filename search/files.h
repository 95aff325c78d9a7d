// SPDX-License-Identifier: MIT
// The few file-system and hashing helpers every part needs, written once: mkdir -p, a file
// replaced atomically (temporary file, fsync, rename), FNV-1a over bytes and over a file,
// little-endian fields.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FILES_FNV_BASIS 0xcbf29ce484222325ull

/// FNV-1a (64-bit) of n bytes, continuing from h (FILES_FNV_BASIS to start).
static inline uint64_t files_fnv(uint64_t h, const void *data, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
    return h;
}

// Little-endian fields: how every binary file of ours (journal, nets, training positions,
// Texel datasets, books) stores its integers, whatever the machine's byte order.
static inline void files_put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t files_get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void files_put_le32(uint8_t *p, uint32_t v) { files_put_le(p, v, 4); }
static inline void files_put_le64(uint8_t *p, uint64_t v) { files_put_le(p, v, 8); }
static inline uint32_t files_get_le32(const uint8_t *p) { return (uint32_t)files_get_le(p, 4); }
static inline uint64_t files_get_le64(const uint8_t *p) { return files_get_le(p, 8); }

/// mkdir -p: creates the directory and its missing parents; -1 with errno on failure.
int files_mkdir_p(const char *path);

/// Opens path for reading as a regular file, never blocking: a FIFO, a device or a directory
/// in its place is refused (NULL, errno EINVAL; EISDIR for a directory), so that no read
/// waits on a writer that never comes. NULL with errno when it cannot be opened.
FILE *files_open_regular(const char *path);

/// FNV-1a of a whole file's bytes into *h; false (errno set) when it cannot be read (or is
/// not a regular file: files_open_regular).
bool files_hash(const char *path, uint64_t *h);

/// A held lock (files_lock): the flock'ed descriptor, or the lock file made with O_EXCL.
typedef struct {
    int fd;    // flock: the open descriptor (close-on-exec) that holds it; -1: none
    bool excl; // the fallback: the file excl_path, made with O_EXCL, is the lock
    char excl_path[4200];
} FilesLock;

/// Who holds (or held) a lock: the text "HOST PID START" its holder wrote (START: seconds
/// since the epoch at which it took the lock); pid 0 when the file says nothing readable.
typedef struct {
    char host[256];
    long pid;
    long long started;
    bool stale; // files_lock took over this holder's lock: same host, its process gone
} FilesLockHolder;

/// Takes an exclusive lock on path without waiting and writes "HOST PID START" into it: by
/// flock(2) on path (created 0600 when missing; it stays), or, where the file system does not
/// support flock (Lustre or NFS mounted without it: ENOLCK, EOPNOTSUPP, ENOSYS), by creating
/// path.excl with O_CREAT|O_EXCL, removed by files_unlock (lock->excl says which is used).
/// An .excl file left by a process of this host that is gone (killed) is taken over
/// (holder->stale set, its holder in *holder); one of another host is never taken over: only
/// that host can tell whether its run is alive (remove the file by hand once it is not).
/// A flock lock is refused too while a live .excl lock exists (a run on a mount without
/// flock). 0, or -1 with errno (EWOULDBLOCK: another process holds it, said in *holder).
/// Test hook: XQ_LOCK_NO_FLOCK=1 in the environment skips flock, as if it failed with ENOLCK.
int files_lock(const char *path, FilesLock *lock, FilesLockHolder *holder);

/// Releases a lock taken by files_lock (the .excl file removed); a lock not held is a no-op.
void files_unlock(FilesLock *lock);

/// Replaces path with len bytes atomically: a reader sees the old file or the new one,
/// whole. -1 with errno on failure (path is then untouched).
int files_write_atomic(const char *path, const void *data, size_t len);
