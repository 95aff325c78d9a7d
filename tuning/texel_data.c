// SPDX-License-Identifier: MIT
// Texel datasets (the format is in texel.h): writing them from games, the quiet-position
// filter, and loading a rank's shard with every record checked and its trace made anew when
// the file's disagrees with this build's evaluation.
#include "texel_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "eval.h"
#include "files.h"
#include "movegen.h"
#include "posdata.h"
#include "why.h"

enum { VALUE_BIG = 32000 }; // above any evaluation: an open window for the quiet test

static const char MAGIC[8] = "XQTEXEL";

// ---- Writer --------------------------------------------------------------------------------

/// A dataset being written: records stream to PATH.tmp, the header (which needs the counts)
/// is written last, then the file is renamed into place.
struct TexelWriter {
    FILE *f;
    char path[4096], tmp[4120];
    uint64_t count, terms;
    uint32_t crc;      // of the records of the current block so far
    uint32_t in_block; // records in the current block
    bool failed;
    Weights w;     // any weights: the trace's coefficients do not depend on them
    EvalTrace *tr; // scratch
};

TexelStatus texel_writer_open(const char *path, TexelWriter **out, char *why, size_t why_len)
{
    TexelWriter *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w || !(w->tr = malloc(sizeof *w->tr))) {
        free(w);
        return WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    }
    weights_default(&w->w);
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", path);
    unsigned char zero[TEXEL_HEADER] = {0}; // room for the header texel_writer_close writes
    if (!(w->f = fopen(w->tmp, "wb")) || fwrite(zero, 1, sizeof zero, w->f) != sizeof zero) {
        TexelStatus st = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
        if (w->f)
            fclose(w->f);
        free(w->tr);
        free(w);
        return st;
    }
    *out = w;
    return TEXEL_OK;
}

/// The non-zero coefficients of a trace as (u16 id, i16 coef) pairs; returns their count. A
/// position touches a few dozen of the PARAM_NB weights: storing only those keeps a million
/// positions in a few hundred megabytes, and the fit's sums sparse.
static int trace_terms(const EvalTrace *t, unsigned char *out)
{
    int n = 0;
    for (int id = 0; id < PARAM_NB; id++)
        if (t->coef[id]) {
            out[4 * n] = (unsigned char)id;
            out[4 * n + 1] = (unsigned char)(id >> 8);
            out[4 * n + 2] = (unsigned char)((uint16_t)t->coef[id]);
            out[4 * n + 3] = (unsigned char)((uint16_t)t->coef[id] >> 8);
            n++;
        }
    return n;
}

/// Closes a block of records with the CRC-32 of its bytes.
static TexelStatus block_end(TexelWriter *w)
{
    unsigned char c[4];
    files_put_le32(c, w->crc);
    w->crc = 0;
    w->in_block = 0;
    if (fwrite(c, 1, sizeof c, w->f) != sizeof c) {
        w->failed = true;
        return TEXEL_ERR_IO;
    }
    return TEXEL_OK;
}

TexelStatus texel_writer_add(TexelWriter *w, const Board *b, double red_result, int ply)
{
    unsigned char rec[TEXEL_RECORD + 4 + 4 * PARAM_NB] = {0};
    // The position as nibbles (texel.h): enough to trace it again with another evaluation.
    for (int s = 0; s < SQUARE_NB; s++)
        rec[s / 2] |= (unsigned char)((b->squares[s] & 15) << (4 * (s & 1)));
    rec[45] = b->side == RED ? 0 : 1;
    rec[46] = red_result > 0.75 ? 2 : red_result < 0.25 ? 0 : 1;
    rec[47] = (unsigned char)(ply / 4 > 255 ? 255 : ply < 0 ? 0 : ply / 4);
    // The trace as this build's evaluation makes it: a loader of the same build uses it as it
    // is, one of another build sees the layout hash differ and traces the positions again.
    memset(w->tr, 0, sizeof *w->tr);
    eval_trace(b, &w->w, w->tr);
    int n = trace_terms(w->tr, rec + TEXEL_RECORD + 4);
    rec[TEXEL_RECORD] = (unsigned char)w->tr->phase;
    rec[TEXEL_RECORD + 2] = (unsigned char)n;
    rec[TEXEL_RECORD + 3] = (unsigned char)(n >> 8);
    size_t len = TEXEL_RECORD + 4 + 4 * (size_t)n;
    if (fwrite(rec, 1, len, w->f) != len) {
        w->failed = true;
        return TEXEL_ERR_IO;
    }
    w->count++;
    w->terms += (uint64_t)n;
    w->crc = (uint32_t)crc32(w->crc, rec, (uInt)len);
    if (++w->in_block == TEXEL_BLOCK)
        return block_end(w);
    return TEXEL_OK;
}

