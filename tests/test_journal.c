// SPDX-License-Identifier: MIT
// The coordinator's write-ahead journal: round trips, duplicate keys, torn tails cut at every
// length, damage in the middle refused with its offset, foreign headers (another identity, a
// version-1 journal) refused untouched with the stored identity readable, the run id kept
// across reopens, failing appends (a full disk through RLIMIT_FSIZE, a read-only descriptor),
// group commit (records staged, written and synced once, none kept when the commit fails, cut
// back after a verdict), reading a journal in use, and moving a run's files aside.
#define _GNU_SOURCE // nftw
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "journal.h"

enum { SEEN_MAX = 64, SEEN_HEAD = 64 };

// The identity of every test's job, and another job's.
static const char ID_TEXT[] = "kind=match\nengine.base.weights=0123456789abcdef\n";
static const JournalIdentity ID = {ID_TEXT, sizeof ID_TEXT - 1};
static const JournalIdentity OTHER = {"kind=sprt\n", 10};
#define HDR (JOURNAL_HEADER_FIXED + sizeof ID_TEXT - 1) // bytes before the first record

typedef struct {
    uint64_t key;
    size_t len;
    uint32_t crc;            // CRC-32 of the whole payload
    uint8_t head[SEEN_HEAD]; // its first bytes
} Seen;

typedef struct {
    Seen rec[SEEN_MAX];
    int n;
    int stop_at; // the callback fails on this record (-1: never)
} Collect;

typedef struct {
    char dir[64];
    char path[128];
    struct rlimit fsize; // restored by the teardown
} Fixture;

static int collect_fn(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Collect *c = ctx;
    if (c->n >= SEEN_MAX || c->n == c->stop_at)
        return 1;
    Seen *s = &c->rec[c->n++];
    s->key = key;
    s->len = len;
    s->crc = (uint32_t)crc32(0L, len ? payload : Z_NULL, (uInt)len);
    memset(s->head, 0, sizeof s->head);
    memcpy(s->head, payload, len < SEEN_HEAD ? len : SEEN_HEAD);
    return 0;
}

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/xqjournal-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/run.xqj", f->dir);
    getrlimit(RLIMIT_FSIZE, &f->fsize);
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int teardown(void **state)
{
    Fixture *f = *state;
    setrlimit(RLIMIT_FSIZE, &f->fsize);
    nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static Journal *open_ok(const char *path, Collect *c, JournalReplayStats *stats)
{
    Journal *j = NULL;
    char why[256];
    if (c) {
        memset(c, 0, sizeof *c);
        c->stop_at = -1;
    }
    JournalStatus st = journal_open(&j, path, &ID, collect_fn, c, stats, why, sizeof why);
    if (st != JOURNAL_OK)
        print_error("journal_open: %s (%s)\n", journal_strerror(st), why);
    assert_int_equal(st, JOURNAL_OK);
    assert_non_null(j);
    return j;
}

static void append_text(Journal *j, uint64_t key, const char *text)
{
    assert_int_equal(journal_append(j, key, text, strlen(text)), JOURNAL_OK);
}

static void assert_seen(const Collect *c, int i, uint64_t key, const char *text)
{
    assert_true(i < c->n);
    assert_int_equal(c->rec[i].key, key);
    assert_int_equal(c->rec[i].len, strlen(text));
    assert_memory_equal(c->rec[i].head, text, strlen(text));
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return (uint64_t)sb.st_size;
}

/// Reads the whole file (at most cap bytes) into buf; returns its size.
static size_t file_read(const char *path, uint8_t *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, cap, fp);
    fclose(fp);
    return n;
}

