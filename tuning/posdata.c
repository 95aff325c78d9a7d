// SPDX-License-Identifier: MIT
// Training positions files (.xqp): see posdata.h for the format.
#include "posdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "files.h"
#include "why.h"

static const char MAGIC[8] = "XQPOS\0\0";

const char *posdata_strerror(PosdataStatus st)
{
    static const char *const text[POSDATA_STATUS_NB] = {
        [POSDATA_OK] = "ok",
        [POSDATA_ERR_IO] = "cannot read or write the file",
        [POSDATA_ERR_FORMAT] = "not a positions file (.xqp)",
        [POSDATA_ERR_VERSION] = "a positions file of another version",
        [POSDATA_ERR_TRUNCATED] = "the file's size disagrees with its record count",
        [POSDATA_ERR_CHECKSUM] = "a block of records fails its checksum: a damaged file",
        [POSDATA_ERR_POSITION] = "a record is not a legal position",
        [POSDATA_ERR_NOMEM] = "out of memory",
    };
    return (unsigned)st < POSDATA_STATUS_NB ? text[st] : "unknown status";
}

/// CRC-32 (zlib's): a damaged block is refused by its records' numbers, not trained on.
static uint32_t crc(const uint8_t *p, size_t n) { return (uint32_t)crc32(0, p, (uInt)n); }

void posdata_encode(const Board *b, int score, Move best, int ply, int depth, uint32_t game,
                    double red_result, uint8_t out[POSDATA_RECORD])
{
    memset(out, 0, POSDATA_RECORD); // byte 47 (flags) must be 0: posdata_decode checks it
    // The board as nibbles (piece codes): the whole position in 45 bytes, decoded through a
    // FEN so a record is checked as strictly as any position typed in.
    for (int s = 0; s < SQUARE_NB; s++)
        out[s / 2] |= (uint8_t)((b->squares[s] & 15) << (4 * (s & 1)));
    out[45] = b->side == RED ? 0 : 1;
    out[46] = red_result > 0.75 ? 2 : red_result < 0.25 ? 0 : 1;
    // Mate scores are clamped to the range a trainer can use (they say "won", not how much).
    score = score > POSDATA_SCORE_MAX    ? POSDATA_SCORE_MAX
            : score < -POSDATA_SCORE_MAX ? -POSDATA_SCORE_MAX
                                         : score;
    files_put_le(out + 48, (uint16_t)(int16_t)score, 2);
    files_put_le(out + 50, best, 2);
    files_put_le(out + 52, (uint16_t)(ply < 0 ? 0 : ply > 65535 ? 65535 : ply), 2);
    files_put_le(out + 54, (uint16_t)(depth < 0 ? 0 : depth > 65535 ? 65535 : depth), 2);
    files_put_le32(out + 56, game);
}

void posdata_board_fen(const uint8_t nibbles[45], int side, char *fen, size_t len)
{
    static const char chars[] = ".KABNRCP.kabnrcp"; // by piece code; 0 and 8: no piece
    char buf[BOARD_FEN_MAX + 16], *p = buf;
    for (int r = RANK_NB - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < FILE_NB; f++) {
            int sq = r * FILE_NB + f, code = (nibbles[sq / 2] >> (4 * (sq & 1))) & 15;
            if (code == 0) {
                empty++;
                continue;
            }
            if (empty)
                *p++ = (char)('0' + empty);
            empty = 0;
            *p++ = chars[code];
        }
        if (empty)
            *p++ = (char)('0' + empty);
        if (r)
            *p++ = '/';
    }
    snprintf(p, 16, " %c - - 0 1", side ? 'b' : 'w'); // no history: a record is one position
    snprintf(fen, len, "%s", buf);
}

