// SPDX-License-Identifier: MIT
// Internal to the uploader: the spool (upload_spool.c) as the transport (upload.c) uses it.
// Callers outside use upload.h. An entry read back with spool_entry_load has been checked
// whole (owner, modes, name, meta.json, every file's size and hash), so what the transport
// sends is exactly what was spooled.
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "upload.h"

enum { SPOOL_NAME_MAX = 256, SPOOL_RUN_ID_MAX = 64 };

typedef struct {
    char name[SPOOL_NAME_MAX];
    long long size;
    uint64_t fnv;
} SpoolFile;

/// What meta.json holds: data only.
typedef struct {
    char run_id[SPOOL_RUN_ID_MAX + 1];
    long long version;
    bool final;
    char key[160];
    SpoolFile files[UPLOAD_FILES_MAX];
    int file_count;
    uint64_t delivered[UPLOAD_DELIVERED_MAX]; // destination ids that took it
    int delivered_count;
} SpoolEntry;

/// Writes the message into why (when given) and returns st, so that a failure is one return.
UploadStatus upload_fail(char *why, size_t len, UploadStatus st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/// Reads a whole open regular file of at most max bytes into a NUL-terminated heap buffer;
/// closes fd (-1 is accepted and gives NULL).
char *spool_slurp_fd(int fd, size_t max, size_t *len);
/// Opens a file of the spool to read: a regular file (not a link) of this user that group
/// and others cannot write. -1 with errno (EPERM: another's or writable by others).
int spool_open_own(const char *path, struct stat *sb);

/// scandir's filter of entry names: hidden names are the lock and entries being built.
int spool_entry_filter(const struct dirent *e);
/// The entry in dir (named name in the spool), trusted only when it is ours alone, its name
/// agrees with meta.json and its files are the ones recorded.
UploadStatus spool_entry_load(const char *dir, const char *name, SpoolEntry *e, char *why,
                              size_t len);
/// meta.json of dir replaced atomically (mode 0600); false with errno.
bool spool_entry_write(const char *dir, const SpoolEntry *e);
/// Removes an entry's directory and the files in it.
void spool_entry_remove(const char *dir);
/// Whether two entry names are of the same run (name layout: MS-RUNID-VERSION-K).
bool spool_same_run(const char *a, const char *b);
/// Which destination a delivery went to: FNV-1a of "METHOD URL" (what `delivered` records).
uint64_t spool_destination_id(UploadMethod m, const char *url);