static void file_write(const char *path, const uint8_t *buf, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/// A journal of three records; off[i] is where record i starts, off[3] the end.
static void make_three(const char *path, uint64_t off[4])
{
    Journal *j = open_ok(path, NULL, NULL);
    const char *text[3] = {"pair 1: 1-0 0-1", "pair 2: 1/2-1/2 1-0", "pair 3: the last one"};
    off[0] = journal_size(j);
    for (int i = 0; i < 3; i++) {
        append_text(j, (uint64_t)i + 1, text[i]);
        off[i + 1] = journal_size(j);
    }
    journal_close(j);
    assert_int_equal(file_size(path), off[3]);
}

/// Records appended to a new journal come back on reopen in order with the same keys and
/// payloads, and the stats count them.
static void test_roundtrip(void **state)
{
    Fixture *f = *state;
    JournalReplayStats stats;
    Journal *j = open_ok(f->path, NULL, &stats);
    assert_true(stats.created);
    assert_int_equal(stats.records, 0);
    assert_int_equal(stats.bytes, HDR);
    assert_int_equal(file_size(f->path), HDR);
    append_text(j, 42, "first");
    append_text(j, 7, "second result");
    append_text(j, UINT64_MAX, "third");
    uint64_t size = journal_size(j);
    assert_int_equal(size, HDR + 3 * JOURNAL_RECORD_HEAD + 5 + 13 + 5);
    journal_close(j);

    Collect c;
    j = open_ok(f->path, &c, &stats);
    assert_false(stats.created);
    assert_int_equal(c.n, 3);
    assert_seen(&c, 0, 42, "first");
    assert_seen(&c, 1, 7, "second result");
    assert_seen(&c, 2, UINT64_MAX, "third");
    assert_int_equal(stats.records, 3);
    assert_int_equal(stats.duplicates, 0);
    assert_int_equal(stats.torn_bytes, 0);
    assert_int_equal(stats.bytes, size);
    assert_int_equal(journal_size(j), size);
    journal_close(j);
}

/// A key recorded twice is replayed once, with its first payload, and counted as duplicate.
static void test_duplicates(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "one (first)");
    append_text(j, 0, "zero (first)");
    append_text(j, 1, "one (again)");
    append_text(j, 3, "three");
    append_text(j, 0, "zero (again)");
    journal_close(j);

    Collect c;
    JournalReplayStats stats;
    j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 3);
    assert_seen(&c, 0, 1, "one (first)");
    assert_seen(&c, 1, 0, "zero (first)");
    assert_seen(&c, 2, 3, "three");
    assert_int_equal(stats.records, 5);
    assert_int_equal(stats.duplicates, 2);
    journal_close(j);
}

/// The last record cut at every length from 1 byte to all but one is dropped and truncated
/// away, the earlier records survive, and appending after the cut works.
static void test_torn_tail_every_cut(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t whole[1024];
    assert_int_equal(file_read(f->path, whole, sizeof whole), off[3]);

    for (uint64_t keep = 1; keep < off[3] - off[2]; keep++) {
        file_write(f->path, whole, (size_t)(off[2] + keep));
        Collect c;
        JournalReplayStats stats;
        Journal *j = open_ok(f->path, &c, &stats);
        assert_int_equal(c.n, 2);
        assert_seen(&c, 0, 1, "pair 1: 1-0 0-1");
        assert_seen(&c, 1, 2, "pair 2: 1/2-1/2 1-0");
        assert_int_equal(stats.torn_bytes, keep);
        assert_int_equal(stats.bytes, off[2]);
        assert_int_equal(file_size(f->path), off[2]);
        append_text(j, 3, "pair 3: the last one");
        journal_close(j);

        uint8_t again[1024];
        assert_int_equal(file_read(f->path, again, sizeof again), off[3]);
        assert_memory_equal(again, whole, (size_t)off[3]);
        j = open_ok(f->path, &c, &stats);
        assert_int_equal(c.n, 3);
        assert_int_equal(stats.torn_bytes, 0);
        journal_close(j);
    }
}

/// A whole last record with a bad CRC, or a tail of zeros (size written, data not), is cut.
static void test_damaged_tail_cut(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t buf[8192] = {0};
    size_t n = file_read(f->path, buf, sizeof buf);
    buf[off[3] - 1] ^= 0x01; // the last payload byte
    file_write(f->path, buf, n);
    Collect c;
    JournalReplayStats stats;
    Journal *j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 2);
    assert_int_equal(stats.torn_bytes, off[3] - off[2]);
    assert_int_equal(file_size(f->path), off[2]);
    journal_close(j);

    memset(buf + off[2], 0, sizeof buf - off[2]);
    file_write(f->path, buf, off[2] + 4096);
    j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 2);
    assert_int_equal(stats.torn_bytes, 4096);
    assert_int_equal(file_size(f->path), off[2]);
    journal_close(j);
}

/// Opens a journal that must be refused with `want`, the file unchanged and nothing replayed;
/// `mention` must appear in the message.
static void assert_refused(const char *path, const JournalIdentity *id, JournalStatus want,
                           const char *mention)
{
    uint8_t before[1024], after[1024];
    size_t n = file_read(path, before, sizeof before);
    Journal *j = (Journal *)&j; // must become NULL
    Collect c = {.stop_at = -1};
    char why[256];
    JournalStatus st = journal_open(&j, path, id, collect_fn, &c, NULL, why, sizeof why);
    assert_int_equal(st, want);
    assert_null(j);
    assert_int_equal(c.n, 0);
    if (!strstr(why, mention)) {
        print_error("message \"%s\" does not mention \"%s\"\n", why, mention);
        fail();
    }
    assert_int_equal(file_read(path, after, sizeof after), n);
    assert_memory_equal(after, before, n);
}