/// FNV-1a of the weight names in table order: the trace layout a dataset was written with.
static uint64_t layout_hash(void)
{
    uint64_t h = FILES_FNV_BASIS;
    for (int id = 0; id < PARAM_NB; id++) // each name with its NUL
        h = files_fnv(h, params_info[id].name, strlen(params_info[id].name) + 1);
    return h;
}

uint64_t texel_writer_count(const TexelWriter *w) { return w->count; }

TexelStatus texel_writer_add_game(TexelWriter *w, Board *b, const char *start_fen,
                                  const Move *moves, int n, int book_plies, double red_result,
                                  int skip, uint64_t *looked)
{
    if (board_set_fen(b, start_fen, NULL, 0) != FEN_OK)
        return TEXEL_ERR_POSITION;
    for (int p = 0; p < n; p++) {
        // Book moves and the first plies say more about the opening than the evaluation.
        if (p >= skip && p >= book_plies) {
            if (looked)
                ++*looked;
            if (texel_is_quiet(b, &w->w) && texel_writer_add(w, b, red_result, p) != TEXEL_OK)
                return TEXEL_ERR_IO;
        }
        if (!movegen_is_legal(b, moves[p]))
            return TEXEL_ERR_POSITION;
        board_make_move(b, moves[p]);
        // Long games: start the undo history again (the FEN keeps the position).
        if (b->hist_len >= BOARD_HISTORY_MAX - 1) {
            char fen[BOARD_FEN_MAX];
            board_fen(b, fen, sizeof fen);
            board_set_fen(b, fen, NULL, 0);
        }
    }
    return TEXEL_OK;
}

void texel_writer_discard(TexelWriter *w)
{
    if (!w)
        return;
    fclose(w->f);
    unlink(w->tmp);
    free(w->tr);
    free(w);
}

TexelStatus texel_writer_close(TexelWriter *w, char *why, size_t why_len)
{
    unsigned char h[TEXEL_HEADER] = {0};
    memcpy(h, MAGIC, 8);
    files_put_le32(h + 8, TEXEL_VERSION);
    files_put_le32(h + 12, TEXEL_RECORD);
    files_put_le64(h + 16, w->count);
    files_put_le64(h + 24, w->terms);
    files_put_le64(h + 32, layout_hash());
    files_put_le32(h + 40, PARAM_NB);
    files_put_le32(h + 44, (uint32_t)crc32(0, h, 44));
    TexelStatus st = TEXEL_OK;
    if (w->in_block > 0 && !w->failed)
        block_end(w); // the last, shorter block
    // fsync before the rename: a dataset takes hours of games to make, so it must survive a
    // power loss, and the name never points at a half-written file.
    if (w->failed || fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, 1, sizeof h, w->f) != sizeof h ||
        fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
        st = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
    if (fclose(w->f) != 0 && st == TEXEL_OK)
        st = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
    if (st == TEXEL_OK && rename(w->tmp, w->path) != 0)
        st = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", w->path, strerror(errno));
    if (st != TEXEL_OK)
        unlink(w->tmp);
    free(w->tr);
    free(w);
    return st;
}

// ---- Quiet positions -------------------------------------------------------------------------

/// A capture-only search (fail-hard alpha-beta, stand pat), capped at 20,000 nodes so one
/// wild position cannot stall an extraction of thousands of games.
static int qsearch(Board *b, const Weights *w, int alpha, int beta, int depth, int *nodes)
{
    int stand = eval_evaluate(b, w);
    if (stand >= beta || depth == 0 || ++*nodes > 20000)
        return stand;
    if (stand > alpha)
        alpha = stand;
    MoveList l;
    movegen_captures(b, &l);
    for (int i = 0; i < l.count && alpha < beta; i++) {
        board_make_move(b, l.moves[i]);
        int v = -qsearch(b, w, -beta, -alpha, depth - 1, nodes);
        board_unmake_move(b);
        if (v > alpha)
            alpha = v;
    }
    return alpha;
}

