// SPDX-License-Identifier: MIT
// Move book files (coordinator/movebook.c, movebook_read): any file is read whole or refused
// with a reason; a book read is sorted by key, so probing finds each entry's key.
// With the first input byte odd, the entries' CRC is recomputed so the fuzzer gets past it.
#include "fuzz_util.h"

#include <zlib.h>

#include "movebook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool fix = data[0] & 1;
    uint8_t *file = malloc(size);
    memcpy(file, data + 1, size - 1);
    size--;
    if (fix && size >= MOVEBOOK_HEADER_SIZE) {
        uint32_t crc =
            (uint32_t)crc32(0, file + MOVEBOOK_HEADER_SIZE, (uInt)(size - MOVEBOOK_HEADER_SIZE));
        for (int i = 0; i < 4; i++)
            file[24 + i] = (uint8_t)(crc >> (8 * i));
    }
    char path[64], why[256];
    int fd = fuzz_memfile(file, size, path, sizeof path);
    MovebookEntry *e = NULL;
    size_t n = 0;
    why[0] = '\0';
    MovebookStatus st = movebook_read(path, &e, &n, why, sizeof why);
    if (st == MOVEBOOK_OK) {
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && e[i - 1].key > e[i].key)
                abort();
            size_t first = 0, k = movebook_probe(e, n, e[i].key, &first);
            if (k == 0 || first > i || first + k <= i)
                abort();
        }
    } else if (!*why) {
        abort();
    }
    free(e);
    close(fd);
    free(file);
    return 0;
}
