// SPDX-License-Identifier: MIT
#include "texel.h"

#include "posdata.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "eval.h"
#include "files.h"
#include "movegen.h"

enum { VALUE_BIG = 32000 };

static const char MAGIC[8] = "XQTEXEL";

const char *texel_strerror(TexelStatus st)
{
    static const char *const text[TEXEL_STATUS_NB] = {"ok",
                                                      "cannot read or write the file",
                                                      "not a dataset",
                                                      "dataset of another version",
                                                      "truncated dataset",
                                                      "bad position in the dataset",
                                                      "out of memory",
                                                      "another rank failed",
                                                      "bad settings",
                                                      "damaged dataset (checksum mismatch)",
                                                      "checkpoint of other inputs",
                                                      "stopped after a checkpoint"};
    return (unsigned)st < TEXEL_STATUS_NB ? text[st] : "unknown Texel status";
}

__attribute__((format(printf, 4, 5))) static TexelStatus fail(TexelStatus st, char *why,
                                                              size_t why_len, const char *fmt, ...)
{
    if (why && why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return st;
}

// ---- Writer --------------------------------------------------------------------------------

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
        return fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    }
    weights_default(&w->w);
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", path);
    unsigned char zero[TEXEL_HEADER] = {0};
    if (!(w->f = fopen(w->tmp, "wb")) || fwrite(zero, 1, sizeof zero, w->f) != sizeof zero) {
        TexelStatus st = fail(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
        if (w->f)
            fclose(w->f);
        free(w->tr);
        free(w);
        return st;
    }
    *out = w;
    return TEXEL_OK;
}

/// The non-zero coefficients of a trace as (u16 id, i16 coef) pairs; returns their count.
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
    for (int s = 0; s < SQUARE_NB; s++)
        rec[s / 2] |= (unsigned char)((b->squares[s] & 15) << (4 * (s & 1)));
    rec[45] = b->side == RED ? 0 : 1;
    rec[46] = red_result > 0.75 ? 2 : red_result < 0.25 ? 0 : 1;
    rec[47] = (unsigned char)(ply / 4 > 255 ? 255 : ply < 0 ? 0 : ply / 4);
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
    if (w->failed || fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, 1, sizeof h, w->f) != sizeof h ||
        fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
        st = fail(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
    if (fclose(w->f) != 0 && st == TEXEL_OK)
        st = fail(TEXEL_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
    if (st == TEXEL_OK && rename(w->tmp, w->path) != 0)
        st = fail(TEXEL_ERR_IO, why, why_len, "%s: %s", w->path, strerror(errno));
    if (st != TEXEL_OK)
        unlink(w->tmp);
    free(w->tr);
    free(w);
    return st;
}

// ---- Quiet positions -------------------------------------------------------------------------

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

typedef struct {
    uint16_t id;
    int16_t coef;
} Term;

struct TexelSet {
    uint64_t n;
    uint64_t *start; // terms of position i: [start[i], start[i+1])
    Term *terms;
    uint8_t *phase, *result; // result: 0, 1, 2 (halves of a point for Red)
};

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
        return fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    if (got_h != sizeof h)
        return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: shorter than a %d-byte header", path,
                    TEXEL_HEADER);
    if (memcmp(h, MAGIC, 8) != 0)
        return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: not a Texel dataset (bad magic)", path);
    if ((uint32_t)crc32(0, h, 44) != files_get_le32(h + 44))
        return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: header CRC mismatch", path);
    if (files_get_le32(h + 8) < TEXEL_VERSION)
        return fail(TEXEL_ERR_VERSION, why, why_len,
                    "%s: version %u, from before records had checksums (this build reads %d): "
                    "extract it again with xqforge texel extract",
                    path, (unsigned)files_get_le32(h + 8), TEXEL_VERSION);
    if (files_get_le32(h + 8) != TEXEL_VERSION)
        return fail(TEXEL_ERR_VERSION, why, why_len, "%s: version %u (this build reads %d)", path,
                    (unsigned)files_get_le32(h + 8), TEXEL_VERSION);
    if (files_get_le32(h + 12) != TEXEL_RECORD)
        return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: record size %u, expected %d", path,
                    (unsigned)files_get_le32(h + 12), TEXEL_RECORD);
    *hd = (Header){files_get_le64(h + 16), files_get_le64(h + 24), files_get_le64(h + 32),
                   files_get_le32(h + 40)};
    if (hd->count > TEXEL_MAX_POSITIONS || hd->params == 0 || hd->params > 65535 ||
        hd->terms > hd->count * hd->params)
        return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: %llu positions, %llu terms of %u weights",
                    path, (unsigned long long)hd->count, (unsigned long long)hd->terms,
                    (unsigned)hd->params);
    if (fseek(f, 0, SEEK_END) != 0)
        return fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    long got = ftell(f);
    uint64_t blocks = (hd->count + TEXEL_BLOCK - 1) / TEXEL_BLOCK;
    uint64_t want = TEXEL_HEADER + hd->count * (TEXEL_RECORD + 4) + hd->terms * 4 + blocks * 4;
    if (got < 0 || (uint64_t)got != want)
        return fail(TEXEL_ERR_TRUNCATED, why, why_len,
                    "%s: %ld bytes, the header's %llu positions need %llu", path, got,
                    (unsigned long long)hd->count, (unsigned long long)want);
    *size = want;
    return TEXEL_OK;
}