/// A damaged CRC in the middle is an error naming the record's byte offset, and the file is
/// left as it was.
static void test_corrupt_middle(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t buf[1024];
    size_t n = file_read(f->path, buf, sizeof buf);
    buf[off[1] + JOURNAL_RECORD_HEAD + 3] ^= 0x40; // a payload byte of record 2
    file_write(f->path, buf, n);
    char mention[64];
    snprintf(mention, sizeof mention, "byte %llu ", (unsigned long long)off[1]);
    assert_refused(f->path, &ID, JOURNAL_ERR_CORRUPT, mention);
}

/// A length field above JOURNAL_RECORD_MAX is corruption in the middle and a torn tail at
/// the end.
static void test_length_above_cap(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t whole[1024], buf[1024];
    size_t n = file_read(f->path, whole, sizeof whole);

    memcpy(buf, whole, n);
    put_le32(buf + off[1], JOURNAL_RECORD_MAX + 1);
    file_write(f->path, buf, n);
    char mention[64];
    snprintf(mention, sizeof mention, "byte %llu ", (unsigned long long)off[1]);
    assert_refused(f->path, &ID, JOURNAL_ERR_CORRUPT, mention);

    memcpy(buf, whole, n);
    put_le32(buf + off[2], JOURNAL_RECORD_MAX + 1);
    file_write(f->path, buf, n);
    Collect c;
    JournalReplayStats stats;
    Journal *j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 2);
    assert_int_equal(stats.torn_bytes, off[3] - off[2]);
    journal_close(j);
}

/// A record longer than JOURNAL_RECORD_MAX is corruption even when its CRC matches, and a bad
/// record with more bytes after it than one torn append can leave is never cut as a tail.
static void test_oversized_record(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t whole[1024];
    size_t n = file_read(f->path, whole, sizeof whole);
    size_t len = JOURNAL_RECORD_MAX + 1;
    size_t zeros = JOURNAL_RECORD_MAX + ((size_t)1 << 20); // past any torn append's reach
    uint8_t *big = calloc(1, zeros);
    assert_non_null(big);
    put_le32(big, (uint32_t)len); // key 0, then the CRC of key and payload (all zeros)
    uLong crc = crc32(crc32(0L, Z_NULL, 0), big + 4, 8);
    crc = crc32(crc, big + JOURNAL_RECORD_HEAD, (uInt)len);
    put_le32(big + 12, (uint32_t)crc);
    memcpy(big + JOURNAL_RECORD_HEAD + len, whole + off[2], (size_t)(off[3] - off[2]));

    FILE *fp = fopen(f->path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(whole, 1, (size_t)off[2], fp), off[2]);
    assert_int_equal(fwrite(big, 1, JOURNAL_RECORD_HEAD + len + (off[3] - off[2]), fp),
                     JOURNAL_RECORD_HEAD + len + (off[3] - off[2]));
    assert_int_equal(fclose(fp), 0);
    char why[256];
    Journal *j = NULL;
    assert_int_equal(journal_open(&j, f->path, &ID, NULL, NULL, NULL, why, sizeof why),
                     JOURNAL_ERR_CORRUPT);
    char mention[64];
    snprintf(mention, sizeof mention, "byte %llu ", (unsigned long long)off[2]);
    assert_non_null(strstr(why, mention));

    memset(big, 0, zeros); // a bad record, then 9 MiB of zeros
    put_le32(big, UINT32_MAX);
    fp = fopen(f->path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(whole, 1, n, fp), n);
    assert_int_equal(fwrite(big, 1, zeros, fp), zeros);
    assert_int_equal(fclose(fp), 0);
    uint64_t size = file_size(f->path);
    assert_int_equal(journal_open(&j, f->path, &ID, NULL, NULL, NULL, why, sizeof why),
                     JOURNAL_ERR_CORRUPT);
    assert_non_null(strstr(why, "torn append"));
    assert_int_equal(file_size(f->path), size);
    free(big);
}

/// Rewrites the header CRC of a version-2 journal in buf (identity text included).
static void fix_header_crc(uint8_t *buf)
{
    uint32_t len = (uint32_t)buf[40] | (uint32_t)buf[41] << 8 | (uint32_t)buf[42] << 16 |
                   (uint32_t)buf[43] << 24;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), buf, JOURNAL_HEADER_FIXED - 4);
    put_le32(buf + 44, (uint32_t)crc32(crc, buf + JOURNAL_HEADER_FIXED, len));
}