bool texel_is_quiet(Board *b, const Weights *w)
{
    if (board_in_check(b))
        return false;
    // Quiet when no capture gains on standing pat: the static evaluation, which the fit sees,
    // is then what the position is worth, not a moment before a recapture.
    int stand = eval_evaluate(b, w), nodes = 0;
    MoveList l;
    movegen_captures(b, &l);
    for (int i = 0; i < l.count; i++) {
        board_make_move(b, l.moves[i]);
        int v = -qsearch(b, w, -VALUE_BIG, -stand, 7, &nodes);
        board_unmake_move(b);
        if (v > stand)
            return false;
    }
    return true;
}

// ---- Reading ----------------------------------------------------------------------------------

/// The header's counts, checked against the file's size before anything is allocated.
typedef struct {
    uint64_t count, terms, layout;
    uint32_t params;
} Header;

static TexelStatus read_header(FILE *f, const char *path, Header *hd, uint64_t *size, char *why,
                               size_t why_len)
{
    unsigned char h[TEXEL_HEADER];
    size_t got_h = fread(h, 1, sizeof h, f);
    if (got_h != sizeof h && ferror(f)) // a directory, a read error
        return WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    if (got_h != sizeof h)
        return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len, "%s: shorter than a %d-byte header", path,
                        TEXEL_HEADER);
    if (memcmp(h, MAGIC, 8) != 0)
        return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len, "%s: not a Texel dataset (bad magic)",
                        path);
    if ((uint32_t)crc32(0, h, 44) != files_get_le32(h + 44))
        return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len, "%s: header CRC mismatch", path);
    // An older version is named as such, with the fix: its records have no checksums to trust.
    if (files_get_le32(h + 8) < TEXEL_VERSION)
        return WHY_FAIL(TEXEL_ERR_VERSION, why, why_len,
                        "%s: version %u, from before records had checksums (this build reads %d): "
                        "extract it again with xqforge texel extract",
                        path, (unsigned)files_get_le32(h + 8), TEXEL_VERSION);
    if (files_get_le32(h + 8) != TEXEL_VERSION)
        return WHY_FAIL(TEXEL_ERR_VERSION, why, why_len, "%s: version %u (this build reads %d)",
                        path, (unsigned)files_get_le32(h + 8), TEXEL_VERSION);
    if (files_get_le32(h + 12) != TEXEL_RECORD)
        return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len, "%s: record size %u, expected %d", path,
                        (unsigned)files_get_le32(h + 12), TEXEL_RECORD);
    *hd = (Header){files_get_le64(h + 16), files_get_le64(h + 24), files_get_le64(h + 32),
                   files_get_le32(h + 40)};
    if (hd->count > TEXEL_MAX_POSITIONS || hd->params == 0 || hd->params > 65535 ||
        hd->terms > hd->count * hd->params)
        return WHY_FAIL(
            TEXEL_ERR_FORMAT, why, why_len, "%s: %llu positions, %llu terms of %u weights", path,
            (unsigned long long)hd->count, (unsigned long long)hd->terms, (unsigned)hd->params);
    // The exact size the counts imply: a cut or padded file is refused before its bytes are
    // trusted (and before a header's huge count allocates anything).
    if (fseek(f, 0, SEEK_END) != 0)
        return WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    long got = ftell(f);
    uint64_t blocks = (hd->count + TEXEL_BLOCK - 1) / TEXEL_BLOCK;
    uint64_t want = TEXEL_HEADER + hd->count * (TEXEL_RECORD + 4) + hd->terms * 4 + blocks * 4;
    if (got < 0 || (uint64_t)got != want)
        return WHY_FAIL(TEXEL_ERR_TRUNCATED, why, why_len,
                        "%s: %ld bytes, the header's %llu positions need %llu", path, got,
                        (unsigned long long)hd->count, (unsigned long long)want);
    *size = want;
    return TEXEL_OK;
}

TexelStatus texel_file_info(const char *path, uint64_t *count, char *why, size_t why_len)
{
    FILE *f = files_open_regular(path);
    if (!f)
        return WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    Header hd = {0};
    uint64_t size;
    TexelStatus st = read_header(f, path, &hd, &size, why, why_len);
    fclose(f);
    *count = hd.count;
    return st;
}

