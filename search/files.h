// SPDX-License-Identifier: MIT
// The few file-system and hashing helpers every part needs, written once: mkdir -p, a file
// replaced atomically (temporary file, fsync, rename), FNV-1a over bytes and over a file,
// little-endian fields.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/// FNV-1a of a whole file's bytes into *h; false (errno set) when it cannot be read.
bool files_hash(const char *path, uint64_t *h);

/// Takes an exclusive lock on path (created 0600 when missing) without waiting and writes
/// this process's id into it: the open descriptor (close-on-exec) holds the lock until it is
/// closed. -1 with errno (EWOULDBLOCK: another process holds it, its pid in *holder).
int files_lock(const char *path, long *holder);

/// Replaces path with len bytes atomically: a reader sees the old file or the new one,
/// whole. -1 with errno on failure (path is then untouched).
int files_write_atomic(const char *path, const void *data, size_t len);