/// Bad magic, a damaged header (fixed part, run id or identity text), a newer format
/// version, an identity length above the cap and a short file are refused without changing
/// the file.
static void test_header_refused(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    uint8_t whole[1024], buf[1024];
    size_t n = file_read(f->path, whole, sizeof whole);

    memcpy(buf, whole, n);
    buf[0] = 'Y';
    file_write(f->path, buf, n);
    assert_refused(f->path, &ID, JOURNAL_ERR_HEADER, "bad magic");

    const size_t damaged[] = {17, 30, JOURNAL_HEADER_FIXED + 3}; // hash, run id, identity
    for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
        memcpy(buf, whole, n);
        buf[damaged[i]] ^= 0x01; // the header CRC left stale
        file_write(f->path, buf, n);
        assert_refused(f->path, &ID, JOURNAL_ERR_HEADER, "checksum");
    }

    memcpy(buf, whole, n);
    put_le32(buf + 12, JOURNAL_VERSION + 1);
    fix_header_crc(buf);
    file_write(f->path, buf, n);
    assert_refused(f->path, &ID, JOURNAL_ERR_VERSION, "version 3");

    memcpy(buf, whole, n);
    put_le32(buf + 40, JOURNAL_IDENTITY_MAX + 1);
    file_write(f->path, buf, n);
    assert_refused(f->path, &ID, JOURNAL_ERR_HEADER, "above the cap");

    file_write(f->path, whole, JOURNAL_HEADER_FIXED + 4); // the identity text cut
    assert_refused(f->path, &ID, JOURNAL_ERR_HEADER, "too short");
    file_write(f->path, whole, 12);
    assert_refused(f->path, &ID, JOURNAL_ERR_HEADER, "too short");
}

/// A journal of another identity is refused without replaying or changing it, and
/// journal_peek then reads its identity text and run id (cut to fit a small buffer, its
/// whole length still told).
static void test_identity_refused(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    Collect c;
    Journal *j = open_ok(f->path, &c, NULL);
    char run_id[JOURNAL_RUN_ID_LEN + 1];
    snprintf(run_id, sizeof run_id, "%s", journal_run_id(j));
    journal_close(j);

    assert_refused(f->path, &OTHER, JOURNAL_ERR_IDENTITY, "another job");
    JournalIdentity longer = {ID_TEXT, sizeof ID_TEXT}; // the same text and a NUL
    assert_refused(f->path, &longer, JOURNAL_ERR_IDENTITY, "identity differs");

    char text[256], peek_id[JOURNAL_RUN_ID_LEN + 1], why[256];
    size_t len = 0;
    assert_int_equal(journal_peek(f->path, text, sizeof text, &len, peek_id, why, sizeof why),
                     JOURNAL_OK);
    assert_int_equal(len, ID.len);
    assert_string_equal(text, ID_TEXT);
    assert_string_equal(peek_id, run_id);
    char small[5];
    assert_int_equal(journal_peek(f->path, small, sizeof small, &len, NULL, NULL, 0), JOURNAL_OK);
    assert_string_equal(small, "kind");
    assert_int_equal(len, ID.len);

    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.xqj", f->dir);
    assert_int_equal(journal_peek(missing, text, sizeof text, &len, NULL, why, sizeof why),
                     JOURNAL_ERR_IO);
    assert_true(access(missing, F_OK) != 0);
}

/// A version-1 journal (28-byte header with a job fingerprint) is refused, untouched, with a
/// message telling to start afresh; journal_peek refuses it the same way.
static void test_version1_refused(void **state)
{
    Fixture *f = *state;
    uint8_t v1[28 + JOURNAL_RECORD_HEAD + 4] = {'X', 'Q', 'J', 'O', 'U', 'R', 'N', 'A', 'L'};
    put_le32(v1 + 12, 1);
    for (int i = 0; i < 8; i++)
        v1[16 + i] = (uint8_t)(0x5851464f52474531ULL >> (8 * i));
    put_le32(v1 + 24, (uint32_t)crc32(crc32(0L, Z_NULL, 0), v1, 24));
    put_le32(v1 + 28, 4); // one record, key 1, payload "1-0 "
    v1[32] = 1;
    memcpy(v1 + 28 + JOURNAL_RECORD_HEAD, "1-0 ", 4);
    put_le32(v1 + 40, (uint32_t)crc32(crc32(crc32(0L, Z_NULL, 0), v1 + 32, 8), v1 + 44, 4));
    file_write(f->path, v1, sizeof v1);

    assert_refused(f->path, &ID, JOURNAL_ERR_VERSION,
                   "journal of an older xqforge format (version 1): start afresh with --fresh");
    char why[256];
    assert_int_equal(journal_peek(f->path, NULL, 0, NULL, NULL, why, sizeof why),
                     JOURNAL_ERR_VERSION);
    assert_non_null(strstr(why, "--fresh"));
}

