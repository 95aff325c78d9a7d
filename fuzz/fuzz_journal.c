// SPDX-License-Identifier: MIT
// Journal records (coordinator/journal.c): any file opens with its valid prefix replayed, or
// is refused untouched; replayed payloads are within the size limit, keys are never replayed
// twice, and a journal that opened takes a new record and opens again with it. The journal
// is opened with the identity its header holds (journal_peek), so any identity text gets to
// the records. With the first input byte odd, the header (identity hash and CRC) and record
// CRCs are recomputed so the fuzzer gets past them.
#include "fuzz_util.h"

#include <zlib.h>

#include "files.h"
#include "journal.h"

enum { SEEN_MAX = 4096 };

// The identity of a journal whose header cannot be read (the seeds hold it: fuzz/seedgen.c).
static const char IDENTITY[] = "kind=match\nfuzz=journal\n";

typedef struct {
    uint64_t keys[SEEN_MAX];
    int n;
    uint64_t replayed;
} Seen;

static int on_record(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Seen *s = ctx;
    if (len > JOURNAL_RECORD_MAX || (len && !payload))
        abort();
    for (int i = 0; i < s->n; i++)
        if (s->keys[i] == key)
            abort(); // only the first record of a key is replayed
    if (s->n < SEEN_MAX)
        s->keys[s->n++] = key;
    s->replayed++;
    return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/// Rewrites the header's identity hash and CRC and the CRC of every record that fits.
static void fix_crcs(uint8_t *f, size_t size)
{
    if (size < JOURNAL_HEADER_FIXED)
        return;
    uint32_t id_len = get_le32(f + 40);
    if (id_len > size - JOURNAL_HEADER_FIXED)
        return;
    uint64_t h = files_fnv(FILES_FNV_BASIS, f + JOURNAL_HEADER_FIXED, id_len); // the identity
    put_le32(f + 16, (uint32_t)h);
    put_le32(f + 20, (uint32_t)(h >> 32));
    put_le32(f + 44, (uint32_t)crc32(crc32(0, f, JOURNAL_HEADER_FIXED - 4),
                                     f + JOURNAL_HEADER_FIXED, id_len));
    for (size_t pos = JOURNAL_HEADER_FIXED + id_len; pos + JOURNAL_RECORD_HEAD <= size;) {
        uint32_t len = get_le32(f + pos);
        if (len > size - pos - JOURNAL_RECORD_HEAD)
            return;
        put_le32(f + pos + 12,
                 (uint32_t)crc32(crc32(0, f + pos + 4, 8), f + pos + JOURNAL_RECORD_HEAD, len));
        pos += JOURNAL_RECORD_HEAD + len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t *file = malloc(size);
    memcpy(file, data + 1, size - 1);
    if (data[0] & 1)
        fix_crcs(file, size - 1);
    char path[64], why[256];
    int fd = fuzz_memfile(file, size - 1, path, sizeof path);
    free(file);
    static Seen seen;
    seen.n = 0;
    seen.replayed = 0;
    Journal *j = NULL;
    JournalReplayStats stats;
    static char stored[JOURNAL_IDENTITY_MAX + 1];
    size_t stored_len = 0;
    JournalIdentity id = {IDENTITY, sizeof IDENTITY - 1};
    if (journal_peek(path, stored, sizeof stored, &stored_len, NULL, why, sizeof why) == JOURNAL_OK)
        id = (JournalIdentity){stored, stored_len};
    JournalStatus st = journal_open(&j, path, &id, on_record, &seen, &stats, why, sizeof why);
    if (st == JOURNAL_OK) {
        if (stats.records != seen.replayed + stats.duplicates)
            abort();
        if (journal_append(j, 0xF00Dull, "fuzz", 4) != JOURNAL_OK)
            abort();
        journal_close(j);
        seen.n = 0;
        seen.replayed = 0;
        JournalReplayStats again;
        if (journal_open(&j, path, &id, on_record, &seen, &again, why, sizeof why) != JOURNAL_OK ||
            again.torn_bytes != 0 || again.records != stats.records + 1)
            abort(); // the repaired journal plus one record reads back whole
        journal_close(j);
    } else if (j) {
        abort();
    }
    close(fd);
    return 0;
}
