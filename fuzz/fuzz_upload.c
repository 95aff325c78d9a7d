// SPDX-License-Identifier: MIT
// What the uploader reads from outside (coordinator/upload*.c): HTTP reply bodies, cut into a
// one-line snippet for the log (any bytes, in any chunking, give printable bounded text),
// and spool entries' meta.json (any text is parsed or refused with a reason; a parsed entry
// holds data only: a run id, plain distinct file names, a header-safe key, bounded counts).
// Compiles upload.c and upload_spool.c itself to reach their static parsers.
#include "fuzz_util.h"

#include "../coordinator/upload.c"
#include "../coordinator/upload_spool.c"

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
    SpoolEntry e;
    char why[512] = "";
    if (entry_parse((const char *)data, size, &e, why, sizeof why) != UPLOAD_OK) {
        if (!*why)
            abort();
        return;
    }
    if (!run_id_ok(e.run_id) || e.version < 0 || e.file_count < 1 ||
        e.file_count > UPLOAD_FILES_MAX || e.delivered_count < 0 ||
        e.delivered_count > UPLOAD_DELIVERED_MAX)
        abort();
    for (const char *k = e.key; *k; k++) // it goes into a header
        if ((unsigned char)*k < 0x20 || *k == 0x7f)
            abort();
    for (int i = 0; i < e.file_count; i++) {
        if (!file_name_ok(e.files[i].name) || e.files[i].size < 0 ||
            e.files[i].size > UPLOAD_BODY_MAX)
            abort();
        for (int k = 0; k < i; k++)
            if (!strcmp(e.files[k].name, e.files[i].name))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_reply(data, size);
    check_meta(data, size);
    return 0;
}
