// SPDX-License-Identifier: MIT
#include "scratch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

void scratch_make(char *dir, size_t cap, const char *name)
{
    assert_in_range(snprintf(dir, cap, "/tmp/xq-%s-XXXXXX", name), 1, cap - 1);
    assert_non_null(mkdtemp(dir));
}

void scratch_remove(const char *dir)
{
    char cmd[256];
    assert_in_range(snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), 1, sizeof cmd - 1);
    assert_int_equal(system(cmd), 0);
}

void scratch_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}
