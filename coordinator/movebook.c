// SPDX-License-Identifier: MIT
#include "movebook.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "files.h"

/// One slot of the building table: (key, move) with its count and score sum.
/// The sum, not the mean, so that adding a line is exact; 64 bits hold any number of 32-bit
/// scores a run can produce. The mean is taken once, when the file is written.
typedef struct {
    uint64_t key;
    int64_t score_sum;
    uint32_t count; // 0: empty slot
    uint16_t move;
} Slot;

// Open addressing with linear probing on a power-of-two table (mask = size - 1); count is the
// number of used slots, kept at most 70% of the table by movebook_add.
struct Movebook {
    Slot *slots;
    size_t mask, count;
};

static const char MAGIC[8] = "XQMOVES";

const char *movebook_strerror(MovebookStatus st)
{
    static const char *const text[MOVEBOOK_STATUS_NB] = {"ok", "input/output error",
                                                         "out of memory", "not a valid move book"};
    return (unsigned)st < MOVEBOOK_STATUS_NB ? text[st] : "unknown movebook status";
}

Movebook *movebook_new(void)
{
    Movebook *b = calloc(1, sizeof *b);
    if (b && !(b->slots = calloc(1024, sizeof *b->slots))) {
        free(b);
        return NULL;
    }
    if (b)
        b->mask = 1023;
    return b;
}

void movebook_free(Movebook *b)
{
    if (!b)
        return;
    free(b->slots);
    free(b);
}

/// Fibonacci hashing of key ^ move: the multiply spreads every input bit upwards, and the
/// shift drops the low bits, which depend on the fewest input bits.
static size_t slot_of(const Movebook *b, uint64_t key, uint16_t move)
{
    return (size_t)(((key ^ move) * 0x9E3779B97F4A7C15ull) >> 17) & b->mask;
}

/// The slot holding (key, move), or the empty slot where it belongs. Ends because the table
/// always has an empty slot (load at most 70%).
static Slot *find(Movebook *b, uint64_t key, uint16_t move)
{
    size_t i = slot_of(b, key, move);
    while (b->slots[i].count && (b->slots[i].key != key || b->slots[i].move != move))
        i = (i + 1) & b->mask;
    return &b->slots[i];
}

/// Doubles the table and re-inserts every used slot; the old table is kept until the new one
/// is allocated, so out of memory leaves the book as it was.
static MovebookStatus grow(Movebook *b)
{
    size_t n = (b->mask + 1) * 2, old_n = b->mask + 1;
    Slot *old = b->slots, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return MOVEBOOK_ERR_NOMEM;
    b->slots = fresh;
    b->mask = n - 1;
    for (size_t i = 0; i < old_n; i++)
        if (old[i].count)
            *find(b, old[i].key, old[i].move) = old[i];
    free(old);
    return MOVEBOOK_OK;
}

MovebookStatus movebook_add(Movebook *b, uint64_t key, uint16_t move, int score)
{
    // Grow before the insert that would pass 70% full: probes stay short, and find always ends.
    if ((b->count + 1) * 10 > (b->mask + 1) * 7 && grow(b) != MOVEBOOK_OK)
        return MOVEBOOK_ERR_NOMEM;
    Slot *s = find(b, key, move);
    if (!s->count) {
        *s = (Slot){key, 0, 0, move};
        b->count++;
    }
    s->count++;
    s->score_sum += score;
    return MOVEBOOK_OK;
}

size_t movebook_entries(const Movebook *b) { return b->count; }

// The heap the table holds, empty slots included: what the run's memory figures need.
size_t movebook_bytes(const Movebook *b) { return (b->mask + 1) * sizeof(Slot); }

/// The file's order: by key (what the probe bisects on), then the most played move first (a
/// probe lists the book's main line first), then by move, so that the order is total and the
/// file does not depend on the table's layout. movebook_read refuses any other order.
static int entry_cmp(const void *pa, const void *pb)
{
    const MovebookEntry *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return (a->move > b->move) - (a->move < b->move);
}

/// One entry at the offsets of movebook.h, little-endian whatever the host; the score as its
/// 16-bit two's complement.
static void encode(const MovebookEntry *e, uint8_t *p)
{
    files_put_le(p, e->key, 8);
    files_put_le(p + 8, e->move, 2);
    files_put_le(p + 10, (uint16_t)e->score, 2);
    files_put_le(p + 12, e->count, 4);
}

/// The sorted entries, encoded; NULL when out of memory.
static uint8_t *encode_all(const Movebook *b)
{
    // At least one element: malloc(0) may return NULL, which would read as out of memory.
    MovebookEntry *e = malloc((b->count ? b->count : 1) * sizeof *e);
    uint8_t *bytes = malloc((b->count ? b->count : 1) * MOVEBOOK_ENTRY_SIZE);
    if (!e || !bytes) {
        free(e);
        free(bytes);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i <= b->mask; i++) {
        const Slot *s = &b->slots[i];
        if (!s->count)
            continue;
        // The mean rounded half away from zero and clamped to the 16 bits the file has for it.
        double mean = (double)s->score_sum / s->count;
        mean = mean > INT16_MAX ? INT16_MAX : mean < INT16_MIN ? INT16_MIN : mean;
        e[n++] = (MovebookEntry){s->key, s->move, (int16_t)(mean < 0 ? mean - 0.5 : mean + 0.5),
                                 s->count};
    }
    qsort(e, n, sizeof *e, entry_cmp);
    for (size_t i = 0; i < n; i++)
        encode(&e[i], bytes + i * MOVEBOOK_ENTRY_SIZE);
    free(e);
    return bytes;
}