TexelStatus texel_file_info(const char *path, uint64_t *count, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
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
    posdata_board_fen(rec, rec[45], fen, sizeof fen);
    if (board_set_fen(b, fen, why, why_len) != FEN_OK)
        return false;
    memset(t, 0, sizeof *t);
    eval_trace(b, w, t);
    *n = trace_terms(t, out);
    *phase = t->phase;
    return true;
}

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
        if (j->nterms + PARAM_NB > j->cap) {
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
    free(s);
}

static TexelSet *set_alloc(uint64_t n)
{
    TexelSet *s = calloc(1, sizeof *s);
    if (s && (!(s->phase = malloc(n + 1)) || !(s->result = malloc(n + 1)) ||
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
    uint64_t nterms = 0;
    for (int t = 0; st == TEXEL_OK && t < threads; t++) {
        if (jobs[t].st == TEXEL_ERR_POSITION)
            st = fail(TEXEL_ERR_POSITION, why, why_len, "%s: position %llu: %s", path,
                      (unsigned long long)(jobs[t].bad * (uint64_t)shards + (uint64_t)shard) + 1,
                      jobs[t].why);
        else if (jobs[t].st != TEXEL_OK)
            st = fail(jobs[t].st, why, why_len, "out of memory");
        nterms += jobs[t].nterms;
    }
    if (st == TEXEL_OK && !(s->terms = malloc(sizeof *s->terms * (nterms ? nterms : 1))))
        st = fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu terms",
                  (unsigned long long)nterms);
    if (st == TEXEL_OK) {
        uint64_t at = 0;
        for (int t = 0; t < threads; t++) {
            if (jobs[t].nterms) // a thread with no positions has no buffer
                memcpy(s->terms + at, jobs[t].terms, sizeof *s->terms * jobs[t].nterms);
            at += jobs[t].nterms;
        }
        s->start[0] = 0;
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
            return fail(TEXEL_ERR_FORMAT, why, why_len,
                        "%s: position %llu (byte %llu): its terms overrun the file: the file is "
                        "damaged",
                        path, (unsigned long long)(first + i + 1),
                        (unsigned long long)(off + (uint64_t)(q - p)));
        q += len;
    }
    if ((size_t)(end - q) < 4)
        return fail(TEXEL_ERR_TRUNCATED, why, why_len,
                    "%s: the checksum of positions %llu..%llu is cut short", path,
                    (unsigned long long)first + 1, (unsigned long long)(first + count));
    if ((uint32_t)crc32(0, p, (uInt)(q - p)) != files_get_le32(q))
        return fail(TEXEL_ERR_CHECKSUM, why, why_len,
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
    uint64_t k = 0;
    *terms = 0;
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
                return fail(TEXEL_ERR_FORMAT, why, why_len,
                            "%s: position %llu: side %u, result %u, phase %u", path,
                            (unsigned long long)i + 1, p[45], p[46], p[TEXEL_RECORD]);
            if (i % (uint64_t)shards == (uint64_t)shard) {
                recs[k] = p;
                s->result[k] = p[46];
                s->phase[k] = p[TEXEL_RECORD];
                *terms += p[TEXEL_RECORD + 2] | (unsigned)p[TEXEL_RECORD + 3] << 8;
                k++;
            }
            p += record_len(p, end, hd->params);
        }
        p = next;
    }
    return p == end
               ? TEXEL_OK
               : fail(TEXEL_ERR_TRUNCATED, why, why_len, "%s: bytes after the last position", path);
}