/// The run id is 16 hex digits, kept by every reopen, and another new journal gets another.
static void test_run_id(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    char run_id[JOURNAL_RUN_ID_LEN + 1];
    snprintf(run_id, sizeof run_id, "%s", journal_run_id(j));
    assert_int_equal(strlen(run_id), JOURNAL_RUN_ID_LEN);
    assert_int_equal(strspn(run_id, "0123456789abcdef"), JOURNAL_RUN_ID_LEN);
    append_text(j, 1, "one");
    journal_close(j);

    Collect c;
    j = open_ok(f->path, &c, NULL);
    assert_string_equal(journal_run_id(j), run_id);
    assert_int_equal(c.n, 1);
    journal_close(j);

    char other[160];
    snprintf(other, sizeof other, "%s/other.xqj", f->dir);
    j = open_ok(other, NULL, NULL);
    assert_string_not_equal(journal_run_id(j), run_id);
    journal_close(j);
}

/// An identity above JOURNAL_IDENTITY_MAX is refused before any file is made, and an empty
/// identity is an identity like any other.
static void test_identity_limits(void **state)
{
    Fixture *f = *state;
    char *big = calloc(1, JOURNAL_IDENTITY_MAX + 1);
    assert_non_null(big);
    JournalIdentity too_big = {big, JOURNAL_IDENTITY_MAX + 1};
    Journal *j = NULL;
    char why[256];
    assert_int_equal(journal_open(&j, f->path, &too_big, NULL, NULL, NULL, why, sizeof why),
                     JOURNAL_ERR_TOO_LARGE);
    assert_null(j);
    assert_true(access(f->path, F_OK) != 0);
    free(big);

    JournalIdentity empty = {"", 0};
    assert_int_equal(journal_open(&j, f->path, &empty, NULL, NULL, NULL, why, sizeof why),
                     JOURNAL_OK);
    assert_int_equal(journal_size(j), JOURNAL_HEADER_FIXED);
    journal_close(j);
    assert_refused(f->path, &ID, JOURNAL_ERR_IDENTITY, "another job");
}

/// Finds this process's descriptor of path (the journal's own).
static int find_fd(const char *path)
{
    struct stat want, sb;
    assert_int_equal(stat(path, &want), 0);
    for (int fd = 3; fd < 1024; fd++)
        if (fstat(fd, &sb) == 0 && sb.st_dev == want.st_dev && sb.st_ino == want.st_ino)
            return fd;
    fail_msg("the journal's descriptor was not found");
    return -1;
}

/// A full disk (RLIMIT_FSIZE makes the write stop part way) fails the append with its errno,
/// the partial record is cut back, and the journal works again once there is room.
static void test_append_full_disk(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "fits");
    uint64_t size = journal_size(j);

    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = f->fsize;
    small.rlim_cur = (rlim_t)size + 10; // room for 10 bytes of the next record
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    char big[100];
    memset(big, 'x', sizeof big);
    assert_int_equal(journal_append(j, 2, big, sizeof big), JOURNAL_ERR_IO);
    assert_int_equal(journal_last_errno(j), EFBIG);
    assert_non_null(strstr(journal_last_error(j), "write"));
    assert_int_equal(journal_size(j), size);
    assert_int_equal(file_size(f->path), size);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &f->fsize), 0);
    signal(SIGXFSZ, SIG_DFL);

    append_text(j, 3, "after");
    journal_close(j);
    Collect c;
    j = open_ok(f->path, &c, NULL);
    assert_int_equal(c.n, 2);
    assert_seen(&c, 0, 1, "fits");
    assert_seen(&c, 1, 3, "after");
    journal_close(j);
}

/// An append through a read-only descriptor fails with EBADF, later appends are refused
/// until a reopen, and the reopened journal holds exactly the earlier records.
static void test_append_readonly_fd(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "kept");
    int fd = find_fd(f->path);
    int ro = open(f->path, O_RDONLY | O_CLOEXEC);
    assert_true(ro >= 0);
    assert_int_equal(dup2(ro, fd), fd); // the journal now writes to a read-only descriptor
    close(ro);

    assert_int_equal(journal_append(j, 2, "lost", 4), JOURNAL_ERR_IO);
    assert_int_equal(journal_last_errno(j), EBADF);
    assert_int_equal(journal_append(j, 3, "refused", 7), JOURNAL_ERR_FAILED);
    journal_close(j);

    Collect c;
    JournalReplayStats stats;
    j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 1);
    assert_seen(&c, 0, 1, "kept");
    assert_int_equal(stats.torn_bytes, 0);
    journal_close(j);
}