/// Decodes and traces one record with this build's evaluation: n terms into out (room for
/// PARAM_NB), its phase; false with why if the record is not a legal position.
static bool retrace(const unsigned char *rec, Board *b, EvalTrace *t, const Weights *w,
                    unsigned char *out, int *n, int *phase, char *why, size_t why_len)
{
    char fen[160];
    if (rec[45] > 1 || rec[46] > 2) {
        snprintf(why, why_len, "side %u, result %u", rec[45], rec[46]);
        return false;
    }
    // Through a FEN: board_set_fen checks a position as strictly as any input (pieces, kings,
    // counts), so a damaged record is refused by name and never reaches the evaluation.
    posdata_board_fen(rec, rec[45], fen, sizeof fen);
    if (board_set_fen(b, fen, why, why_len) != FEN_OK)
        return false;
    memset(t, 0, sizeof *t);
    eval_trace(b, w, t);
    *n = trace_terms(t, out);
    *phase = t->phase;
    return true;
}

/// One thread's share of a re-trace: it grows its own term buffer (no locks), and the buffers
/// are joined in thread order afterwards, so the set is the same whatever the timing.
typedef struct {
    const unsigned char **recs; // this shard's records
    uint64_t from, to;          // local indices handled by this thread
    Term *terms;
    uint64_t nterms, cap;
    uint64_t *count;         // per local position: its term count
    uint8_t *phase, *result; // shared arrays, indexed by local position
    TexelStatus st;
    uint64_t bad; // local index of a bad record
    char why[256];
} LoadJob;

/// Re-traces positions [from, to) of a shard (a dataset of another evaluation layout).
static void *load_thread(void *arg)
{
    LoadJob *j = arg;
    Board *b = malloc(sizeof *b);
    EvalTrace *t = malloc(sizeof *t);
    unsigned char *buf = malloc(4 * PARAM_NB);
    Weights w;
    weights_default(&w);
    for (uint64_t i = j->from; i < j->to && b && t && buf; i++) {
        int n = 0, phase = 0;
        if (!retrace(j->recs[i], b, t, &w, buf, &n, &phase, j->why, sizeof j->why)) {
            j->st = TEXEL_ERR_POSITION;
            j->bad = i;
            break;
        }
        if (j->nterms + PARAM_NB > j->cap) { // room for the largest trace, doubling
            uint64_t cap = j->cap ? j->cap * 2 : 1 << 16;
            Term *nt = realloc(j->terms, sizeof *nt * cap);
            if (!nt) {
                j->st = TEXEL_ERR_NOMEM;
                break;
            }
            j->terms = nt;
            j->cap = cap;
        }
        memcpy(j->terms + j->nterms, buf, 4 * (size_t)n); // little-endian host
        j->nterms += (uint64_t)n;
        j->count[i] = (uint64_t)n;
        j->phase[i] = (uint8_t)phase;
        j->result[i] = j->recs[i][46];
    }
    if (!b || !t || !buf)
        j->st = TEXEL_ERR_NOMEM;
    free(b);
    free(t);
    free(buf);
    return NULL;
}

void texel_set_free(TexelSet *s)
{
    if (!s)
        return;
    free(s->start);
    free(s->terms);
    free(s->phase);
    free(s->result);
    free(s->game);
    free(s);
}

/// The per-position arrays for n positions (+1: start[n] closes the last position's terms).
static TexelSet *set_alloc(uint64_t n)
{
    TexelSet *s = calloc(1, sizeof *s);
    if (s && (!(s->phase = malloc(n + 1)) || !(s->result = malloc(n + 1)) ||
              !(s->game = malloc(sizeof *s->game * (n + 1))) ||
              !(s->start = malloc(sizeof *s->start * (n + 1))))) {
        texel_set_free(s);
        return NULL;
    }
    if (s)
        s->n = n;
    return s;
}

