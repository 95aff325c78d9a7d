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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <limits.h>

#include "files.h"

// A crash tears at most the one record being appended; the filesystem may add a few blocks
// of zeros after it. More bytes than this after a bad record cannot be a torn append.
#define TAIL_SLACK ((uint64_t)64 << 10)
#define TAIL_MAX   ((uint64_t)JOURNAL_RECORD_HEAD + JOURNAL_RECORD_MAX + TAIL_SLACK)

static const uint8_t MAGIC[9] = {'X', 'Q', 'J', 'O', 'U', 'R', 'N', 'A', 'L'};

struct Journal {
    int fd;
    uint64_t start; // where the records begin: after the header and its identity text
    uint64_t end;   // size of the durable journal: where the next record goes
    bool failed;    // an append failed in a way only a reopen repairs
    int err;        // errno of the last failed append
    char last_error[256];
    uint8_t *buf; // replay: one record; appends: the records staged for the next commit
    size_t buf_cap;
    size_t staged;            // bytes of staged records at the start of buf
    uint64_t staged_records;  // how many records they are
    JournalCounters counters; // what this Journal wrote since it was opened
    char run_id[JOURNAL_RUN_ID_LEN + 1];
};

/// A header as read from a file: the identity text is in a buffer of its own.
typedef struct {
    uint32_t version;
    char run_id[JOURNAL_RUN_ID_LEN + 1];
    uint8_t *text; // malloc'd, len bytes
    uint32_t len;
} Header;

/// The keys seen during replay: open addressing, 0 marks an empty slot (key 0 kept aside).
typedef struct {
    uint64_t *slots;
    size_t cap, used;
    bool has_zero;
} KeySet;

// RECORD_BAD is the file's fault (short, too long, CRC mismatch) and may be a torn tail;
// RECORD_IO is the system's (a read failed, out of memory) and never judged as a tail.
typedef enum { RECORD_VALID, RECORD_BAD, RECORD_IO } RecordCheck;

static const char *const STATUS_TEXT[JOURNAL_STATUS_NB] = {
    [JOURNAL_OK] = "ok",
    [JOURNAL_ERR_IO] = "journal I/O error",
    [JOURNAL_ERR_NOMEM] = "out of memory",
    [JOURNAL_ERR_HEADER] = "not a journal (bad or damaged header)",
    [JOURNAL_ERR_VERSION] = "journal of another format version",
    [JOURNAL_ERR_IDENTITY] = "journal of another job (its identity differs)",
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

/// The record's CRC covers its key with the payload, so a record moved under another key (or
/// a key bit flipped) fails the check like damaged payload does. The length is not covered:
/// a wrong length makes the CRC land on other bytes and fail too.
static uint32_t record_crc(const uint8_t *key_bytes, const uint8_t *payload, uint32_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, key_bytes, 8);
    if (len)
        crc = crc32(crc, payload, len);
    return (uint32_t)crc;
}

/// why is optional everywhere in this file: NULL or 0 bytes skips the text.
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

/// Grows j->buf to hold n bytes, keeping its content (the staged records); false when out of
/// memory, with the buffer unchanged.
static bool buf_reserve(Journal *j, size_t n)
{
    if (n <= j->buf_cap)
        return true;
    size_t cap = j->buf_cap > n / 2 ? 2 * j->buf_cap : n; // doubling: a batch grows it once
    uint8_t *p = realloc(j->buf, cap);
    if (!p)
        return false;
    j->buf = p;
    j->buf_cap = cap;
    return true;
}

/// The header's quick identity hash (FNV-1a 64): shown in messages; the text itself decides.
static uint64_t text_hash(const void *text, size_t len)
{
    return files_fnv(FILES_FNV_BASIS, text, len);
}

