// SPDX-License-Identifier: MIT
// The write-ahead journal (format and guarantees in journal.h). Opening checks the whole file
// first (pass 1: every CRC, where the valid data ends, whether a bad record is a torn tail or
// damage in the middle) and only then replays it (pass 2), so the callback never sees a
// journal that is refused.
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <limits.h>

// A crash tears at most the one record being appended; the filesystem may add a few blocks
// of zeros after it. More bytes than this after a bad record cannot be a torn append.
#define TAIL_SLACK ((uint64_t)64 << 10)
#define TAIL_MAX   ((uint64_t)JOURNAL_RECORD_HEAD + JOURNAL_RECORD_MAX + TAIL_SLACK)

static const uint8_t MAGIC[9] = {'X', 'Q', 'J', 'O', 'U', 'R', 'N', 'A', 'L'};

struct Journal {
    int fd;
    uint64_t end; // size of the durable journal: where the next record goes
    bool failed;  // an append failed in a way only a reopen repairs
    int err;      // errno of the last failed append
    char last_error[256];
    uint8_t *buf; // record scratch space, grown up to one whole record
    size_t buf_cap;
};

/// The keys seen during replay: open addressing, 0 marks an empty slot (key 0 kept aside).
typedef struct {
    uint64_t *slots;
    size_t cap, used;
    bool has_zero;
} KeySet;

typedef enum { RECORD_VALID, RECORD_BAD, RECORD_IO } RecordCheck;

static const char *const STATUS_TEXT[JOURNAL_STATUS_NB] = {
    [JOURNAL_OK] = "ok",
    [JOURNAL_ERR_IO] = "journal I/O error",
    [JOURNAL_ERR_NOMEM] = "out of memory",
    [JOURNAL_ERR_HEADER] = "not a journal (bad or damaged header)",
    [JOURNAL_ERR_VERSION] = "journal of another format version",
    [JOURNAL_ERR_FINGERPRINT] = "journal of another job",
    [JOURNAL_ERR_CORRUPT] = "journal damaged before its end",
    [JOURNAL_ERR_LOCKED] = "journal in use by another process",
    [JOURNAL_ERR_TOO_LARGE] = "journal record too large",
    [JOURNAL_ERR_CALLBACK] = "journal replay stopped by the caller",
    [JOURNAL_ERR_FAILED] = "journal failed earlier; reopen it",
};

const char *journal_strerror(JournalStatus st)
{
    return st < JOURNAL_STATUS_NB ? STATUS_TEXT[st] : "unknown journal status";
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/// CRC-32 of the 8 little-endian key bytes followed by the payload.
static uint32_t record_crc(const uint8_t *key_bytes, const uint8_t *payload, uint32_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, key_bytes, 8);
    if (len)
        crc = crc32(crc, payload, len);
    return (uint32_t)crc;
}