/// Copies the stored traces of the shard's records into the set.
static TexelStatus copy_terms(TexelSet *s, const unsigned char **recs, uint64_t terms,
                              const char *path, char *why, size_t why_len)
{
    if (!(s->terms = malloc(sizeof *s->terms * (terms ? terms : 1))))
        return fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu terms",
                    (unsigned long long)terms);
    uint64_t at = 0;
    for (uint64_t k = 0; k < s->n; k++) {
        const unsigned char *q = recs[k] + TEXEL_RECORD + 4;
        unsigned n = recs[k][TEXEL_RECORD + 2] | (unsigned)recs[k][TEXEL_RECORD + 3] << 8;
        s->start[k] = at;
        for (unsigned j = 0; j < n; j++, q += 4) {
            uint16_t id = (uint16_t)(q[0] | q[1] << 8);
            if (id >= PARAM_NB)
                return fail(TEXEL_ERR_FORMAT, why, why_len, "%s: weight id %u in a trace", path,
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
        return fail(TEXEL_ERR_CONFIG, why, why_len, "shard %d of %d", shard, shards);
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    Header hd = {0};
    uint64_t size = 0;
    TexelStatus st = read_header(f, path, &hd, &size, why, why_len);
    if (total_out)
        *total_out = hd.count;
    unsigned char *body = NULL;
    size_t blen = (size_t)(size - TEXEL_HEADER);
    if (st == TEXEL_OK && !(body = malloc(blen ? blen : 1)))
        st = fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %zu bytes", blen);
    if (st == TEXEL_OK &&
        (fseek(f, TEXEL_HEADER, SEEK_SET) != 0 || fread(body, 1, blen, f) != blen))
        st = fail(TEXEL_ERR_IO, why, why_len, "%s: short read", path);
    fclose(f);
    uint64_t n = hd.count > (uint64_t)shard
                     ? (hd.count - (uint64_t)shard + (uint64_t)shards - 1) / (uint64_t)shards
                     : 0;
    bool same = hd.layout == layout_hash() && hd.params == PARAM_NB;
    TexelSet *s = st == TEXEL_OK ? set_alloc(n) : NULL;
    const unsigned char **recs = st == TEXEL_OK ? malloc(sizeof *recs * (n + 1)) : NULL;
    if (st == TEXEL_OK && (!s || !recs))
        st = fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory for %llu positions",
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
            fail(st, why, why_len, "%s: position %llu: %s", path,
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
double texel_set_result(const TexelSet *s, uint64_t i) { return s->result[i] / 2.0; }

static bool is_mg[PARAM_NB];
static pthread_once_t mg_once = PTHREAD_ONCE_INIT;

static void mg_init(void)
{
    for (int id = 0; id < PARAM_NB; id++)
        is_mg[id] = eval_param_is_mg(id);
}

int texel_set_eval(const TexelSet *s, uint64_t i, const Weights *w)
{
    pthread_once(&mg_once, mg_init);
    int mg = 0, eg = 0, p = s->phase[i];
    for (uint64_t k = s->start[i]; k < s->start[i + 1]; k++) {
        const Term *t = &s->terms[k];
        if (is_mg[t->id])
            mg += t->coef * w->v[t->id];
        else
            eg += t->coef * w->v[t->id];
    }
    return (mg * p + eg * (EVAL_PHASE_MAX - p)) / EVAL_PHASE_MAX;
}

// ---- Loss and gradient ---------------------------------------------------------------------

enum { SUM_LOSS = PARAM_NB, SUM_COUNT, SUM_NB }; // layout of a reduced sum buffer

typedef struct {
    const TexelSet *s;
    const double *w;
    double k;
    uint64_t from, to;
    bool want_grad;
    double sum[SUM_NB];
} GradJob;

static void *grad_thread(void *arg)
{
    GradJob *j = arg;
    const TexelSet *s = j->s;
    const double *w = j->w, scale = j->k * M_LN10 / 400.0;
    memset(j->sum, 0, sizeof j->sum);
    for (uint64_t i = j->from; i < j->to; i++) {
        double mg = 0, eg = 0, p = s->phase[i] / (double)EVAL_PHASE_MAX;
        const Term *t = s->terms + s->start[i], *end = s->terms + s->start[i + 1];
        for (const Term *q = t; q < end; q++)
            if (is_mg[q->id])
                mg += q->coef * w[q->id];
            else
                eg += q->coef * w[q->id];
        double e = mg * p + eg * (1 - p);
        double sig = 1 / (1 + exp(-scale * e)), err = sig - s->result[i] / 2.0;
        j->sum[SUM_LOSS] += err * err;
        if (!j->want_grad)
            continue;
        double d = 2 * err * sig * (1 - sig) * scale;
        for (const Term *q = t; q < end; q++)
            j->sum[q->id] += d * q->coef * (is_mg[q->id] ? p : 1 - p);
    }
    j->sum[SUM_COUNT] = (double)(j->to - j->from);
    return NULL;
}

/// Sums over this rank's positions on x->threads threads, then over all ranks.
static TexelStatus sums(const TexelSet *s, const double *w, double k, const TexelExec *x,
                        bool want_grad, double *out)
{
    pthread_once(&mg_once, mg_init);
    int threads = x && x->threads > 0 ? (x->threads > 256 ? 256 : x->threads) : 1;
    GradJob *jobs = calloc((size_t)threads, sizeof *jobs);
    if (!jobs)
        return TEXEL_ERR_NOMEM;
    pthread_t tid[256];
    bool started[256] = {false};
    for (int t = 0; t < threads; t++) {
        jobs[t] = (GradJob){s,
                            w,
                            k,
                            s->n * (uint64_t)t / (uint64_t)threads,
                            s->n * (uint64_t)(t + 1) / (uint64_t)threads,
                            want_grad,
                            {0}};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, grad_thread, &jobs[t]) == 0;
    }
    // The calling thread takes the first slice (and any whose thread did not start) while
    // the others run.
    for (int t = 0; t < threads; t++)
        if (!started[t])
            grad_thread(&jobs[t]);
    memset(out, 0, sizeof(double) * SUM_NB);
    for (int t = 0; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        for (int i = 0; i < SUM_NB; i++)
            out[i] += jobs[t].sum[i];
    }
    free(jobs);
    if (x && x->reduce && !x->reduce(x->ctx, out, SUM_NB))
        return TEXEL_ERR_REDUCE;
    return out[SUM_COUNT] > 0 ? TEXEL_OK : TEXEL_ERR_CONFIG;
}

TexelStatus texel_loss(const TexelSet *s, const double *w, double k, const TexelExec *x,
                       double *loss)
{
    double sum[SUM_NB];
    TexelStatus st = sums(s, w, k, x, false, sum);
    if (st == TEXEL_OK)
        *loss = sum[SUM_LOSS] / sum[SUM_COUNT];
    return st;
}

TexelStatus texel_gradient(const TexelSet *s, const double *w, double k, const TexelExec *x,
                           double *loss, double *grad)
{
    double sum[SUM_NB];
    TexelStatus st = sums(s, w, k, x, true, sum);
    if (st != TEXEL_OK)
        return st;
    *loss = sum[SUM_LOSS] / sum[SUM_COUNT];
    for (int i = 0; i < PARAM_NB; i++)
        grad[i] = sum[i] / sum[SUM_COUNT];
    return TEXEL_OK;
}

TexelStatus texel_fit_k(const TexelSet *s, const double *w, const TexelExec *x, double *k)
{
    // Golden-section search: the loss is unimodal in K for a fixed evaluation.
    const double g = (sqrt(5.0) - 1) / 2;
    double a = 0.05, b = 5.0, c = b - g * (b - a), d = a + g * (b - a), fc, fd;
    TexelStatus st = texel_loss(s, w, c, x, &fc);
    if (st == TEXEL_OK)
        st = texel_loss(s, w, d, x, &fd);
    for (int it = 0; st == TEXEL_OK && it < 40; it++) {
        if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            st = texel_loss(s, w, c, x, &fc);
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            st = texel_loss(s, w, d, x, &fd);
        }
    }
    *k = (a + b) / 2;
    return st;
}

// ---- Fit -------------------------------------------------------------------------------------

// Checkpoint: magic, CkptId, u32 PARAM_NB, FitState (host byte order: it never leaves the
// machine that wrote it). "XQTXCKP" was the format before it recorded its inputs.
static const char CKPT_MAGIC[8] = "XQTXCK3", CKPT_MAGIC_OLD[8] = "XQTXCKP";

typedef struct {
    double epoch, k, loss_start;
    double w[PARAM_NB], m[PARAM_NB], v[PARAM_NB];
} FitState;

/// What a checkpoint was made from (no padding: written as it is).
typedef struct {
    uint64_t data, start, job, tuned;
    int32_t epochs, ranks;
    double lr, l2, k;
} CkptId;

static CkptId ckpt_id(const TexelFitConfig *cfg)
{
    CkptId id;
    memset(&id, 0, sizeof id);
    id.data = cfg->inputs.data;
    id.start = cfg->inputs.start;
    id.job = cfg->inputs.job;
    id.tuned = files_fnv(FILES_FNV_BASIS, cfg->tuned, sizeof cfg->tuned);
    id.epochs = cfg->epochs;
    id.ranks = cfg->inputs.ranks;
    id.lr = cfg->lr;
    id.l2 = cfg->l2;
    id.k = cfg->k;
    return id;
}

/// The first difference between what a checkpoint was made from and now, as "made from
/// another dataset (hash X, now Y)"; false if there is none.
static bool ckpt_differs(const CkptId *was, const CkptId *now, char *out, size_t len)
{
    if (was->data != now->data)
        snprintf(out, len, "made from another dataset (hash %016llx, now %016llx)",
                 (unsigned long long)was->data, (unsigned long long)now->data);
    else if (was->start != now->start)
        snprintf(out, len, "made from other start weights (hash %016llx, now %016llx)",
                 (unsigned long long)was->start, (unsigned long long)now->start);
    else if (was->tuned != now->tuned)
        snprintf(out, len, "made tuning another set of weights (params)");
    else if (was->epochs != now->epochs)
        snprintf(out, len, "made for %d epochs, now %d", was->epochs, now->epochs);
    else if (was->lr != now->lr || was->l2 != now->l2 || was->k != now->k)
        snprintf(out, len, "made with lr %g, l2 %g, k %g (0: fitted), now lr %g, l2 %g, k %g",
                 was->lr, was->l2, was->k, now->lr, now->l2, now->k);
    else if (was->ranks != now->ranks)
        snprintf(out, len, "made on %d rank%s, now %d", was->ranks, was->ranks == 1 ? "" : "s",
                 now->ranks);
    else if (was->job != now->job)
        snprintf(out, len, "made for another job (identity %016llx, now %016llx)",
                 (unsigned long long)was->job, (unsigned long long)now->job);
    else
        return false;
    return true;
}

/// Reads the checkpoint into *st: TEXEL_OK with *found (false: no file there), or
/// TEXEL_ERR_STALE with why for a file that cannot be resumed.
static TexelStatus ckpt_read(const TexelFitConfig *cfg, bool *found, FitState *st, char *why,
                             size_t why_len)
{
    *found = false;
    if (!cfg->checkpoint || cfg->fresh)
        return TEXEL_OK;
    const char *path = cfg->checkpoint;
    FILE *f = fopen(path, "rb");
    if (!f && errno == ENOENT)
        return TEXEL_OK;
    if (!f)
        return fail(TEXEL_ERR_STALE, why, why_len, "checkpoint %s: %s", path, strerror(errno));
    char magic[8] = "", diff[256] = "";
    CkptId was, now = ckpt_id(cfg);
    uint32_t n = 0;
    bool head = fread(magic, 1, 8, f) == 8;
    TexelStatus ts = TEXEL_ERR_STALE;
    if (head && !memcmp(magic, CKPT_MAGIC_OLD, 8))
        fail(ts, why, why_len,
             "checkpoint %s was written by an older xqforge (no record of its inputs)", path);
    else if (!head || memcmp(magic, CKPT_MAGIC, 8))
        fail(ts, why, why_len, "%s is not a Texel checkpoint", path);
    else if (fread(&was, sizeof was, 1, f) != 1 || fread(&n, sizeof n, 1, f) != 1 ||
             (n == PARAM_NB && fread(st, sizeof *st, 1, f) != 1))
        fail(ts, why, why_len, "checkpoint %s is cut short", path);
    else if (n != PARAM_NB)
        fail(ts, why, why_len, "checkpoint %s holds %u weights, this build has %d", path,
             (unsigned)n, PARAM_NB);
    else if (ckpt_differs(&was, &now, diff, sizeof diff))
        fail(ts, why, why_len, "checkpoint %s was %s", path, diff);
    else if (!(st->epoch >= 0 && st->epoch <= cfg->epochs)) // NaN too
        fail(ts, why, why_len, "checkpoint %s is damaged (epoch %g)", path, st->epoch);
    else
        ts = TEXEL_OK;
    fclose(f);
    *found = ts == TEXEL_OK;
    return ts;
}

TexelStatus texel_checkpoint_check(const TexelFitConfig *cfg, bool *found, char *why,
                                   size_t why_len)
{
    FitState *st = malloc(sizeof *st);
    if (!st)
        return fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    TexelStatus ts = ckpt_read(cfg, found, st, why, why_len);
    free(st);
    return ts;
}

static bool ckpt_write(const TexelFitConfig *cfg, const FitState *st)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", cfg->checkpoint);
    FILE *f = fopen(tmp, "wb");
    CkptId id = ckpt_id(cfg);
    uint32_t n = PARAM_NB;
    bool ok = f && fwrite(CKPT_MAGIC, 1, 8, f) == 8 && fwrite(&id, sizeof id, 1, f) == 1 &&
              fwrite(&n, sizeof n, 1, f) == 1 && fwrite(st, sizeof *st, 1, f) == 1 &&
              fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0)
        ok = false;
    return ok && rename(tmp, cfg->checkpoint) == 0;
}

