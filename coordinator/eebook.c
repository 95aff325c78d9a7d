// SPDX-License-Identifier: MIT
// ElephantEye's BOOK.DAT: its Zobrist locks, its move encoding, export from a move book and
// a reader that probes like ElephantEye's GetBookMoves (format in eebook.h).
#include "eebook.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "keyset.h"
#include "movegen.h"

enum { EE_TYPES = 14, EE_SQUARES = 256 };

// Only the locks are kept; the key (the first word of each triple) is drawn and dropped.
static uint32_t ee_lock0[EE_TYPES][EE_SQUARES], ee_lock1[EE_TYPES][EE_SQUARES];
static uint32_t ee_player_lock0, ee_player_lock1;
static pthread_once_t ee_once = PTHREAD_ONCE_INIT;

typedef struct {
    uint8_t s[256];
    uint8_t i, j;
} Rc4;

/// RC4 key schedule: s is the identity, then for each i, j += s[i] + key[i mod len], swap.
static void rc4_init(Rc4 *r, const uint8_t *key, int len)
{
    for (int i = 0; i < 256; i++)
        r->s[i] = (uint8_t)i;
    uint8_t j = 0;
    for (int i = 0; i < 256; i++) {
        j = (uint8_t)(j + r->s[i] + key[i % len]);
        uint8_t t = r->s[i];
        r->s[i] = r->s[j];
        r->s[j] = t;
    }
    r->i = r->j = 0;
}

/// RC4 output: i += 1, j += s[i], swap, emit s[s[i] + s[j]].
static uint8_t rc4_byte(Rc4 *r)
{
    r->i++;
    r->j = (uint8_t)(r->j + r->s[r->i]);
    uint8_t t = r->s[r->i];
    r->s[r->i] = r->s[r->j];
    r->s[r->j] = t;
    return r->s[(uint8_t)(r->s[r->i] + r->s[r->j])];
}

/// Four output bytes, the first one lowest (ElephantEye assembles them in memory on x86).
static uint32_t rc4_u32(Rc4 *r)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++)
        v |= (uint32_t)rc4_byte(r) << (8 * k);
    return v;
}

static void ee_triple(Rc4 *r, uint32_t *lock0, uint32_t *lock1)
{
    (void)rc4_u32(r); // dwKey: ElephantEye's hash-table index, not stored in BOOK.DAT
    *lock0 = rc4_u32(r);
    *lock1 = rc4_u32(r);
}

static void ee_tables_init(void)
{
    const uint8_t zero_key[4] = {0, 0, 0, 0};
    Rc4 r;
    rc4_init(&r, zero_key, 4);
    ee_triple(&r, &ee_player_lock0, &ee_player_lock1);
    for (int t = 0; t < EE_TYPES; t++)
        for (int sq = 0; sq < EE_SQUARES; sq++)
            ee_triple(&r, &ee_lock0[t][sq], &ee_lock1[t][sq]);
}

const char *eebook_strerror(EebookStatus st)
{
    static const char *const text[EEBOOK_STATUS_NB] = {
        [EEBOOK_OK] = "ok",
        [EEBOOK_ERR_IO] = "I/O error",
        [EEBOOK_ERR_NOMEM] = "out of memory",
        [EEBOOK_ERR_FORMAT] = "not an ElephantEye BOOK.DAT",
    };
    return (unsigned)st < EEBOOK_STATUS_NB ? text[st] : "unknown status";
}

int eebook_square(Square s)
{
    int file = s % FILE_NB, rank = s / FILE_NB;
    return (file + 3) + ((12 - rank) << 4);
}

Square eebook_square_from(int sq)
{
    int x = sq & 15, y = sq >> 4;
    if (sq < 0 || sq > 255 || x < 3 || x > 11 || y < 3 || y > 12)
        return SQ_NONE;
    return (12 - y) * FILE_NB + (x - 3);
}

uint16_t eebook_move(Move m)
{
    return (uint16_t)(eebook_square(move_from(m)) | eebook_square(move_to(m)) << 8);
}

Move eebook_move_from(uint16_t wmv)
{
    Square from = eebook_square_from(wmv & 255), to = eebook_square_from(wmv >> 8);
    return from == SQ_NONE || to == SQ_NONE || from == to ? MOVE_NONE : move_make(from, to);
}

static Square square_mirror(Square s) { return s - s % FILE_NB + (FILE_NB - 1 - s % FILE_NB); }

Move eebook_move_mirror(Move m)
{
    return move_make(square_mirror(move_from(m)), square_mirror(move_to(m)));
}

/// ElephantEye's piece type index: our types run general..soldier from 1 in its order.
static int ee_type(Piece p) { return piece_type(p) - 1 + (piece_color(p) == BLACK ? 7 : 0); }