/// Builds the set by tracing every record again, on threads.
static TexelStatus load_retrace(TexelSet *s, const unsigned char **recs, int threads, int shard,
                                int shards, const char *path, char *why, size_t why_len)
{
    uint64_t n = s->n, *count = malloc(sizeof *count * (n + 1));
    LoadJob *jobs = calloc((size_t)threads, sizeof *jobs);
    TexelStatus st = count && jobs ? TEXEL_OK : TEXEL_ERR_NOMEM;
    pthread_t tid[256];
    bool started[256] = {false};
    for (int t = 0; st == TEXEL_OK && t < threads; t++) {
        LoadJob *j = &jobs[t];
        *j = (LoadJob){recs,
                       n * (uint64_t)t / (uint64_t)threads,
                       n * (uint64_t)(t + 1) / (uint64_t)threads,
                       NULL,
                       0,
                       0,
                       count,
                       s->phase,
                       s->result,
                       TEXEL_OK,
                       0,
                       ""};
        started[t] = pthread_create(&tid[t], NULL, load_thread, j) == 0;
        if (!started[t])
            load_thread(j); // no thread: do it here
    }
    for (int t = 0; t < threads; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    // The first failing thread's reason, its position numbered in the file (1-based), not in
    // the shard, so it can be found with `texel info` or a hex dump.
    uint64_t nterms = 0;
    for (int t = 0; st == TEXEL_OK && t < threads; t++) {
        if (jobs[t].st == TEXEL_ERR_POSITION)
            st =
                WHY_FAIL(TEXEL_ERR_POSITION, why, why_len, "%s: position %llu: %s", path,
                         (unsigned long long)(jobs[t].bad * (uint64_t)shards + (uint64_t)shard) + 1,
                         jobs[t].why);
        else if (jobs[t].st != TEXEL_OK)
            st = WHY_FAIL(jobs[t].st, why, why_len, "out of memory");
        nterms += jobs[t].nterms;
    }
    if (st == TEXEL_OK && !(s->terms = malloc(sizeof *s->terms * (nterms ? nterms : 1))))
        st = WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu terms",
                      (unsigned long long)nterms);
    if (st == TEXEL_OK) {
        uint64_t at = 0;
        for (int t = 0; t < threads; t++) {
            if (jobs[t].nterms) // a thread with no positions has no buffer
                memcpy(s->terms + at, jobs[t].terms, sizeof *s->terms * jobs[t].nterms);
            at += jobs[t].nterms;
        }
        s->start[0] = 0; // the threads' slices are in order: offsets are a running sum
        for (uint64_t i = 0; i < n; i++)
            s->start[i + 1] = s->start[i] + count[i];
    }
    for (int t = 0; jobs && t < threads; t++)
        free(jobs[t].terms);
    free(jobs);
    free(count);
    return st;
}

/// Checks every 64th stored trace against this build's evaluation: a dataset written by
/// an evaluation with the same weight names but other features is traced again.
static TexelStatus verify_sample(const TexelSet *s, const unsigned char **recs, bool *stale,
                                 uint64_t *bad, char *why, size_t why_len)
{
    Board *b = malloc(sizeof *b);
    EvalTrace *t = malloc(sizeof *t);
    unsigned char *buf = malloc(4 * PARAM_NB);
    Weights w;
    weights_default(&w);
    TexelStatus st = b && t && buf ? TEXEL_OK : TEXEL_ERR_NOMEM;
    *stale = false;
    for (uint64_t i = 0; st == TEXEL_OK && !*stale && i < s->n; i += 64) {
        int n = 0, phase = 0;
        if (!retrace(recs[i], b, t, &w, buf, &n, &phase, why, why_len)) {
            *bad = i;
            st = TEXEL_ERR_POSITION;
            break;
        }
        // One disagreement is enough: the evaluation changed, every trace is suspect.
        *stale = phase != s->phase[i] || (uint64_t)n != s->start[i + 1] - s->start[i] ||
                 memcmp(buf, s->terms + s->start[i], 4 * (size_t)n) != 0;
    }
    free(b);
    free(t);
    free(buf);
    return st;
}

/// The length of the record at p, checked against end (0 if it does not fit or claims more
/// terms than the layout has weights).
static size_t record_len(const unsigned char *p, const unsigned char *end, uint32_t params)
{
    if ((size_t)(end - p) < TEXEL_RECORD + 4)
        return 0;
    unsigned n = p[TEXEL_RECORD + 2] | (unsigned)p[TEXEL_RECORD + 3] << 8;
    size_t len = TEXEL_RECORD + 4 + 4 * (size_t)n;
    return n > params || (size_t)(end - p) < len ? 0 : len;
}