/// Group commit: staged records are not written until the commit, which writes them all with
/// one write and one fdatasync; the counters say so, and a reopen replays them in order.
static void test_stage_commit(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    uint64_t size = journal_size(j);
    const char *text[3] = {"one", "two, longer", "three"};
    uint64_t end = size;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(journal_stage(j, (uint64_t)i + 1, text[i], strlen(text[i])), JOURNAL_OK);
        end += JOURNAL_RECORD_HEAD + strlen(text[i]);
        assert_int_equal(journal_staged_end(j), end);
    }
    assert_int_equal(file_size(f->path), size);
    JournalCounters jc;
    journal_counters(j, &jc);
    assert_int_equal(jc.records, 0);
    assert_true(jc.sync_s == 0.0); // no sync yet
    assert_int_equal(journal_commit(j), JOURNAL_OK);
    assert_int_equal(file_size(f->path), end);
    assert_int_equal(journal_size(j), end);
    assert_int_equal(journal_commit(j), JOURNAL_OK); // nothing staged: no write, no sync
    journal_counters(j, &jc);
    assert_int_equal(jc.records, 3);
    assert_int_equal(jc.commits, 1);
    assert_int_equal(jc.syncs, 1);
    assert_int_equal(jc.bytes, end - size);
    assert_true(jc.sync_s >= 0.0);
    append_text(j, 4, "alone"); // an append is a commit of one record
    journal_counters(j, &jc);
    assert_int_equal(jc.records, 4);
    assert_int_equal(jc.syncs, 2);
    journal_close(j);
    Collect c;
    j = open_ok(f->path, &c, NULL);
    assert_int_equal(c.n, 4);
    for (int i = 0; i < 3; i++)
        assert_seen(&c, i, (uint64_t)i + 1, text[i]);
    assert_seen(&c, 3, 4, "alone");
    journal_close(j);
}

/// A commit whose write stops part way (a full disk after one and a half of its records)
/// keeps none of the batch: the file is cut back, nothing is counted, the stage is empty,
/// and the journal works again once there is room.
static void test_commit_fails_keeps_none(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "before");
    uint64_t size = journal_size(j);
    char rec[100];
    memset(rec, 'r', sizeof rec);
    for (int i = 0; i < 3; i++)
        assert_int_equal(journal_stage(j, (uint64_t)i + 2, rec, sizeof rec), JOURNAL_OK);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = f->fsize;
    small.rlim_cur = (rlim_t)(size + 3 * (JOURNAL_RECORD_HEAD + sizeof rec) / 2);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    assert_int_equal(journal_commit(j), JOURNAL_ERR_IO);
    assert_int_equal(journal_last_errno(j), EFBIG);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &f->fsize), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(file_size(f->path), size);
    assert_int_equal(journal_staged_end(j), size);
    JournalCounters jc;
    journal_counters(j, &jc);
    assert_int_equal(jc.records, 1);
    append_text(j, 9, "after");
    journal_close(j);
    Collect c;
    j = open_ok(f->path, &c, NULL);
    assert_int_equal(c.n, 2);
    assert_seen(&c, 0, 1, "before");
    assert_seen(&c, 1, 9, "after");
    journal_close(j);
}

/// journal_cut takes durable records off the end back to a record's end (what a verdict given
/// part way through a batch did not count); a size that is no end of the records is refused
/// and changes nothing.
static void test_cut(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    Collect c;
    Journal *j = open_ok(f->path, &c, NULL);
    assert_int_equal(journal_cut(j, off[3] + 1), JOURNAL_ERR_CORRUPT);
    assert_int_equal(journal_cut(j, off[0] - 1), JOURNAL_ERR_CORRUPT);
    assert_int_equal(journal_cut(j, off[3]), JOURNAL_OK); // the end: nothing to cut
    assert_int_equal(file_size(f->path), off[3]);
    assert_int_equal(journal_cut(j, off[1]), JOURNAL_OK);
    assert_int_equal(file_size(f->path), off[1]);
    assert_int_equal(journal_size(j), off[1]);
    append_text(j, 7, "next");
    journal_close(j);
    j = open_ok(f->path, &c, NULL);
    assert_int_equal(c.n, 2);
    assert_seen(&c, 0, 1, "pair 1: 1-0 0-1");
    assert_seen(&c, 1, 7, "next");
    journal_close(j);
}

