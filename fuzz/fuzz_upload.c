// SPDX-License-Identifier: MIT
// What the uploader reads from outside (coordinator/upload.c): HTTP reply bodies, cut into a
// one-line snippet for the log (any bytes, in any chunking, give printable bounded text),
// and spool entries' meta.json (any file is loaded or refused; a loaded entry has an
// http(s) URL and plain file names). Compiles upload.c itself to reach its static parsers.
#include "fuzz_util.h"

#include <sys/stat.h>

#include "../coordinator/upload.c"

static char spool_dir[64];

static void check_reply(const uint8_t *data, size_t size)
{
    Snippet s = {0};
    size_t cut = size ? data[0] % (size + 1) : 0; // two chunks, as curl may deliver them
    if (on_reply((char *)data, 1, cut, &s) != cut ||
        on_reply((char *)data + cut, 1, size - cut, &s) != size - cut)
        abort();
    if (s.len > SNIPPET_MAX || strlen(s.text) != s.len)
        abort();
    for (size_t i = 0; i < s.len; i++)
        if ((unsigned char)s.text[i] < 0x20 || s.text[i] == 0x7f)
            abort();
    if (strlen(reply_text(&s)) > SNIPPET_MAX)
        abort();
}

static void check_meta(const uint8_t *data, size_t size)
{
    if (!spool_dir[0]) {
        snprintf(spool_dir, sizeof spool_dir, "/tmp/fuzz_upload.XXXXXX");
        if (!mkdtemp(spool_dir))
            abort();
    }
    char path[128];
    snprintf(path, sizeof path, "%s/meta.json", spool_dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    Entry e;
    char why[512] = "";
    if (entry_load(spool_dir, &e, why, sizeof why) == UPLOAD_OK) {
        for (int i = 0; i < e.target.url_count; i++)
            if (strncmp(e.target.urls[i], "http://", 7) && strncmp(e.target.urls[i], "https://", 8))
                abort();
        for (int i = 0; i < e.file_count; i++)
            if (!e.files[i][0] || strchr(e.files[i], '/') || e.files[i][0] == '.')
                abort();
        json_decref(e.meta);
    } else if (!*why || e.meta) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_reply(data, size);
    check_meta(data, size);
    return 0;
}