/// Checks the CRC-32 of the block of records [first, first + count) that starts at p (a
/// position of the body at file offset `off`); *block_end receives where its CRC ends.
static TexelStatus block_check(const unsigned char *p, const unsigned char *end, uint64_t first,
                               uint64_t count, uint32_t params, uint64_t off,
                               const unsigned char **block_end, const char *path, char *why,
                               size_t why_len)
{
    const unsigned char *q = p;
    for (uint64_t i = 0; i < count; i++) {
        size_t len = record_len(q, end, params);
        if (!len)
            return WHY_FAIL(
                TEXEL_ERR_FORMAT, why, why_len,
                "%s: position %llu (byte %llu): its terms overrun the file: the file is "
                "damaged",
                path, (unsigned long long)(first + i + 1),
                (unsigned long long)(off + (uint64_t)(q - p)));
        q += len;
    }
    if ((size_t)(end - q) < 4)
        return WHY_FAIL(TEXEL_ERR_TRUNCATED, why, why_len,
                        "%s: the checksum of positions %llu..%llu is cut short", path,
                        (unsigned long long)first + 1, (unsigned long long)(first + count));
    if ((uint32_t)crc32(0, p, (uInt)(q - p)) != files_get_le32(q))
        return WHY_FAIL(
            TEXEL_ERR_CHECKSUM, why, why_len,
            "%s: positions %llu..%llu (bytes %llu..%llu): checksum mismatch: the file is "
            "damaged, extract it again",
            path, (unsigned long long)first + 1, (unsigned long long)(first + count),
            (unsigned long long)off, (unsigned long long)(off + (uint64_t)(q - p) + 3));
    *block_end = q + 4;
    return TEXEL_OK;
}

/// Walks the records block by block: each block's CRC-32 first, then its records' bytes
/// (the shard's record pointers, results and phases, and the number of their stored terms).
static TexelStatus parse_records(const unsigned char *p, const unsigned char *end, const Header *hd,
                                 int shard, int shards, TexelSet *s, const unsigned char **recs,
                                 uint64_t *terms, const char *path, char *why, size_t why_len)
{
    const unsigned char *body = p;
    uint64_t k = 0, game = 0;
    int ply = -1, result = -1;
    *terms = 0;
    // Every rank checks every block, not only its shard's records: a damaged file is refused
    // by all ranks alike, with the same position named.
    for (uint64_t first = 0; first < hd->count; first += TEXEL_BLOCK) {
        uint64_t count = hd->count - first < TEXEL_BLOCK ? hd->count - first : TEXEL_BLOCK;
        const unsigned char *next = end;
        TexelStatus st =
            block_check(p, end, first, count, hd->params, TEXEL_HEADER + (uint64_t)(p - body),
                        &next, path, why, why_len);
        if (st != TEXEL_OK)
            return st;
        for (uint64_t i = first; i < first + count; i++) {
            // Only every 64th record is decoded: the bytes the fit reads are checked for all.
            if (p[45] > 1 || p[46] > 2 || p[TEXEL_RECORD] > EVAL_PHASE_MAX)
                return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len,
                                "%s: position %llu: side %u, result %u, phase %u", path,
                                (unsigned long long)i + 1, p[45], p[46], p[TEXEL_RECORD]);
            // The records hold no game: a writer adds a game's positions in ply order with one
            // result, so a new game starts where the ply bucket falls or the result changes
            // (texel.h). Counted over the whole file, so every rank numbers games alike.
            if (ply >= 0 && (p[47] < ply || p[46] != result))
                game++;
            ply = p[47], result = p[46];
            if (i % (uint64_t)shards == (uint64_t)shard) {
                recs[k] = p;
                s->game[k] = (uint32_t)game;
                s->result[k] = p[46];
                s->phase[k] = p[TEXEL_RECORD];
                *terms += p[TEXEL_RECORD + 2] | (unsigned)p[TEXEL_RECORD + 3] << 8;
                k++;
            }
            p += record_len(p, end, hd->params);
        }
        p = next;
    }
    return p == end ? TEXEL_OK
                    : WHY_FAIL(TEXEL_ERR_TRUNCATED, why, why_len,
                               "%s: bytes after the last position", path);
}