/// journal_scan reads the records of a journal in use (no lock, any identity) as a replay
/// does, and reports a file that is no journal.
static void test_scan(void **state)
{
    Fixture *f = *state;
    uint64_t off[4];
    make_three(f->path, off);
    Collect c;
    Journal *j = open_ok(f->path, &c, NULL); // holds the lock
    c = (Collect){.stop_at = -1};
    char why[256];
    assert_int_equal(journal_scan(f->path, collect_fn, &c, why, sizeof why), JOURNAL_OK);
    assert_int_equal(c.n, 3);
    assert_seen(&c, 0, 1, "pair 1: 1-0 0-1");
    assert_seen(&c, 2, 3, "pair 3: the last one");
    journal_close(j);
    char other[160];
    snprintf(other, sizeof other, "%s/none.xqj", f->dir);
    assert_int_equal(journal_scan(other, collect_fn, &c, why, sizeof why), JOURNAL_ERR_IO);
    assert_non_null(strstr(why, "none.xqj"));
}

/// A zero-length payload is stored and replayed as such, also as the last record.
static void test_zero_length(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    assert_int_equal(journal_append(j, 5, NULL, 0), JOURNAL_OK);
    append_text(j, 6, "x");
    assert_int_equal(journal_append(j, 7, "", 0), JOURNAL_OK);
    journal_close(j);
    Collect c;
    JournalReplayStats stats;
    j = open_ok(f->path, &c, &stats);
    assert_int_equal(c.n, 3);
    assert_seen(&c, 0, 5, "");
    assert_seen(&c, 1, 6, "x");
    assert_seen(&c, 2, 7, "");
    assert_int_equal(stats.torn_bytes, 0);
    journal_close(j);
}

/// A 1 MiB payload round-trips byte for byte; one above JOURNAL_RECORD_MAX is refused.
static void test_large_payload(void **state)
{
    Fixture *f = *state;
    size_t len = (size_t)1 << 20;
    uint8_t *big = malloc(JOURNAL_RECORD_MAX + 1);
    assert_non_null(big);
    uint32_t x = 12345;
    for (size_t i = 0; i < JOURNAL_RECORD_MAX + 1; i++) {
        x = x * 1103515245u + 12345u;
        big[i] = (uint8_t)(x >> 16);
    }
    Journal *j = open_ok(f->path, NULL, NULL);
    assert_int_equal(journal_append(j, 9, big, len), JOURNAL_OK);
    append_text(j, 10, "small");
    assert_int_equal(journal_append(j, 11, big, JOURNAL_RECORD_MAX + 1), JOURNAL_ERR_TOO_LARGE);
    journal_close(j);

    Collect c;
    j = open_ok(f->path, &c, NULL);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.rec[0].key, 9);
    assert_int_equal(c.rec[0].len, len);
    assert_int_equal(c.rec[0].crc, (uint32_t)crc32(0L, big, (uInt)len));
    assert_seen(&c, 1, 10, "small");
    journal_close(j);
    free(big);
}

/// A second open of a journal in use is refused, and a callback's failure stops the replay.
static void test_locked_and_callback(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "a");
    append_text(j, 2, "b");
    Journal *k = NULL;
    assert_int_equal(journal_open(&k, f->path, &ID, NULL, NULL, NULL, NULL, 0), JOURNAL_ERR_LOCKED);
    assert_null(k);
    journal_close(j);

    Collect c = {.stop_at = 1};
    assert_int_equal(journal_open(&k, f->path, &ID, collect_fn, &c, NULL, NULL, 0),
                     JOURNAL_ERR_CALLBACK);
    assert_null(k);
    assert_int_equal(c.n, 1);
}

/// Writes text into dir/name.
static void put_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    file_write(path, (const uint8_t *)text, strlen(text));
}