static void locks_of(const Board *b, bool mirror, uint32_t *lock0, uint32_t *lock1)
{
    pthread_once(&ee_once, ee_tables_init);
    uint32_t l0 = 0, l1 = 0;
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = board_piece(b, s);
        if (p == NO_PIECE)
            continue;
        int sq = eebook_square(mirror ? square_mirror(s) : s), t = ee_type(p);
        l0 ^= ee_lock0[t][sq];
        l1 ^= ee_lock1[t][sq];
    }
    if (b->side == BLACK) {
        l0 ^= ee_player_lock0;
        l1 ^= ee_player_lock1;
    }
    *lock0 = l0;
    *lock1 = l1;
}

void eebook_locks(const Board *b, uint32_t *lock0, uint32_t *lock1)
{
    locks_of(b, false, lock0, lock1);
}

void eebook_mirror_locks(const Board *b, uint32_t *lock0, uint32_t *lock1)
{
    locks_of(b, true, lock0, lock1);
}

// ---------------------------------------------------------------------------------------
// Export

typedef struct {
    uint32_t lock1, lock0, weight;
    uint16_t wmv;
} RawEntry;

typedef struct {
    const MovebookEntry *e;
    size_t n;
    KeySet seen;
    RawEntry *raw;
    size_t raw_n, raw_cap;
    EebookExportStats *st;
} Walk;

static bool raw_push(Walk *w, RawEntry r)
{
    if (w->raw_n == w->raw_cap) {
        size_t cap = w->raw_cap ? 2 * w->raw_cap : 1024;
        RawEntry *p = realloc(w->raw, cap * sizeof *p);
        if (!p)
            return false;
        w->raw = p;
        w->raw_cap = cap;
    }
    w->raw[w->raw_n++] = r;
    return true;
}

static bool move_is_legal(const Board *b, Move m)
{
    MoveList list;
    movegen_legal(b, &list);
    for (int i = 0; i < list.count; i++)
        if (list.moves[i] == m)
            return true;
    return false;
}

/// Records the position's book moves under the smaller of its own and its mirror's locks
/// (as MakeBook does), then walks into each child that the book holds moves for.
static EebookStatus walk(Walk *w, Board *b)
{
    size_t first = 0, k = movebook_probe(w->e, w->n, b->key, &first);
    int added = keyset_add(&w->seen, b->key);
    if (added < 0)
        return EEBOOK_ERR_NOMEM;
    if (k == 0 || added == 0)
        return EEBOOK_OK;
    w->st->positions++;
    uint32_t p0, p1, m0, m1;
    eebook_locks(b, &p0, &p1);
    eebook_mirror_locks(b, &m0, &m1);
    bool use_mirror = m1 < p1 || (m1 == p1 && m0 < p0);
    for (size_t i = first; i < first + k; i++) {
        Move m = w->e[i].move;
        if (!move_is_legal(b, m))
            continue; // counted as unreached: no position of the walk plays it
        w->st->moves++;
        RawEntry r = {use_mirror ? m1 : p1, use_mirror ? m0 : p0, w->e[i].count,
                      eebook_move(use_mirror ? eebook_move_mirror(m) : m)};
        if (!raw_push(w, r))
            return EEBOOK_ERR_NOMEM;
        if (b->hist_len >= BOARD_HISTORY_MAX)
            continue;
        board_make_move(b, m);
        EebookStatus st = walk(w, b);
        board_unmake_move(b);
        if (st != EEBOOK_OK)
            return st;
    }
    return EEBOOK_OK;
}

static int raw_cmp(const void *pa, const void *pb)
{
    const RawEntry *a = pa, *b = pb;
    if (a->lock1 != b->lock1)
        return a->lock1 < b->lock1 ? -1 : 1;
    if (a->lock0 != b->lock0)
        return a->lock0 < b->lock0 ? -1 : 1;
    return (a->wmv > b->wmv) - (a->wmv < b->wmv);
}

/// Sorts, merges equal (lock1, lock0, move) by summing weights (saturating) and drops the
/// lock0 that the file does not hold.
static EebookStatus raw_finish(Walk *w, EebookEntry **out, size_t *out_n)
{
    if (w->raw_n)
        qsort(w->raw, w->raw_n, sizeof *w->raw, raw_cmp);
    EebookEntry *e = malloc((w->raw_n ? w->raw_n : 1) * sizeof *e);
    if (!e)
        return EEBOOK_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < w->raw_n;) {
        uint64_t sum = 0;
        size_t j = i;
        for (; j < w->raw_n && raw_cmp(&w->raw[i], &w->raw[j]) == 0; j++)
            sum += w->raw[j].weight;
        if (sum > EEBOOK_WEIGHT_MAX) {
            sum = EEBOOK_WEIGHT_MAX;
            w->st->saturated++;
        }
        e[n++] = (EebookEntry){w->raw[i].lock1, w->raw[i].wmv, (uint16_t)sum};
        i = j;
    }
    *out = e;
    *out_n = n;
    w->st->entries = n;
    return EEBOOK_OK;
}