/// Copies the stored traces of the shard's records into the set.
static TexelStatus copy_terms(TexelSet *s, const unsigned char **recs, uint64_t terms,
                              const char *path, char *why, size_t why_len)
{
    if (!(s->terms = malloc(sizeof *s->terms * (terms ? terms : 1))))
        return WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu terms",
                        (unsigned long long)terms);
    uint64_t at = 0;
    for (uint64_t k = 0; k < s->n; k++) {
        const unsigned char *q = recs[k] + TEXEL_RECORD + 4;
        unsigned n = recs[k][TEXEL_RECORD + 2] | (unsigned)recs[k][TEXEL_RECORD + 3] << 8;
        s->start[k] = at;
        for (unsigned j = 0; j < n; j++, q += 4) {
            uint16_t id = (uint16_t)(q[0] | q[1] << 8);
            if (id >= PARAM_NB) // the fit indexes weights by it: never past the table
                return WHY_FAIL(TEXEL_ERR_FORMAT, why, why_len, "%s: weight id %u in a trace", path,
                                (unsigned)id);
            s->terms[at++] = (Term){id, (int16_t)(uint16_t)(q[2] | q[3] << 8)};
        }
    }
    s->start[s->n] = at;
    return TEXEL_OK;
}

TexelStatus texel_set_load(const char *path, int shard, int shards, int threads, TexelSet **out,
                           uint64_t *total_out, char *why, size_t why_len)
{
    *out = NULL;
    if (shards < 1 || shard < 0 || shard >= shards)
        return WHY_FAIL(TEXEL_ERR_CONFIG, why, why_len, "shard %d of %d", shard, shards);
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    // One read of the whole body: records have variable length, so a shard cannot seek to its
    // own, and a single read is the fastest way through a file of a million positions.
    FILE *f = fopen(path, "rb");
    if (!f)
        return WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    Header hd = {0};
    uint64_t size = 0;
    TexelStatus st = read_header(f, path, &hd, &size, why, why_len);
    if (total_out)
        *total_out = hd.count;
    unsigned char *body = NULL;
    size_t blen = (size_t)(size - TEXEL_HEADER);
    if (st == TEXEL_OK && !(body = malloc(blen ? blen : 1)))
        st = WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %zu bytes", blen);
    if (st == TEXEL_OK &&
        (fseek(f, TEXEL_HEADER, SEEK_SET) != 0 || fread(body, 1, blen, f) != blen))
        st = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "%s: short read", path);
    fclose(f);
    // The shard's positions: i % shards == shard, so ranks get equal shares of every part of
    // the file (early and late games alike).
    uint64_t n = hd.count > (uint64_t)shard
                     ? (hd.count - (uint64_t)shard + (uint64_t)shards - 1) / (uint64_t)shards
                     : 0;
    // Same layout: the stored traces are used (checked by a sample); else all traced again.
    bool same = hd.layout == layout_hash() && hd.params == PARAM_NB;
    TexelSet *s = st == TEXEL_OK ? set_alloc(n) : NULL;
    const unsigned char **recs = st == TEXEL_OK ? malloc(sizeof *recs * (n + 1)) : NULL;
    if (st == TEXEL_OK && (!s || !recs))
        st = WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu positions",
                      (unsigned long long)n);
    uint64_t terms = 0;
    if (st == TEXEL_OK)
        st = parse_records(body, body + blen, &hd, shard, shards, s, recs, &terms, path, why,
                           why_len);
    if (st == TEXEL_OK && same)
        st = copy_terms(s, recs, terms, path, why, why_len);
    bool stale = !same;
    uint64_t bad = 0;
    if (st == TEXEL_OK && same) {
        st = verify_sample(s, recs, &stale, &bad, why, why_len);
        if (st == TEXEL_ERR_POSITION) {
            char inner[256];
            snprintf(inner, sizeof inner, "%s", why);
            why_set(why, why_len, "%s: position %llu: %s", path,
                    (unsigned long long)(bad * (uint64_t)shards + (uint64_t)shard) + 1, inner);
        }
    }
    if (st == TEXEL_OK && stale) {
        free(s->terms);
        s->terms = NULL;
        st = load_retrace(s, recs, threads, shard, shards, path, why, why_len);
    }
    free(recs);
    free(body);
    if (st != TEXEL_OK) {
        texel_set_free(s);
        return st;
    }
    *out = s;
    return TEXEL_OK;
}

uint64_t texel_set_size(const TexelSet *s) { return s->n; }
uint32_t texel_set_game(const TexelSet *s, uint64_t i) { return s->game[i]; }

bool texel_game_held(uint32_t game, double val)
{
    // splitmix64 of the game's number: a fixed, well-mixed choice of games, not every tenth.
    uint64_t z = (uint64_t)game + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 < val; // 53 bits: [0, 1)
}
double texel_set_result(const TexelSet *s, uint64_t i) { return s->result[i] / 2.0; }