int texel_checkpoint_epoch(const TexelFitConfig *cfg)
{
    FitState *st = malloc(sizeof *st);
    bool found = false;
    char why[256];
    int epoch =
        st && ckpt_read(cfg, &found, st, why, sizeof why) == TEXEL_OK && found ? (int)st->epoch : 0;
    free(st);
    return epoch;
}

TexelStatus texel_loss_csv_open(const char *path, int epoch, FILE **out, int *kept, char *why,
                                size_t why_len)
{
    *out = NULL;
    *kept = 0;
    FILE *f = fopen(path, epoch > 0 ? "r+" : "w");
    if (!f && epoch > 0 && errno == ENOENT)
        f = fopen(path, "w"); // the rows are gone: the curve restarts at `epoch`
    if (!f)
        return fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    // Keep the header and the complete rows of epochs 0 .. epoch-1, in order; cut the rest.
    char line[256];
    long keep = 0;
    bool header = false;
    while (epoch > 0 && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n')
            break; // a row cut short by a kill
        char *end;
        long e = strtol(line, &end, 10);
        if (!header && end == line) {
            header = true;
        } else if (end == line || *end != ',' || e != *kept || e >= epoch) {
            break;
        } else {
            ++*kept;
        }
        keep = ftell(f);
    }
    if (keep == 0)
        *kept = 0;
    if (fflush(f) != 0 || ftruncate(fileno(f), keep) != 0 || fseek(f, keep, SEEK_SET) != 0 ||
        (keep == 0 && fprintf(f, "epoch,loss\n") < 0) || fflush(f) != 0) {
        TexelStatus st = fail(TEXEL_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
        fclose(f);
        return st;
    }
    *out = f;
    return TEXEL_OK;
}

int texel_at_bounds(const Weights *w, const Weights *start, const bool *tuned, int *ids)
{
    int n = 0;
    for (int i = 0; i < PARAM_NB; i++)
        if (tuned[i] && w->v[i] != start->v[i] &&
            (w->v[i] <= params_info[i].min || w->v[i] >= params_info[i].max))
            ids[n++] = i;
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/// The root's checkpoint (or zeros elsewhere) summed over ranks, so every rank starts alike;
/// *flag is the root's: 1 resume, 0 a fresh fit, -1 a checkpoint refused (TEXEL_ERR_STALE).
static TexelStatus fit_resume(const TexelFitConfig *cfg, const Weights *start, const TexelExec *x,
                              FitState *st, double *flag, char *why, size_t why_len)
{
    bool resumed = false;
    TexelStatus ts = ckpt_read(cfg, &resumed, st, why, why_len);
    *flag = ts != TEXEL_OK ? -1 : resumed ? 1 : 0;
    if (ts != TEXEL_OK) {
        memset(st, 0, sizeof *st); // the refused file may have been read in part
        for (int i = 0; i < PARAM_NB; i++)
            st->w[i] = start->v[i];
    }
    if (x && x->reduce) {
        if (!x->reduce(x->ctx, flag, 1))
            return TEXEL_ERR_REDUCE;
        if (*flag > 0) {
            if (!resumed)
                memset(st, 0, sizeof *st);
            if (!x->reduce(x->ctx, (double *)st, (int)(sizeof *st / sizeof(double))))
                return TEXEL_ERR_REDUCE;
        }
    }
    if (*flag < 0) {
        if (!cfg->checkpoint)
            fail(TEXEL_ERR_STALE, why, why_len,
                 "the checkpoint on another rank is of other inputs");
        return TEXEL_ERR_STALE;
    }
    return TEXEL_OK;
}

/// Whether any rank was asked to stop (the flag summed over ranks: all stop at one epoch).
static TexelStatus fit_stop(const TexelFitConfig *cfg, const TexelExec *x, bool *stop)
{
    double s = cfg->stop && atomic_load(cfg->stop) ? 1 : 0;
    if (x && x->reduce && !x->reduce(x->ctx, &s, 1))
        return TEXEL_ERR_REDUCE;
    *stop = s > 0;
    return TEXEL_OK;
}

/// One Adam step on the tuned weights from the data gradient plus the L2 pull towards the
/// start (l2 / n per (100 cp)^2), each weight clamped to its range.
static void fit_step(const TexelFitConfig *cfg, const Weights *start, double n, const double *grad,
                     FitState *st, int epoch)
{
    const double b1 = 0.9, b2 = 0.999, t = epoch + 1;
    for (int i = 0; i < PARAM_NB; i++) {
        if (!cfg->tuned[i])
            continue;
        double g = grad[i] + 2 * cfg->l2 * (st->w[i] - start->v[i]) / (1e4 * n);
        st->m[i] = b1 * st->m[i] + (1 - b1) * g;
        st->v[i] = b2 * st->v[i] + (1 - b2) * g * g;
        double mh = st->m[i] / (1 - pow(b1, t)), vh = st->v[i] / (1 - pow(b2, t));
        st->w[i] -= cfg->lr * mh / (sqrt(vh) + 1e-15);
        double lo = params_info[i].min, hi = params_info[i].max;
        st->w[i] = st->w[i] < lo ? lo : st->w[i] > hi ? hi : st->w[i];
    }
}

/// The loss after `epoch` steps is known: the CSV row, the console line, the callback.
static void fit_record(const TexelFitConfig *cfg, int epoch, double loss, const double *w,
                       double per_epoch)
{
    if (cfg->loss_csv)
        fprintf(cfg->loss_csv, "%d,%.8f\n", epoch, loss), fflush(cfg->loss_csv);
    if (cfg->log && epoch > 0 && (epoch % 10 == 0 || epoch == cfg->epochs))
        fprintf(cfg->log, "epoch %d/%d: loss %.6f after its step (%.3f s/epoch)\n", epoch,
                cfg->epochs, loss, per_epoch),
            fflush(cfg->log);
    if (cfg->on_epoch)
        cfg->on_epoch(cfg->ctx, epoch, loss, w);
}

TexelStatus texel_fit(const TexelSet *s, const TexelFitConfig *cfg, const Weights *start,
                      const TexelExec *x, Weights *out, TexelFitReport *rep, char *why,
                      size_t why_len)
{
    if (cfg->epochs < 1 || !(cfg->lr > 0) || !(cfg->l2 >= 0) || cfg->k < 0 ||
        cfg->checkpoint_every < 0 || !(cfg->checkpoint_seconds >= 0))
        return fail(TEXEL_ERR_CONFIG, why, why_len,
                    "epochs %d, lr %g, l2 %g, k %g, checkpoint every %d epochs or %g s",
                    cfg->epochs, cfg->lr, cfg->l2, cfg->k, cfg->checkpoint_every,
                    cfg->checkpoint_seconds);
    FitState *st = calloc(1, sizeof *st);
    double *grad = malloc(sizeof *grad * PARAM_NB);
    if (!st || !grad) {
        free(st);
        free(grad);
        return fail(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    }
    memset(rep, 0, sizeof *rep);
    int tuned = 0, every = cfg->checkpoint_every ? cfg->checkpoint_every : TEXEL_CHECKPOINT_EVERY;
    for (int i = 0; i < PARAM_NB; i++) {
        st->w[i] = start->v[i];
        tuned += cfg->tuned[i];
    }
    double flag = 0, n = (double)s->n;
    TexelStatus ts = fit_resume(cfg, start, x, st, &flag, why, why_len);
    if (ts == TEXEL_OK && x && x->reduce && !x->reduce(x->ctx, &n, 1))
        ts = TEXEL_ERR_REDUCE; // the positions of all ranks: the L2 pull's scale
    if (ts == TEXEL_OK && flag == 0) {
        st->k = cfg->k;
        if (st->k == 0) // K once, from the start weights: held for the whole fit
            ts = texel_fit_k(s, st->w, x, &st->k);
        if (ts == TEXEL_OK)
            ts = texel_loss(s, st->w, st->k, x, &st->loss_start);
    }
    rep->resumed_from = flag > 0 ? (int)st->epoch : 0;
    if (ts == TEXEL_OK && cfg->log && flag > 0)
        fprintf(cfg->log, "Resuming at epoch %d: K = %.4f, loss %.6f at the start\n",
                (int)st->epoch, st->k, st->loss_start);
    else if (ts == TEXEL_OK && cfg->log)
        fprintf(cfg->log,
                "Fitted K = %.4f: loss %.6f at the start, %d weights tuned, %llu positions here\n",
                st->k, st->loss_start, tuned, (unsigned long long)s->n);
    double t0 = now_s(), saved = t0, loss = st->loss_start;
    int epoch = (int)st->epoch;
    bool stop = false;
    // Epoch e: the gradient at the weights after e steps gives their loss (row e), then step
    // e + 1. A checkpoint holds the state after its steps: resuming recomputes row e exactly.
    for (; ts == TEXEL_OK && epoch < cfg->epochs && !stop; epoch++) {
        ts = texel_gradient(s, st->w, st->k, x, &loss, grad);
        if (ts != TEXEL_OK)
            break;
        fit_record(cfg, epoch, loss, st->w, (now_s() - t0) / (epoch + 1 - rep->resumed_from));
        fit_step(cfg, start, n, grad, st, epoch);
        st->epoch = epoch + 1;
        ts = fit_stop(cfg, x, &stop);
        bool due = (epoch + 1) % every == 0 || epoch + 1 == cfg->epochs || stop ||
                   (cfg->checkpoint_seconds > 0 && now_s() - saved >= cfg->checkpoint_seconds);
        if (ts == TEXEL_OK && cfg->checkpoint && due) {
            if (!ckpt_write(cfg, st))
                ts = fail(TEXEL_ERR_IO, why, why_len, "cannot write the checkpoint %s: %s",
                          cfg->checkpoint, strerror(errno));
            saved = now_s();
        }
    }
    double t1 = now_s();
    if (ts == TEXEL_OK)
        ts = texel_loss(s, st->w, st->k, x, &loss);
    int run = epoch - rep->resumed_from;
    bool drained = stop && epoch < cfg->epochs;
    if (ts == TEXEL_OK && !drained)
        fit_record(cfg, epoch, loss, st->w, run > 0 ? (t1 - t0) / run : 0);
    if (ts == TEXEL_OK && drained) {
        rep->drained = true;
        ts = fail(TEXEL_DRAINED, why, why_len, "stopped after epoch %d of %d (checkpointed)", epoch,
                  cfg->epochs);
    }
    rep->k = st->k;
    rep->loss_start = st->loss_start;
    rep->loss_end = loss;
    rep->epochs_done = epoch;
    rep->seconds_per_epoch = run > 0 ? (t1 - t0) / run : 0;
    for (int i = 0; i < PARAM_NB; i++)
        out->v[i] = (int32_t)lround(st->w[i]);
    if (ts != TEXEL_OK && why && !why[0])
        fail(ts, why, why_len, "%s", texel_strerror(ts));
    free(st);
    free(grad);
    return ts;
}
