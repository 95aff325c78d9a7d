// SPDX-License-Identifier: MIT
// Texel datasets (tuning/texel.c, texel_set_load): any file loads or is refused with a
// reason; every loaded position has a result of 0, 1/2 or 1 and an evaluation from its trace.
// With the first input byte odd, the header CRC and every block's CRC (as far as the records
// can be walked) are recomputed so the fuzzer gets past them.
#include "fuzz_util.h"

#include <zlib.h>

#include "texel.h"

static Weights weights;

static void put_crc(uint8_t *at, const uint8_t *from, size_t n)
{
    uint32_t crc = (uint32_t)crc32(0, from, (uInt)n);
    for (int i = 0; i < 4; i++)
        at[i] = (uint8_t)(crc >> (8 * i));
}

/// The header's CRC, and each block's CRC-32 after its records while they fit the input.
static void fix_crcs(uint8_t *file, size_t size)
{
    put_crc(file + 44, file, 44);
    uint64_t count = 0;
    for (int i = 7; i >= 0; i--)
        count = count << 8 | file[16 + i];
    uint8_t *p = file + TEXEL_HEADER, *end = file + size;
    for (uint64_t first = 0; first < count; first += TEXEL_BLOCK) {
        uint8_t *block = p;
        for (uint64_t i = first; i < count && i < first + TEXEL_BLOCK; i++) {
            if (end - p < TEXEL_RECORD + 4)
                return;
            size_t len =
                TEXEL_RECORD + 4 + 4 * (size_t)(p[TEXEL_RECORD + 2] | p[TEXEL_RECORD + 3] << 8);
            if ((size_t)(end - p) < len)
                return;
            p += len;
        }
        if (end - p < 4)
            return;
        put_crc(p, block, (size_t)(p - block));
        p += 4;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    board_init();
    weights_default(&weights);
    bool fix = data[0] & 1;
    uint8_t *file = malloc(size);
    memcpy(file, data + 1, size - 1);
    size--;
    if (fix && size >= TEXEL_HEADER)
        fix_crcs(file, size);
    char path[64], why[256];
    int fd = fuzz_memfile(file, size, path, sizeof path);
    uint64_t count = 0, total = 0;
    why[0] = '\0';
    TexelStatus info = texel_file_info(path, &count, why, sizeof why);
    TexelSet *set = NULL;
    TexelStatus st = texel_set_load(path, 0, 1, 1, &set, &total, why, sizeof why);
    if (st == TEXEL_OK) {
        if (info != TEXEL_OK || texel_set_size(set) != total || total != count)
            abort();
        for (uint64_t i = 0; i < texel_set_size(set); i++) {
            double r = texel_set_result(set, i);
            if (r != 0 && r != 0.5 && r != 1)
                abort();
            texel_set_eval(set, i, &weights);
        }
        texel_set_free(set);
    } else if (set || !*why) {
        abort();
    }
    close(fd);
    free(file);
    return 0;
}