PosdataStatus posdata_decode(const uint8_t in[POSDATA_RECORD], PosRecord *out, char *why,
                             size_t why_len)
{
    char fen[BOARD_FEN_MAX + 16];
    if (in[45] > 1 || in[46] > 2 || in[47] != 0)
        return WHY_FAIL(POSDATA_ERR_POSITION, why, why_len, "side %u, result %u, flags %u", in[45],
                        in[46], in[47]);
    posdata_board_fen(in, in[45], fen, sizeof fen);
    if (board_set_fen(&out->board, fen, why, why_len) != FEN_OK)
        return POSDATA_ERR_POSITION;
    int score = (int16_t)(uint16_t)files_get_le(in + 48, 2);
    if (score > POSDATA_SCORE_MAX || score < -POSDATA_SCORE_MAX)
        return WHY_FAIL(POSDATA_ERR_POSITION, why, why_len, "score %d out of range", score);
    out->score = score;
    out->move = (uint16_t)files_get_le(in + 50, 2);
    out->ply = (uint16_t)files_get_le(in + 52, 2);
    out->depth = (uint16_t)files_get_le(in + 54, 2);
    out->game = files_get_le32(in + 56);
    out->red_result = in[46] * 0.5;
    return POSDATA_OK;
}

// ---- Writing ----------------------------------------------------------------------------

struct PosWriter {
    FILE *f;
    char path[4096], tmp[4120];
    uint64_t count;
    uint32_t crc;      // of the current block's records so far
    uint32_t in_block; // records in the current block
    bool failed;
};

/// The header with its own CRC-32: written empty at open and again with the count at close,
/// so a file whose writer died says so (size and count disagree).
static void header_encode(uint8_t h[POSDATA_HEADER], uint64_t count)
{
    memset(h, 0, POSDATA_HEADER);
    memcpy(h, MAGIC, 8);
    files_put_le32(h + 8, POSDATA_VERSION);
    files_put_le32(h + 12, POSDATA_RECORD);
    files_put_le64(h + 16, count);
    files_put_le32(h + 24, POSDATA_BLOCK);
    files_put_le32(h + 28, crc(h, 28));
}

/// Checks a header; its record count into *count.
static PosdataStatus header_decode(const uint8_t h[POSDATA_HEADER], const char *path,
                                   uint64_t *count, char *why, size_t why_len)
{
    if (memcmp(h, MAGIC, 8) != 0)
        return WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len, "%s: not a positions file (bad magic)",
                        path);
    if (crc(h, 28) != files_get_le32(h + 28))
        return WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len, "%s: the header's checksum fails", path);
    if (files_get_le32(h + 8) != POSDATA_VERSION)
        return WHY_FAIL(POSDATA_ERR_VERSION, why, why_len, "%s: version %u, this build reads %d",
                        path, (unsigned)files_get_le32(h + 8), POSDATA_VERSION);
    if (files_get_le32(h + 12) != POSDATA_RECORD || files_get_le32(h + 24) != POSDATA_BLOCK)
        return WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len,
                        "%s: records of %u bytes in blocks of %u, expected %d and %d", path,
                        (unsigned)files_get_le32(h + 12), (unsigned)files_get_le32(h + 24),
                        POSDATA_RECORD, POSDATA_BLOCK);
    *count = files_get_le64(h + 16);
    if (*count > POSDATA_MAX_RECORDS)
        return WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len, "%s: %llu records, more than %d", path,
                        (unsigned long long)*count, POSDATA_MAX_RECORDS);
    return POSDATA_OK;
}

/// The byte size of a file of n records.
static uint64_t file_size(uint64_t n)
{
    return POSDATA_HEADER + n * POSDATA_RECORD + 4 * ((n + POSDATA_BLOCK - 1) / POSDATA_BLOCK);
}