/// CRC of the fixed header up to the CRC field (bytes 0..43), then the identity text: any
/// damage to the header or the identity is a checksum mismatch.
static uint32_t header_crc(const uint8_t *fixed, const void *text, size_t len)
{
    uLong crc = crc32(crc32(0L, Z_NULL, 0), fixed, JOURNAL_HEADER_FIXED - 4);
    if (len)
        crc = crc32(crc, text, (uInt)len);
    return (uint32_t)crc;
}

/// The fixed header at the offsets of journal.h; the bytes it leaves (9..11) are zero, which
/// header_read checks.
static void header_encode(uint8_t *h, const JournalIdentity *id, const char *run_id)
{
    memset(h, 0, JOURNAL_HEADER_FIXED);
    memcpy(h, MAGIC, sizeof MAGIC);
    files_put_le32(h + 12, JOURNAL_VERSION);
    files_put_le64(h + 16, text_hash(id->text, id->len));
    memcpy(h + 24, run_id, JOURNAL_RUN_ID_LEN);
    files_put_le32(h + 40, (uint32_t)id->len);
    files_put_le32(h + 44, header_crc(h, id->text, id->len));
}

/// A new run id: 8 random bytes as 16 hex digits; -1 with errno when no randomness is had.
static int run_id_new(char out[JOURNAL_RUN_ID_LEN + 1])
{
    uint8_t r[JOURNAL_RUN_ID_LEN / 2];
    // Two runs in the same directory must never share an id (reports name the run by it),
    // so the id is random rather than derived from the time or the job.
    ssize_t got = getrandom(r, sizeof r, 0);
    if (got != (ssize_t)sizeof r) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        got = fd < 0 ? -1 : read_full(fd, r, sizeof r, 0);
        if (fd >= 0)
            close(fd);
        if (got != (ssize_t)sizeof r) {
            errno = got < 0 ? errno : EIO;
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

/// Checks the fixed part of a header in order: magic, version (whose layout may differ),
/// then the identity length against the cap.
static JournalStatus header_check_fixed(const uint8_t *h, size_t n, char *why, size_t why_len)
{
    if (n < sizeof MAGIC || memcmp(h, MAGIC, sizeof MAGIC) != 0) {
        set_why(why, why_len, "not a journal (%s)",
                n < sizeof MAGIC ? "header too short" : "bad magic");
        return JOURNAL_ERR_HEADER;
    }
    if (n < 16) {
        set_why(why, why_len, "not a journal (header too short)");
        return JOURNAL_ERR_HEADER;
    }
    // The version sits at byte 12 in every format, so it can be read before the rest is trusted.
    uint32_t version = files_get_le32(h + 12);
    if (version == 1) {
        set_why(why, why_len,
                "journal of an older xqforge format (version 1): start afresh with --fresh");
        return JOURNAL_ERR_VERSION;
    }
    if (version != JOURNAL_VERSION) {
        set_why(why, why_len, "journal format version %u, this build reads version %u", version,
                JOURNAL_VERSION);
        return JOURNAL_ERR_VERSION;
    }
    if (n < JOURNAL_HEADER_FIXED) {
        set_why(why, why_len, "not a journal (header too short)");
        return JOURNAL_ERR_HEADER;
    }
    if (files_get_le32(h + 40) > JOURNAL_IDENTITY_MAX) {
        set_why(why, why_len, "journal header damaged (identity length %u above the cap)",
                files_get_le32(h + 40));
        return JOURNAL_ERR_HEADER;
    }
    return JOURNAL_OK;
}

/// Reads and checks the header of fd (size bytes): *out gets its parts (free out->text).
static JournalStatus header_read(int fd, uint64_t size, Header *out, char *why, size_t why_len)
{
    uint8_t h[JOURNAL_HEADER_FIXED];
    *out = (Header){0};
    ssize_t n = read_full(fd, h, sizeof h, 0);
    if (n < 0) {
        set_why(why, why_len, "reading the journal header: %s", strerror(errno));
        return JOURNAL_ERR_IO;
    }
    JournalStatus st = header_check_fixed(h, (size_t)n, why, why_len);
    if (st != JOURNAL_OK)
        return st;
    out->version = files_get_le32(h + 12);
    out->len = files_get_le32(h + 40);
    if (size < (uint64_t)JOURNAL_HEADER_FIXED + out->len) {
        set_why(why, why_len, "not a journal (header too short)");
        return JOURNAL_ERR_HEADER;
    }
    if (!(out->text = malloc(out->len ? out->len : 1)))
        return JOURNAL_ERR_NOMEM;
    if (read_full(fd, out->text, out->len, JOURNAL_HEADER_FIXED) != (ssize_t)out->len) {
        set_why(why, why_len, "reading the journal header: %s", strerror(errno ? errno : EIO));
        return JOURNAL_ERR_IO;
    }
    // Everything is checked before anything is returned: the CRC, the zero padding, the run id's
    // digits, and the hash against the text (a header whose fields disagree is damaged).
    bool hex = true;
    for (unsigned i = 0; i < JOURNAL_RUN_ID_LEN; i++)
        hex = hex && strchr("0123456789abcdef", h[24 + i]) && h[24 + i];
    if (files_get_le32(h + 44) != header_crc(h, out->text, out->len) || h[9] || h[10] || h[11] ||
        !hex || files_get_le64(h + 16) != text_hash(out->text, out->len)) {
        set_why(why, why_len, "journal header damaged (checksum mismatch)");
        return JOURNAL_ERR_HEADER;
    }
    memcpy(out->run_id, h + 24, JOURNAL_RUN_ID_LEN);
    out->run_id[JOURNAL_RUN_ID_LEN] = '\0';
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
static int journal_create(const char *path, const JournalIdentity *want)
{
    char tmp[PATH_MAX], run_id[JOURNAL_RUN_ID_LEN + 1];
    if (run_id_new(run_id) != 0)
        return -1;
    if (snprintf(tmp, sizeof tmp, "%s.new", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint8_t h[JOURNAL_HEADER_FIXED];
    header_encode(h, want, run_id);
    int rc = write_full(fd, h, sizeof h, 0);
    if (rc == 0 && want->len)
        rc = write_full(fd, want->text, want->len, sizeof h);
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
    // size - off cannot wrap: callers pass off < size. A record must end within size, so a torn
    // last record is RECORD_BAD, never a read past the end.
    if (size - off < JOURNAL_RECORD_HEAD)
        return RECORD_BAD;
    if (read_full(j->fd, head, sizeof head, off) != (ssize_t)sizeof head)
        return RECORD_IO;
    *len = files_get_le32(head);
    *key = files_get_le64(head + 4);
    if (*len > JOURNAL_RECORD_MAX || size - off - JOURNAL_RECORD_HEAD < *len)
        return RECORD_BAD;
    if (!buf_reserve(j, JOURNAL_RECORD_HEAD + (size_t)*len)) {
        errno = ENOMEM;
        return RECORD_IO;
    }
    uint8_t *payload = j->buf + JOURNAL_RECORD_HEAD;
    if (*len && read_full(j->fd, payload, *len, off + JOURNAL_RECORD_HEAD) != (ssize_t)*len)
        return RECORD_IO;
    return record_crc(head + 4, payload, *len) == files_get_le32(head + 12) ? RECORD_VALID
                                                                            : RECORD_BAD;
}

/// Whether a valid record starts anywhere in mem[from, n).
/// Tried at every byte offset, since after damage nothing says where the next record begins;
/// a random 32-bit CRC match is the only false positive, and it errs towards refusing.
static bool region_has_record(const uint8_t *mem, size_t from, size_t n)
{
    for (size_t p = from; p + JOURNAL_RECORD_HEAD <= n; p++) {
        uint32_t len = files_get_le32(mem + p);
        if (len > JOURNAL_RECORD_MAX || n - p - JOURNAL_RECORD_HEAD < len)
            continue;
        if (record_crc(mem + p + 4, mem + p + JOURNAL_RECORD_HEAD, len) ==
            files_get_le32(mem + p + 12))
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
        // From byte 1: byte 0 is the bad record itself.
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
    uint64_t off = j->start;
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

/// splitmix64's finalizer: keys are often consecutive unit numbers, and the table indexes by
/// the low bits, which must depend on every bit of the key.
static uint64_t key_hash(uint64_t k)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    return k ^ (k >> 31);
}

/// Adds key: 1 when new, 0 when already present, -1 out of memory.
/// Doubles at half full (linear probing stays short); key 0 cannot mark an empty slot and is
/// kept in has_zero. This set lives only for one replay.
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
/// The first, because it is the one that counted when it was written; a later record of the
/// same key is skipped and reported (duplicates), so replay counts each key once, as the run did.
static JournalStatus journal_replay(Journal *j, uint64_t end, JournalReplayFn fn, void *ctx,
                                    JournalReplayStats *stats, char *why, size_t why_len)
{
    KeySet seen = {0};
    JournalStatus st = JOURNAL_OK;
    uint64_t off = j->start;
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
static int journal_open_fd(const char *path, const JournalIdentity *want, bool *created)
{
    *created = false;
    // Two attempts cover the one race there is: the file appears between our open and our link.
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
            return fd;
        fd = journal_create(path, want);
        if (fd >= 0 || errno != EEXIST) {
            *created = fd >= 0;
            return fd;
        }
        // Another process created it between our open and link: open theirs.
    }
    return -1;
}

/// Locks the file and checks its header against the identity wanted.
static JournalStatus journal_check_file(Journal *j, const JournalIdentity *want, uint64_t *size,
                                        char *why, size_t why_len)
{
    // Locked before the header is read: once the lock is held no other process appends, so the
    // size read next is the size that is checked and replayed. Not waiting: a second run on the
    // same output is refused at once, not queued.
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
    Header h;
    JournalStatus st = header_read(j->fd, *size, &h, why, why_len);
    if (st == JOURNAL_OK && (h.len != want->len || (h.len && memcmp(h.text, want->text, h.len)))) {
        set_why(why, why_len,
                "journal of another job: its identity differs (journal %016llx, this job %016llx)",
                (unsigned long long)text_hash(h.text, h.len),
                (unsigned long long)text_hash(want->text, want->len));
        st = JOURNAL_ERR_IDENTITY;
    }
    if (st == JOURNAL_OK) {
        j->start = JOURNAL_HEADER_FIXED + (uint64_t)h.len;
        memcpy(j->run_id, h.run_id, sizeof j->run_id);
    }
    free(h.text);
    return st;
}

JournalStatus journal_open(Journal **out, const char *path, const JournalIdentity *want,
                           JournalReplayFn fn, void *ctx, JournalReplayStats *stats, char *why,
                           size_t why_len)
{
    JournalReplayStats local;
    JournalIdentity none = {"", 0};
    if (!stats)
        stats = &local;
    if (!want)
        want = &none;
    *stats = (JournalReplayStats){0};
    *out = NULL;
    set_why(why, why_len, "ok");
    if (want->len > JOURNAL_IDENTITY_MAX) {
        set_why(why, why_len, "identity of %zu bytes, above the %u-byte cap", want->len,
                JOURNAL_IDENTITY_MAX);
        return JOURNAL_ERR_TOO_LARGE;
    }
    Journal *j = calloc(1, sizeof *j);
    if (!j)
        return JOURNAL_ERR_NOMEM;
    JournalStatus st = JOURNAL_OK;
    j->fd = journal_open_fd(path, want, &stats->created);
    if (j->fd < 0) {
        set_why(why, why_len, "%s: %s", path, strerror(errno));
        st = JOURNAL_ERR_IO;
        goto fail;
    }
    uint64_t size = 0, end = 0;
    st = journal_check_file(j, want, &size, why, why_len);
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

JournalStatus journal_scan(const char *path, JournalReplayFn fn, void *ctx, char *why,
                           size_t why_len)
{
    // Read-only and without the lock or the identity check: a look at a journal (possibly of a run
    // still going), that never truncates its tail nor writes anything.
    Journal j = {.fd = open(path, O_RDONLY | O_CLOEXEC)};
    if (j.fd < 0) {
        set_why(why, why_len, "%s: %s", path, strerror(errno));
        return JOURNAL_ERR_IO;
    }
    struct stat sb;
    Header h = {0};
    JournalStatus st = JOURNAL_ERR_IO;
    if (fstat(j.fd, &sb) != 0)
        set_why(why, why_len, "fstat: %s", strerror(errno));
    else
        st = header_read(j.fd, (uint64_t)sb.st_size, &h, why, why_len);
    uint64_t end = 0;
    JournalReplayStats stats = {0};
    if (st == JOURNAL_OK) {
        j.start = JOURNAL_HEADER_FIXED + (uint64_t)h.len;
        st = journal_verify(&j, (uint64_t)sb.st_size, &end, why, why_len);
    }
    if (st == JOURNAL_OK)
        st = journal_replay(&j, end, fn, ctx, &stats, why, why_len);
    free(h.text);
    free(j.buf);
    close(j.fd);
    return st;
}

/// fdatasync, its time added to the counters (the benchmark's "time in fsync").
// fdatasync, not fsync: it still flushes the file size a reader needs, without the inode's
// times.
static int timed_sync(Journal *j)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = fdatasync(j->fd);
    clock_gettime(CLOCK_MONOTONIC, &b);
    j->counters.sync_s += (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    return rc;
}

/// Records why an append failed, for journal_last_error.
/// fatal: the file may hold bytes that were not committed (nothing could cut them), so every
/// later append is refused until a reopen judges the file again.
static JournalStatus append_failed(Journal *j, const char *what, int err, bool fatal)
{
    j->err = err;
    j->failed = j->failed || fatal;
    snprintf(j->last_error, sizeof j->last_error, "%s at byte %llu: %s", what,
             (unsigned long long)j->end, strerror(err));
    return JOURNAL_ERR_IO;
}

// A staged record is complete (length, key, CRC) in memory; nothing reaches the file before
// journal_commit, so a batch of results costs one write and one fdatasync.
JournalStatus journal_stage(Journal *j, uint64_t key, const void *payload, size_t len)
{
    if (j->failed)
        return JOURNAL_ERR_FAILED;
    if (len > JOURNAL_RECORD_MAX)
        return JOURNAL_ERR_TOO_LARGE;
    size_t n = JOURNAL_RECORD_HEAD + len;
    if (!buf_reserve(j, j->staged + n))
        return JOURNAL_ERR_NOMEM;
    uint8_t *rec = j->buf + j->staged;
    files_put_le32(rec, (uint32_t)len);
    files_put_le64(rec + 4, key);
    if (len)
        memcpy(rec + JOURNAL_RECORD_HEAD, payload, len);
    files_put_le32(rec + 12, record_crc(rec + 4, rec + JOURNAL_RECORD_HEAD, (uint32_t)len));
    j->staged += n;
    j->staged_records++;
    return JOURNAL_OK;
}

JournalStatus journal_commit(Journal *j)
{
    size_t n = j->staged;
    uint64_t records = j->staged_records;
    j->staged = 0; // written or not, the batch leaves the stage
    j->staged_records = 0;
    if (j->failed)
        return JOURNAL_ERR_FAILED;
    if (n == 0)
        return JOURNAL_OK;
    if (write_full(j->fd, j->buf, n, j->end) != 0) {
        int err = errno;
        // Undo a partial write so that the next record does not follow a torn one.
        bool undone = ftruncate(j->fd, (off_t)j->end) == 0;
        return append_failed(j, "write", err, !undone);
    }
    j->counters.syncs++;
    if (timed_sync(j) != 0) {
        int err = errno;
        // After a failed sync the page cache cannot be trusted: cut the records if possible
        // and refuse further appends until a reopen replays what is really on disk.
        (void)!ftruncate(j->fd, (off_t)j->end);
        return append_failed(j, "fdatasync", err, true);
    }
    j->end += n;
    j->counters.records += records;
    j->counters.bytes += n;
    j->counters.commits++;
    return JOURNAL_OK;
}

JournalStatus journal_append(Journal *j, uint64_t key, const void *payload, size_t len)
{
    JournalStatus st = journal_stage(j, key, payload, len);
    if (st != JOURNAL_OK)
        return st;
    return journal_commit(j);
}

// Cuts the journal back to size, a record boundary the caller got from journal_staged_end
// earlier; the staged records go too. Only the records area may be cut, never the header.
JournalStatus journal_cut(Journal *j, uint64_t size)
{
    if (j->failed)
        return JOURNAL_ERR_FAILED;
    j->staged = 0;
    j->staged_records = 0;
    if (size < j->start || size >= j->end)
        return size == j->end ? JOURNAL_OK : JOURNAL_ERR_CORRUPT;
    j->counters.syncs++;
    if (ftruncate(j->fd, (off_t)size) != 0 || timed_sync(j) != 0)
        return append_failed(j, "cutting the journal", errno, true);
    j->end = size;
    return JOURNAL_OK;
}

uint64_t journal_staged_end(const Journal *j) { return j->end + j->staged; }

void journal_counters(const Journal *j, JournalCounters *out) { *out = j->counters; }

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

const char *journal_run_id(const Journal *j) { return j->run_id; }

JournalStatus journal_peek(const char *path, char *identity, size_t cap, size_t *len,
                           char run_id[JOURNAL_RUN_ID_LEN + 1], char *why, size_t why_len)
{
    set_why(why, why_len, "ok");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        set_why(why, why_len, "%s: %s", path, strerror(errno));
        return JOURNAL_ERR_IO;
    }
    struct stat sb;
    Header h = {0};
    JournalStatus st = JOURNAL_OK;
    if (fstat(fd, &sb) != 0) {
        set_why(why, why_len, "fstat: %s", strerror(errno));
        st = JOURNAL_ERR_IO;
    } else if (!S_ISREG(sb.st_mode)) {
        set_why(why, why_len, "not a journal (not a regular file)");
        st = JOURNAL_ERR_HEADER;
    } else {
        st = header_read(fd, (uint64_t)sb.st_size, &h, why, why_len);
    }
    close(fd);
    if (st == JOURNAL_OK) {
        if (cap) {
            size_t n = h.len < cap - 1 ? h.len : cap - 1;
            memcpy(identity, h.text, n);
            identity[n] = '\0';
        }
        if (len)
            *len = h.len;
        if (run_id)
            memcpy(run_id, h.run_id, JOURNAL_RUN_ID_LEN + 1);
    }
    free(h.text);
    return st;
}

// ---- Starting afresh ----------------------------------------------------------------------

/// Whether a relative name stays inside its directory: not absolute, no ".." component.
/// Output names come from the job file: a name that climbs out of the output directory
/// must not make --fresh move someone else's file.
static bool name_inside(const char *name)
{
    if (!name[0] || name[0] == '/')
        return false;
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += n;
        p += *p == '/';
    }
    return true;
}

/// Makes the directories of name's parents under base (base itself exists).
static int make_parents(const char *base, const char *name)
{
    char path[PATH_MAX];
    for (const char *slash = strchr(name, '/'); slash; slash = strchr(slash + 1, '/')) {
        if (snprintf(path, sizeof path, "%s/%.*s", base, (int)(slash - name), name) >=
            (int)sizeof path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

/// Creates dir/previous-YYYYmmdd-HHMMSS[-N] into out.
static int make_previous_dir(const char *dir, char *out, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    // Local time: the directory's name is for the person who looks at it. Two fresh starts within
    // a second get -2, -3, ...; mkdir, not a stat, decides, so two processes never share one.
    if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm)) {
        errno = EINVAL;
        return -1;
    }
    for (int k = 1; k < 1000; k++) {
        int n = k == 1 ? snprintf(out, len, "%s/previous-%s", dir, stamp)
                       : snprintf(out, len, "%s/previous-%s-%d", dir, stamp, k);
        if (n < 0 || (size_t)n >= len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir(out, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/// Locks every existing regular file of names (shared, not waiting) into fds[i] (-1 when
/// none): a journal still open in another process refuses the move. Returns how many names
/// exist, or -1 with why.
static int check_names(const char *dir, const char *const *names, int n, int *fds, char *why,
                       size_t why_len)
{
    int existing = 0;
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat sb;
        if (!names[i] || !names[i][0])
            continue; // an output the job does not write
        if (!name_inside(names[i])) {
            set_why(why, why_len, "'%s' is not a name inside %s", names[i], dir);
            return -1;
        }
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lstat(path, &sb) != 0)
            continue;
        existing++;
        if (!S_ISREG(sb.st_mode))
            continue;
        // A shared lock conflicts with the exclusive flock of an open journal: that is how a run
        // still writing here is detected. The locks are held until the files are moved.
        fds[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (fds[i] >= 0 && flock(fds[i], LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            set_why(why, why_len, "%s is in use by another process (a run still going?)", path);
            return -1;
        }
    }
    return existing;
}

int journal_move_aside(const char *dir, const char *const *names, int n, char *moved_to, size_t len,
                       char *why, size_t why_len)
{
    char sub[PATH_MAX];
    sub[0] = '\0';
    set_why(why, why_len, "ok");
    if (moved_to && len)
        moved_to[0] = '\0';
    // Everything is checked (names, locks) before anything moves, and the files move only into a
    // new previous-* directory, so --fresh never overwrites or deletes an earlier run's files.
    int *fds = malloc((size_t)(n > 0 ? n : 1) * sizeof *fds);
    if (!fds) {
        set_why(why, why_len, "out of memory");
        return -1;
    }
    int moved = check_names(dir, names, n, fds, why, why_len);
    if (moved > 0 && make_previous_dir(dir, sub, sizeof sub) != 0) {
        set_why(why, why_len, "making a directory in %s: %s", dir, strerror(errno));
        moved = -1;
    }
    if (moved > 0) {
        moved = 0;
        for (int i = 0; i < n; i++) {
            char from[PATH_MAX], to[PATH_MAX];
            struct stat sb;
            if (!names[i] || !names[i][0])
                continue;
            snprintf(from, sizeof from, "%s/%s", dir, names[i]);
            if (lstat(from, &sb) != 0)
                continue; // absent, or listed twice
            if (snprintf(to, sizeof to, "%s/%s", sub, names[i]) >= (int)sizeof to ||
                make_parents(sub, names[i]) != 0 || rename(from, to) != 0) {
                set_why(why, why_len, "moving %s to %s: %s (%d moved before)", from, sub,
                        strerror(errno), moved);
                moved = -1;
                break;
            }
            moved++;
        }
        // The renames are durable once both directories are (best effort: a crash before
        // this leaves each file whole in one of the two places).
        char probe[PATH_MAX + 8];
        snprintf(probe, sizeof probe, "%s/x", sub);
        (void)dir_sync(probe);
        snprintf(probe, sizeof probe, "%s/x", dir);
        (void)dir_sync(probe);
    }
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (moved_to && len && sub[0])
        snprintf(moved_to, len, "%s", sub);
    return moved < 0 ? -1 : 0;
}