__attribute__((format(printf, 3, 4))) static void set_why(char *why, size_t why_len,
                                                          const char *fmt, ...)
{
    if (!why || !why_len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/// Reads up to n bytes at off, retrying short reads and EINTR; returns the bytes read (fewer
/// only at end of file) or -1 with errno set.
static ssize_t read_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

/// Writes all n bytes at off, retrying short writes and EINTR; 0, or -1 with errno set.
static int write_full(int fd, const void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, (const uint8_t *)buf + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

static bool buf_reserve(Journal *j, size_t n)
{
    if (n <= j->buf_cap)
        return true;
    uint8_t *p = realloc(j->buf, n);
    if (!p)
        return false;
    j->buf = p;
    j->buf_cap = n;
    return true;
}

static void header_encode(uint8_t *h, uint64_t fingerprint)
{
    memset(h, 0, JOURNAL_HEADER_SIZE);
    memcpy(h, MAGIC, sizeof MAGIC);
    put_le32(h + 12, JOURNAL_VERSION);
    put_le64(h + 16, fingerprint);
    put_le32(h + 24, (uint32_t)crc32(crc32(0L, Z_NULL, 0), h, 24));
}

/// The header checks in order: magic, version (whose layout may differ), CRC, fingerprint.
static JournalStatus header_check(const uint8_t *h, size_t n, uint64_t fingerprint, char *why,
                                  size_t why_len)
{
    if (n < JOURNAL_HEADER_SIZE || memcmp(h, MAGIC, sizeof MAGIC) != 0) {
        bool magic = n >= sizeof MAGIC && memcmp(h, MAGIC, sizeof MAGIC) == 0;
        set_why(why, why_len, "not a journal (%s)", magic ? "header too short" : "bad magic");
        return JOURNAL_ERR_HEADER;
    }
    uint32_t version = get_le32(h + 12);
    if (version != JOURNAL_VERSION) {
        set_why(why, why_len, "journal format version %u, this build reads version %u", version,
                JOURNAL_VERSION);
        return JOURNAL_ERR_VERSION;
    }
    if (get_le32(h + 24) != (uint32_t)crc32(crc32(0L, Z_NULL, 0), h, 24) || h[9] || h[10] ||
        h[11]) {
        set_why(why, why_len, "journal header damaged (checksum mismatch)");
        return JOURNAL_ERR_HEADER;
    }
    uint64_t found = get_le64(h + 16);
    if (found != fingerprint) {
        set_why(why, why_len, "journal of another job (fingerprint %016llx, this job %016llx)",
                (unsigned long long)found, (unsigned long long)fingerprint);
        return JOURNAL_ERR_FINGERPRINT;
    }
    return JOURNAL_OK;
}

/// fsync of the directory holding path, so that a new name in it is durable.
static int dir_sync(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int rc = fsync(dfd);
    int saved = errno;
    close(dfd);
    errno = saved;
    return rc;
}

/// Creates the journal atomically: header into "<path>.new", synced, linked to path. Returns
/// an fd of path, or -1 with errno (EEXIST: another process created it first).
static int journal_create(const char *path, uint64_t fingerprint)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.new", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint8_t h[JOURNAL_HEADER_SIZE];
    header_encode(h, fingerprint);
    int rc = write_full(fd, h, sizeof h, 0);
    if (rc == 0)
        rc = fsync(fd);
    if (rc == 0)
        rc = link(tmp, path);
    int saved = errno;
    unlink(tmp);
    if (rc == 0)
        rc = dir_sync(path);
    if (rc != 0) {
        saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// Reads and checks the record at off of a file of size bytes; on RECORD_VALID its payload is
/// in j->buf + JOURNAL_RECORD_HEAD.
static RecordCheck record_read(Journal *j, uint64_t off, uint64_t size, uint32_t *len,
                               uint64_t *key)
{
    uint8_t head[JOURNAL_RECORD_HEAD];
    if (size - off < JOURNAL_RECORD_HEAD)
        return RECORD_BAD;
    if (read_full(j->fd, head, sizeof head, off) != (ssize_t)sizeof head)
        return RECORD_IO;
    *len = get_le32(head);
    *key = get_le64(head + 4);
    if (*len > JOURNAL_RECORD_MAX || size - off - JOURNAL_RECORD_HEAD < *len)
        return RECORD_BAD;
    if (!buf_reserve(j, JOURNAL_RECORD_HEAD + (size_t)*len)) {
        errno = ENOMEM;
        return RECORD_IO;
    }
    uint8_t *payload = j->buf + JOURNAL_RECORD_HEAD;
    if (*len && read_full(j->fd, payload, *len, off + JOURNAL_RECORD_HEAD) != (ssize_t)*len)
        return RECORD_IO;
    return record_crc(head + 4, payload, *len) == get_le32(head + 12) ? RECORD_VALID : RECORD_BAD;
}

/// Whether a valid record starts anywhere in mem[from, n).
static bool region_has_record(const uint8_t *mem, size_t from, size_t n)
{
    for (size_t p = from; p + JOURNAL_RECORD_HEAD <= n; p++) {
        uint32_t len = get_le32(mem + p);
        if (len > JOURNAL_RECORD_MAX || n - p - JOURNAL_RECORD_HEAD < len)
            continue;
        if (record_crc(mem + p + 4, mem + p + JOURNAL_RECORD_HEAD, len) == get_le32(mem + p + 12))
            return true;
    }
    return false;
}

/// Decides about the bad record at off: a torn tail (JOURNAL_OK) when it is within one
/// record's reach of the end and no valid record starts after it, else JOURNAL_ERR_CORRUPT.
static JournalStatus tail_judge(Journal *j, uint64_t off, uint64_t size, char *why, size_t why_len)
{
    uint64_t rest = size - off;
    if (rest > TAIL_MAX) {
        set_why(why, why_len,
                "damaged record at byte %llu with %llu bytes after it (more than one torn "
                "append leaves)",
                (unsigned long long)off, (unsigned long long)rest);
        return JOURNAL_ERR_CORRUPT;
    }
    uint8_t *mem = malloc((size_t)rest);
    if (!mem)
        return JOURNAL_ERR_NOMEM;
    JournalStatus st = JOURNAL_OK;
    if (read_full(j->fd, mem, (size_t)rest, off) != (ssize_t)rest) {
        set_why(why, why_len, "reading the journal at byte %llu: %s", (unsigned long long)off,
                strerror(errno));
        st = JOURNAL_ERR_IO;
    } else if (region_has_record(mem, 1, (size_t)rest)) {
        set_why(why, why_len, "damaged record at byte %llu followed by valid records",
                (unsigned long long)off);
        st = JOURNAL_ERR_CORRUPT;
    }
    free(mem);
    return st;
}

/// Pass 1: checks every record; *end is where the valid records end (a torn tail after it).
static JournalStatus journal_verify(Journal *j, uint64_t size, uint64_t *end, char *why,
                                    size_t why_len)
{
    uint64_t off = JOURNAL_HEADER_SIZE;
    while (off < size) {
        uint32_t len;
        uint64_t key;
        RecordCheck rc = record_read(j, off, size, &len, &key);
        if (rc == RECORD_IO) {
            set_why(why, why_len, "reading the journal at byte %llu: %s", (unsigned long long)off,
                    strerror(errno));
            return errno == ENOMEM ? JOURNAL_ERR_NOMEM : JOURNAL_ERR_IO;
        }
        if (rc == RECORD_BAD) {
            *end = off;
            return tail_judge(j, off, size, why, why_len);
        }
        off += JOURNAL_RECORD_HEAD + len;
    }
    *end = off;
    return JOURNAL_OK;
}

static uint64_t key_hash(uint64_t k)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    return k ^ (k >> 31);
}

/// Adds key: 1 when new, 0 when already present, -1 out of memory.
static int keyset_add(KeySet *s, uint64_t key)
{
    if (key == 0) {
        int added = !s->has_zero;
        s->has_zero = true;
        return added;
    }
    if (2 * (s->used + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        uint64_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i])
                continue;
            size_t h = (size_t)key_hash(s->slots[i]) & (cap - 1);
            while (slots[h])
                h = (h + 1) & (cap - 1);
            slots[h] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t h = (size_t)key_hash(key) & (s->cap - 1);
    for (; s->slots[h]; h = (h + 1) & (s->cap - 1))
        if (s->slots[h] == key)
            return 0;
    s->slots[h] = key;
    s->used++;
    return 1;
}

/// Pass 2: hands the first record of each key in [header, end) to fn.
static JournalStatus journal_replay(Journal *j, uint64_t end, JournalReplayFn fn, void *ctx,
                                    JournalReplayStats *stats, char *why, size_t why_len)
{
    KeySet seen = {0};
    JournalStatus st = JOURNAL_OK;
    uint64_t off = JOURNAL_HEADER_SIZE;
    while (off < end) {
        uint32_t len;
        uint64_t key;
        RecordCheck rc = record_read(j, off, end, &len, &key);
        if (rc != RECORD_VALID) {
            // Pass 1 found it valid: the file changed under us or the disk failed.
            set_why(why, why_len, "journal record at byte %llu changed while reading it",
                    (unsigned long long)off);
            st = rc == RECORD_IO && errno == ENOMEM ? JOURNAL_ERR_NOMEM : JOURNAL_ERR_IO;
            goto done;
        }
        int added = keyset_add(&seen, key);
        if (added < 0) {
            st = JOURNAL_ERR_NOMEM;
            goto done;
        }
        stats->records++;
        if (!added) {
            stats->duplicates++;
        } else if (fn && fn(ctx, key, j->buf + JOURNAL_RECORD_HEAD, len) != 0) {
            set_why(why, why_len, "replay stopped by the caller at byte %llu (key %llu)",
                    (unsigned long long)off, (unsigned long long)key);
            st = JOURNAL_ERR_CALLBACK;
            goto done;
        }
        off += JOURNAL_RECORD_HEAD + len;
    }
done:
    free(seen.slots);
    return st;
}

/// Opens path, creating it when missing; *created tells which.
static int journal_open_fd(const char *path, uint64_t fingerprint, bool *created)
{
    *created = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
            return fd;
        fd = journal_create(path, fingerprint);
        if (fd >= 0 || errno != EEXIST) {
            *created = fd >= 0;
            return fd;
        }
        // Another process created it between our open and link: open theirs.
    }
    return -1;
}

/// Locks the file and checks its header.
static JournalStatus journal_check_file(Journal *j, uint64_t fingerprint, uint64_t *size, char *why,
                                        size_t why_len)
{
    if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
        set_why(why, why_len, "journal locked: %s", strerror(errno));
        return errno == EWOULDBLOCK ? JOURNAL_ERR_LOCKED : JOURNAL_ERR_IO;
    }
    struct stat sb;
    if (fstat(j->fd, &sb) != 0) {
        set_why(why, why_len, "fstat: %s", strerror(errno));
        return JOURNAL_ERR_IO;
    }
    if (!S_ISREG(sb.st_mode)) {
        set_why(why, why_len, "not a journal (not a regular file)");
        return JOURNAL_ERR_HEADER;
    }
    *size = (uint64_t)sb.st_size;
    uint8_t h[JOURNAL_HEADER_SIZE];
    ssize_t n = read_full(j->fd, h, sizeof h, 0);
    if (n < 0) {
        set_why(why, why_len, "reading the journal header: %s", strerror(errno));
        return JOURNAL_ERR_IO;
    }
    return header_check(h, (size_t)n, fingerprint, why, why_len);
}

JournalStatus journal_open(Journal **out, const char *path, uint64_t fingerprint,
                           JournalReplayFn fn, void *ctx, JournalReplayStats *stats, char *why,
                           size_t why_len)
{
    JournalReplayStats local;
    if (!stats)
        stats = &local;
    *stats = (JournalReplayStats){0};
    *out = NULL;
    set_why(why, why_len, "ok");
    Journal *j = calloc(1, sizeof *j);
    if (!j)
        return JOURNAL_ERR_NOMEM;
    JournalStatus st = JOURNAL_OK;
    j->fd = journal_open_fd(path, fingerprint, &stats->created);
    if (j->fd < 0) {
        set_why(why, why_len, "%s: %s", path, strerror(errno));
        st = JOURNAL_ERR_IO;
        goto fail;
    }
    uint64_t size = 0, end = 0;
    st = journal_check_file(j, fingerprint, &size, why, why_len);
    if (st == JOURNAL_OK)
        st = journal_verify(j, size, &end, why, why_len);
    if (st == JOURNAL_OK)
        st = journal_replay(j, end, fn, ctx, stats, why, why_len);
    if (st != JOURNAL_OK)
        goto fail;
    if (end < size) {
        // The torn tail goes only after a successful replay: a refused journal stays as is.
        if (ftruncate(j->fd, (off_t)end) != 0 || fsync(j->fd) != 0) {
            set_why(why, why_len, "cutting the torn tail at byte %llu: %s", (unsigned long long)end,
                    strerror(errno));
            st = JOURNAL_ERR_IO;
            goto fail;
        }
        stats->torn_bytes = size - end;
    }
    j->end = end;
    stats->bytes = end;
    *out = j;
    return JOURNAL_OK;
fail:
    journal_close(j);
    return st;
}

/// Records why an append failed, for journal_last_error.
static JournalStatus append_failed(Journal *j, const char *what, int err, bool fatal)
{
    j->err = err;
    j->failed = j->failed || fatal;
    snprintf(j->last_error, sizeof j->last_error, "%s at byte %llu: %s", what,
             (unsigned long long)j->end, strerror(err));
    return JOURNAL_ERR_IO;
}

JournalStatus journal_append(Journal *j, uint64_t key, const void *payload, size_t len)
{
    if (j->failed)
        return JOURNAL_ERR_FAILED;
    if (len > JOURNAL_RECORD_MAX)
        return JOURNAL_ERR_TOO_LARGE;
    size_t n = JOURNAL_RECORD_HEAD + len;
    if (!buf_reserve(j, n))
        return JOURNAL_ERR_NOMEM;
    uint8_t *rec = j->buf;
    put_le32(rec, (uint32_t)len);
    put_le64(rec + 4, key);
    if (len)
        memcpy(rec + JOURNAL_RECORD_HEAD, payload, len);
    put_le32(rec + 12, record_crc(rec + 4, rec + JOURNAL_RECORD_HEAD, (uint32_t)len));
    if (write_full(j->fd, rec, n, j->end) != 0) {
        int err = errno;
        // Undo a partial write so that the next record does not follow a torn one.
        bool undone = ftruncate(j->fd, (off_t)j->end) == 0;
        return append_failed(j, "write", err, !undone);
    }
    if (fdatasync(j->fd) != 0) {
        int err = errno;
        // After a failed sync the page cache cannot be trusted: cut the record if possible
        // and refuse further appends until a reopen replays what is really on disk.
        (void)!ftruncate(j->fd, (off_t)j->end);
        return append_failed(j, "fdatasync", err, true);
    }
    j->end += n;
    return JOURNAL_OK;
}

const char *journal_last_error(const Journal *j) { return j->last_error; }

int journal_last_errno(const Journal *j) { return j->err; }

uint64_t journal_size(const Journal *j) { return j->end; }

void journal_close(Journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd); // closing releases the flock
    free(j->buf);
    free(j);
}