/// The entries of a directory, "." and ".." aside.
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/// Whether dir/name holds exactly text.
static bool holds(const char *dir, const char *name, const char *text)
{
    char path[1024];
    uint8_t buf[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    return n == strlen(text) && !memcmp(buf, text, n);
}

/// Moving a run's files aside puts each existing one, whole, into a new previous-*
/// directory (subdirectories too), skips missing and empty names, makes a second directory
/// for a second move, and deletes nothing; with nothing to move no directory is made.
static void test_move_aside(void **state)
{
    Fixture *f = *state;
    Journal *j = open_ok(f->path, NULL, NULL);
    append_text(j, 1, "kept");
    journal_close(j);
    put_file(f->dir, "games.pgn", "[Event \"x\"]\n");
    put_file(f->dir, "result.json", "{}");
    char spool[160];
    snprintf(spool, sizeof spool, "%s/spool", f->dir);
    assert_int_equal(mkdir(spool, 0755), 0);
    put_file(spool, "1.json", "{\"n\":1}");
    uint8_t journal[1024];
    size_t journal_len = file_read(f->path, journal, sizeof journal);

    const char *names[] = {"run.xqj",     "games.pgn", "",          "result.json",
                           "report.html", "spool",     "games.pgn", NULL};
    char moved_to[512], why[256];
    int rc = journal_move_aside(f->dir, names, 8, moved_to, sizeof moved_to, why, sizeof why);
    if (rc != 0)
        print_error("journal_move_aside: %s\n", why);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(moved_to, "/previous-"));
    assert_int_equal(count_entries(moved_to), 4);
    assert_int_equal(count_entries(f->dir), 1); // the previous-* directory alone
    assert_true(access(f->path, F_OK) != 0);
    assert_true(holds(moved_to, "games.pgn", "[Event \"x\"]\n"));
    assert_true(holds(moved_to, "result.json", "{}"));
    char moved_spool[600];
    snprintf(moved_spool, sizeof moved_spool, "%s/spool", moved_to);
    assert_true(holds(moved_spool, "1.json", "{\"n\":1}"));
    char moved_journal[600];
    snprintf(moved_journal, sizeof moved_journal, "%s/run.xqj", moved_to);
    uint8_t again[1024];
    assert_int_equal(file_read(moved_journal, again, sizeof again), journal_len);
    assert_memory_equal(again, journal, journal_len);

    assert_int_equal(
        journal_move_aside(f->dir, names, 8, moved_to, sizeof moved_to, why, sizeof why), 0);
    assert_string_equal(moved_to, "");

    put_file(f->dir, "games.pgn", "second run");
    char first[600];
    snprintf(first, sizeof first, "%s", moved_spool);
    first[strlen(first) - strlen("/spool")] = '\0';
    assert_int_equal(
        journal_move_aside(f->dir, names, 8, moved_to, sizeof moved_to, why, sizeof why), 0);
    assert_string_not_equal(moved_to, first);
    assert_int_equal(count_entries(moved_to), 1);
    assert_int_equal(count_entries(f->dir), 2);
    assert_int_equal(count_entries(first), 4);
    assert_true(holds(moved_to, "games.pgn", "second run"));
    assert_true(holds(first, "games.pgn", "[Event \"x\"]\n"));
}

/// A journal still open (locked) elsewhere, or a name leaving the directory, refuses the
/// whole move before anything is moved.
static void test_move_aside_refused(void **state)
{
    Fixture *f = *state;
    put_file(f->dir, "games.pgn", "pgn");
    Journal *j = open_ok(f->path, NULL, NULL);
    const char *names[] = {"games.pgn", "run.xqj"};
    char moved_to[512], why[256];
    assert_int_equal(
        journal_move_aside(f->dir, names, 2, moved_to, sizeof moved_to, why, sizeof why), -1);
    assert_non_null(strstr(why, "in use"));
    assert_string_equal(moved_to, "");
    assert_true(holds(f->dir, "games.pgn", "pgn"));
    assert_int_equal(access(f->path, F_OK), 0);
    journal_close(j);

    const char *escape[] = {"games.pgn", "../games.pgn"};
    assert_int_equal(
        journal_move_aside(f->dir, escape, 2, moved_to, sizeof moved_to, why, sizeof why), -1);
    assert_true(holds(f->dir, "games.pgn", "pgn"));
    const char *absolute[] = {"/etc/passwd"};
    assert_int_equal(
        journal_move_aside(f->dir, absolute, 1, moved_to, sizeof moved_to, why, sizeof why), -1);
}

/// Every status has its own message.
static void test_strerror(void **state)
{
    (void)state;
    for (int i = 0; i < JOURNAL_STATUS_NB; i++) {
        const char *s = journal_strerror((JournalStatus)i);
        assert_non_null(s);
        assert_null(strstr(s, "unknown"));
        for (int k = 0; k < i; k++)
            assert_string_not_equal(s, journal_strerror((JournalStatus)k));
    }
    assert_non_null(strstr(journal_strerror(JOURNAL_STATUS_NB), "unknown"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail_every_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_tail_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_length_above_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identity_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version1_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identity_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_readonly_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_fails_keeps_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locked_and_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_aside_refused, setup, teardown),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