MovebookStatus movebook_write(const Movebook *b, const char *path, char *why, size_t why_len)
{
    uint8_t *bytes = encode_all(b);
    if (!bytes) {
        snprintf(why, why_len, "out of memory");
        return MOVEBOOK_ERR_NOMEM;
    }
    size_t len = b->count * MOVEBOOK_ENTRY_SIZE;
    uint8_t head[MOVEBOOK_HEADER_SIZE] = {0};
    memcpy(head, MAGIC, 8);
    files_put_le(head + 8, MOVEBOOK_VERSION, 4);
    files_put_le(head + 12, MOVEBOOK_ENTRY_SIZE, 4);
    files_put_le(head + 16, b->count, 8);
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t off = 0; off < len; off += 1u << 30) // crc32 takes a uInt length
        crc = crc32(crc, bytes + off, (uInt)(len - off < 1u << 30 ? len - off : 1u << 30));
    files_put_le(head + 24, crc, 4);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(head, 1, sizeof head, f) == sizeof head &&
              (len == 0 || fwrite(bytes, 1, len, f) == len);
    ok = f && fclose(f) == 0 && ok;
    free(bytes);
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        remove(tmp);
        return MOVEBOOK_ERR_IO;
    }
    return MOVEBOOK_OK;
}

/// Magic, version and entry size, and a count that accounts for the file's size exactly: a
/// truncated or padded file is refused before anything is allocated for it. The first test on
/// count keeps count * ENTRY_SIZE from overflowing.
static MovebookStatus check_header(const uint8_t *h, uint64_t file_size, uint64_t *count)
{
    if (memcmp(h, MAGIC, 8) != 0 || files_get_le(h + 8, 4) != MOVEBOOK_VERSION ||
        files_get_le(h + 12, 4) != MOVEBOOK_ENTRY_SIZE)
        return MOVEBOOK_ERR_FORMAT;
    *count = files_get_le(h + 16, 8);
    if (*count > (file_size - MOVEBOOK_HEADER_SIZE) / MOVEBOOK_ENTRY_SIZE ||
        MOVEBOOK_HEADER_SIZE + *count * MOVEBOOK_ENTRY_SIZE != file_size)
        return MOVEBOOK_ERR_FORMAT;
    return MOVEBOOK_OK;
}

/// Decodes the entry bytes and checks the CRC and the sort order.
/// The strict order check also refuses an entry written twice, so that movebook_probe's
/// bisection and its "most played first" hold for any file this accepts.
static MovebookStatus decode_all(const uint8_t *bytes, uint64_t n, uint32_t want_crc,
                                 MovebookEntry *e)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t len = (size_t)n * MOVEBOOK_ENTRY_SIZE;
    for (size_t off = 0; off < len; off += 1u << 30)
        crc = crc32(crc, bytes + off, (uInt)(len - off < 1u << 30 ? len - off : 1u << 30));
    if ((uint32_t)crc != want_crc)
        return MOVEBOOK_ERR_FORMAT;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *p = bytes + i * MOVEBOOK_ENTRY_SIZE;
        e[i] = (MovebookEntry){files_get_le(p, 8), (uint16_t)files_get_le(p + 8, 2),
                               (int16_t)(uint16_t)files_get_le(p + 10, 2),
                               (uint32_t)files_get_le(p + 12, 4)};
        if (i > 0 && entry_cmp(&e[i - 1], &e[i]) >= 0)
            return MOVEBOOK_ERR_FORMAT;
    }
    return MOVEBOOK_OK;
}

MovebookStatus movebook_read(const char *path, MovebookEntry **entries, size_t *n, char *why,
                             size_t why_len)
{
    *entries = NULL;
    *n = 0;
    FILE *f = files_open_regular(path);
    uint8_t head[MOVEBOOK_HEADER_SIZE];
    if (!f) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return MOVEBOOK_ERR_IO;
    }
    // The size is checked against MOVEBOOK_FILE_MAX before the entries are read into memory, so a
    // huge or hostile file costs no more than that.
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    rewind(f);
    uint64_t count = 0;
    MovebookStatus st = size < (long)MOVEBOOK_HEADER_SIZE || (uint64_t)size > MOVEBOOK_FILE_MAX ||
                                fread(head, 1, sizeof head, f) != sizeof head
                            ? MOVEBOOK_ERR_FORMAT
                            : check_header(head, (uint64_t)size, &count);
    uint8_t *bytes = NULL;
    MovebookEntry *e = NULL;
    if (st == MOVEBOOK_OK) {
        bytes = malloc(count ? (size_t)count * MOVEBOOK_ENTRY_SIZE : 1);
        e = malloc(count ? (size_t)count * sizeof *e : 1);
        st = !bytes || !e ? MOVEBOOK_ERR_NOMEM
             : count && fread(bytes, MOVEBOOK_ENTRY_SIZE, (size_t)count, f) != count
                 ? MOVEBOOK_ERR_IO
                 : decode_all(bytes, count, (uint32_t)files_get_le(head + 24, 4), e);
    }
    fclose(f);
    free(bytes);
    if (st != MOVEBOOK_OK) {
        free(e);
        snprintf(why, why_len, "%s: %s", path, movebook_strerror(st));
        return st;
    }
    *entries = e;
    *n = (size_t)count;
    return MOVEBOOK_OK;
}

// The lower bound of key by bisection; its entries are contiguous (sorted by key) and come in
// the file's order, most played first.
size_t movebook_probe(const MovebookEntry *e, size_t n, uint64_t key, size_t *first)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    size_t k = lo;
    while (k < n && e[k].key == key)
        k++;
    return k - lo;
}