PosdataStatus posdata_writer_open(const char *path, bool append, PosWriter **out, char *why,
                                  size_t why_len)
{
    *out = NULL;
    PosWriter *w = calloc(1, sizeof *w);
    if (!w)
        return WHY_FAIL(POSDATA_ERR_NOMEM, why, why_len, "out of memory");
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", path);
    struct stat st;
    if (append && stat(path, &st) == 0) {
        // Reopen in place: check every block, then drop the last partial block's checksum so
        // new records continue that block.
        uint8_t *recs = NULL;
        uint64_t n = 0;
        PosdataStatus s = posdata_read_file(path, 0, 1, &recs, &n, NULL, why, why_len);
        if (s != POSDATA_OK) {
            free(w);
            return s;
        }
        uint64_t full = n / POSDATA_BLOCK * POSDATA_BLOCK;
        w->in_block = (uint32_t)(n - full);
        w->crc = w->in_block ? crc(recs + full * POSDATA_RECORD, w->in_block * POSDATA_RECORD) : 0;
        free(recs);
        w->count = n;
        uint64_t keep = POSDATA_HEADER + n * POSDATA_RECORD + 4 * (n / POSDATA_BLOCK);
        snprintf(w->tmp, sizeof w->tmp, "%s", path); // written in place, no rename
        if (truncate(path, (off_t)keep) != 0 || !(w->f = fopen(path, "r+b")) ||
            fseeko(w->f, (off_t)keep, SEEK_SET) != 0) {
            PosdataStatus e =
                WHY_FAIL(POSDATA_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
            if (w->f)
                fclose(w->f);
            free(w);
            return e;
        }
        *out = w;
        return POSDATA_OK;
    }
    uint8_t h[POSDATA_HEADER];
    header_encode(h, 0);
    if (!(w->f = fopen(w->tmp, "wb")) || fwrite(h, 1, sizeof h, w->f) != sizeof h) {
        PosdataStatus e = WHY_FAIL(POSDATA_ERR_IO, why, why_len, "%s: %s", w->tmp, strerror(errno));
        if (w->f)
            fclose(w->f);
        free(w);
        return e;
    }
    *out = w;
    return POSDATA_OK;
}

// Records stream through stdio; each full block is closed by its CRC as it fills, so a file
// of millions of records never sits in memory.
PosdataStatus posdata_writer_add(PosWriter *w, const uint8_t rec[POSDATA_RECORD])
{
    if (w->failed)
        return POSDATA_ERR_IO;
    if (fwrite(rec, 1, POSDATA_RECORD, w->f) != POSDATA_RECORD) {
        w->failed = true;
        return POSDATA_ERR_IO;
    }
    w->crc = (uint32_t)crc32(w->crc, rec, POSDATA_RECORD);
    w->count++;
    if (++w->in_block == POSDATA_BLOCK) {
        uint8_t c[4];
        files_put_le32(c, w->crc);
        if (fwrite(c, 1, 4, w->f) != 4)
            w->failed = true;
        w->crc = 0;
        w->in_block = 0;
    }
    return w->failed ? POSDATA_ERR_IO : POSDATA_OK;
}

uint64_t posdata_writer_count(const PosWriter *w) { return w->count; }

PosdataStatus posdata_writer_close(PosWriter *w, char *why, size_t why_len)
{
    bool ok = !w->failed;
    if (ok && w->in_block) {
        uint8_t c[4];
        files_put_le32(c, w->crc);
        ok = fwrite(c, 1, 4, w->f) == 4;
    }
    uint8_t h[POSDATA_HEADER];
    header_encode(h, w->count);
    // The count last, synced before the rename: the file at path is whole or the old one.
    ok = ok && fseeko(w->f, 0, SEEK_SET) == 0 && fwrite(h, 1, sizeof h, w->f) == sizeof h &&
         fflush(w->f) == 0 && fsync(fileno(w->f)) == 0;
    ok = fclose(w->f) == 0 && ok;
    bool in_place = strcmp(w->tmp, w->path) == 0;
    if (ok && !in_place)
        ok = rename(w->tmp, w->path) == 0;
    PosdataStatus st = ok ? POSDATA_OK
                          : WHY_FAIL(POSDATA_ERR_IO, why, why_len, "%s: %s",
                                     in_place ? w->path : w->tmp, strerror(errno ? errno : EIO));
    if (!ok && !in_place)
        remove(w->tmp);
    free(w);
    return st;
}

void posdata_writer_discard(PosWriter *w)
{
    fclose(w->f);
    if (strcmp(w->tmp, w->path) != 0)
        remove(w->tmp);
    free(w);
}

// ---- Reading ----------------------------------------------------------------------------

PosdataStatus posdata_read_file(const char *path, int shard, int shards, uint8_t **records,
                                uint64_t *count, uint64_t *total, char *why, size_t why_len)
{
    *records = NULL;
    *count = 0;
    if (shards < 1 || shard < 0 || shard >= shards)
        return WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len, "shard %d of %d", shard, shards);
    FILE *f = files_open_regular(path);
    if (!f)
        return WHY_FAIL(POSDATA_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    uint8_t h[POSDATA_HEADER], *buf = NULL, *out = NULL;
    uint64_t n = 0;
    PosdataStatus st = POSDATA_OK;
    struct stat sb;
    if (fread(h, 1, sizeof h, f) != sizeof h) {
        st = WHY_FAIL(POSDATA_ERR_FORMAT, why, why_len, "%s: shorter than a header (%d bytes)",
                      path, POSDATA_HEADER);
        goto done;
    }
    if ((st = header_decode(h, path, &n, why, why_len)) != POSDATA_OK)
        goto done;
    if (fstat(fileno(f), &sb) != 0 || (uint64_t)sb.st_size != file_size(n)) {
        st = WHY_FAIL(POSDATA_ERR_TRUNCATED, why, why_len,
                      "%s: %llu bytes, but %llu records make %llu (an unfinished or damaged file)",
                      path, (unsigned long long)sb.st_size, (unsigned long long)n,
                      (unsigned long long)file_size(n));
        goto done;
    }
    // One read of the body; every block is checked by every rank (a damaged file is refused
    // alike everywhere), and the rank keeps records i with i % shards == shard.
    size_t body = (size_t)(file_size(n) - POSDATA_HEADER);
    uint64_t mine = n / (uint64_t)shards + ((uint64_t)shard < n % (uint64_t)shards);
    if (!(buf = malloc(body ? body : 1)) || !(out = malloc(mine ? mine * POSDATA_RECORD : 1))) {
        st = WHY_FAIL(POSDATA_ERR_NOMEM, why, why_len, "%s: out of memory for %llu records", path,
                      (unsigned long long)n);
        goto done;
    }
    if (fread(buf, 1, body, f) != body) {
        st = WHY_FAIL(POSDATA_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
        goto done;
    }
    const uint8_t *p = buf;
    uint64_t kept = 0;
    for (uint64_t first = 0; first < n; first += POSDATA_BLOCK) {
        uint64_t k = n - first < POSDATA_BLOCK ? n - first : POSDATA_BLOCK;
        if (crc(p, k * POSDATA_RECORD) != files_get_le32(p + k * POSDATA_RECORD)) {
            st = WHY_FAIL(POSDATA_ERR_CHECKSUM, why, why_len,
                          "%s: records %llu..%llu (bytes %llu..%llu) fail their checksum", path,
                          (unsigned long long)first + 1, (unsigned long long)(first + k),
                          (unsigned long long)(p - buf + POSDATA_HEADER),
                          (unsigned long long)(p - buf + POSDATA_HEADER + k * POSDATA_RECORD + 3));
            goto done;
        }
        for (uint64_t i = 0; i < k; i++)
            if ((first + i) % (uint64_t)shards == (uint64_t)shard)
                memcpy(out + POSDATA_RECORD * kept++, p + i * POSDATA_RECORD, POSDATA_RECORD);
        p += k * POSDATA_RECORD + 4;
    }
    *records = out;
    *count = kept;
    out = NULL;
    if (total)
        *total = n;
done:
    free(buf);
    free(out);
    fclose(f);
    return st;
}