EebookStatus eebook_from_movebook(const MovebookEntry *e, size_t n, const Board *root,
                                  EebookEntry **out, size_t *out_n, EebookExportStats *st)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    *out_n = 0;
    Walk w = {.e = e, .n = n, .st = st};
    Board *b = malloc(sizeof *b);
    if (!b || keyset_init(&w.seen, 1024) != 0) {
        free(b);
        return EEBOOK_ERR_NOMEM;
    }
    *b = *root;
    EebookStatus rc = walk(&w, b);
    if (rc == EEBOOK_OK)
        rc = raw_finish(&w, out, out_n);
    st->unreached = n - st->moves;
    keyset_destroy(&w.seen);
    free(w.raw);
    free(b);
    return rc;
}

// ---------------------------------------------------------------------------------------
// File

EebookStatus eebook_write(const char *path, const EebookEntry *e, size_t n, char *why,
                          size_t why_len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    bool ok = f != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        uint8_t b[EEBOOK_ENTRY_SIZE];
        files_put_le(b, e[i].lock, 4);
        files_put_le(b + 4, e[i].move, 2);
        files_put_le(b + 6, e[i].weight, 2);
        ok = fwrite(b, 1, sizeof b, f) == sizeof b;
    }
    ok = f && fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        remove(tmp);
        return EEBOOK_ERR_IO;
    }
    return EEBOOK_OK;
}

EebookStatus eebook_read(const char *path, EebookEntry **entries, size_t *n, char *why,
                         size_t why_len)
{
    *entries = NULL;
    *n = 0;
    FILE *f = files_open_regular(path);
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return EEBOOK_ERR_IO;
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (size % EEBOOK_ENTRY_SIZE != 0 || size > EEBOOK_FILE_MAX) {
        snprintf(why, why_len, "%s: %llu bytes %s", path, (unsigned long long)size,
                 size > EEBOOK_FILE_MAX ? "is over 2 GiB"
                                        : "is not a whole number of 8-byte entries");
        fclose(f);
        return EEBOOK_ERR_FORMAT;
    }
    size_t count = (size_t)(size / EEBOOK_ENTRY_SIZE);
    uint8_t *bytes = malloc(size ? size : 1);
    EebookEntry *e = malloc((count ? count : 1) * sizeof *e);
    if (!bytes || !e) {
        free(bytes);
        free(e);
        fclose(f);
        snprintf(why, why_len, "%s: out of memory", path);
        return EEBOOK_ERR_NOMEM;
    }
    bool ok = fread(bytes, 1, size, f) == size;
    fclose(f);
    if (!ok) {
        snprintf(why, why_len, "%s: short read", path);
        free(bytes);
        free(e);
        return EEBOOK_ERR_IO;
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *p = bytes + i * EEBOOK_ENTRY_SIZE;
        e[i] = (EebookEntry){(uint32_t)files_get_le(p, 4), (uint16_t)files_get_le(p + 4, 2),
                             (uint16_t)files_get_le(p + 6, 2)};
        if (i > 0 && e[i].lock < e[i - 1].lock) {
            snprintf(why, why_len, "%s: entry %zu is out of lock order (the reader bisects)", path,
                     i);
            free(bytes);
            free(e);
            return EEBOOK_ERR_FORMAT;
        }
    }
    free(bytes);
    *entries = e;
    *n = count;
    return EEBOOK_OK;
}

// ---------------------------------------------------------------------------------------
// Probe

/// Index of the first entry with lock, or n.
static size_t lower_bound(const EebookEntry *e, size_t n, uint32_t lock)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].lock < lock)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int move_weight_cmp(const void *pa, const void *pb)
{
    const EebookMove *a = pa, *b = pb;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return (a->move > b->move) - (a->move < b->move);
}

int eebook_probe(const EebookEntry *e, size_t n, const Board *b, EebookMove *out, bool *mirrored)
{
    MoveList legal;
    movegen_legal(b, &legal);
    *mirrored = false;
    for (int scan = 0; scan < 2; scan++) {
        uint32_t l0, l1;
        locks_of(b, scan == 1, &l0, &l1);
        size_t i = lower_bound(e, n, l1);
        if (i == n || e[i].lock != l1)
            continue;
        int k = 0;
        for (; i < n && e[i].lock == l1 && k < EEBOOK_PROBE_MAX; i++) {
            Move m = eebook_move_from(e[i].move);
            if (m == MOVE_NONE)
                continue;
            if (scan == 1)
                m = eebook_move_mirror(m);
            for (int j = 0; j < legal.count; j++)
                if (legal.moves[j] == m) {
                    out[k++] = (EebookMove){m, e[i].weight};
                    break;
                }
        }
        *mirrored = scan == 1;
        qsort(out, (size_t)k, sizeof *out, move_weight_cmp);
        return k;
    }
    return 0;
}
