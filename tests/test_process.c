// SPDX-License-Identifier: MIT
// Child processes over pipes: lines round-trip, failures to start are reported, a silent
// child times out, an over-long line is cut, and a child that exits gives EOF.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "process.h"

static int setup(void **state)
{
    *state = malloc(sizeof(Process));
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    process_close(*state);
    free(*state);
    return 0;
}

/// Lines written to cat come back unchanged, CR LF endings lose the CR.
static void test_echo(void **state)
{
    Process *p = *state;
    char *argv[] = {"/bin/cat", NULL};
    char line[64];
    assert_int_equal(process_spawn(p, argv, NULL), PROCESS_OK);
    assert_int_equal(process_write(p, "hello\nworld\r\n"), PROCESS_OK);
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_OK);
    assert_string_equal(line, "hello");
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_OK);
    assert_string_equal(line, "world");
}

/// A program that does not exist is a spawn error, not a child that dies later.
static void test_missing_program(void **state)
{
    Process *p = *state;
    char *argv[] = {"/nonexistent/engine", NULL};
    assert_int_equal(process_spawn(p, argv, NULL), PROCESS_ERR_SPAWN);
    assert_true(p->pid <= 0);
}

/// A child that says nothing makes a read time out instead of hanging.
static void test_timeout(void **state)
{
    Process *p = *state;
    char *argv[] = {"/bin/sleep", "10", NULL};
    char line[64];
    assert_int_equal(process_spawn(p, argv, NULL), PROCESS_OK);
    assert_int_equal(process_read_line(p, line, sizeof line, 100), PROCESS_ERR_TIMEOUT);
}

/// A line longer than the cap is reported once, and the next line is read normally.
static void test_long_line(void **state)
{
    Process *p = *state;
    char *argv[] = {"/bin/cat", NULL};
    char line[128];
    size_t n = PROCESS_LINE_MAX + 1000;
    char *big = malloc(n + 8);
    assert_non_null(big);
    memset(big, 'x', n);
    strcpy(big + n, "\nok\n");
    assert_int_equal(process_spawn(p, argv, NULL), PROCESS_OK);
    assert_int_equal(process_write(p, big), PROCESS_OK);
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_ERR_LINE_LONG);
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_OK);
    assert_string_equal(line, "ok");
    free(big);
}

/// A child that exits gives EOF after its last line; writing to it then fails cleanly.
static void test_eof(void **state)
{
    Process *p = *state;
    char *argv[] = {"/bin/echo", "bye", NULL};
    char line[64];
    assert_int_equal(process_spawn(p, argv, NULL), PROCESS_OK);
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_OK);
    assert_string_equal(line, "bye");
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_ERR_EOF);
    ProcessStatus st = PROCESS_OK;
    // echo closes its output before it exits, so its input may stay open a moment longer.
    for (int i = 0; i < 500 && st == PROCESS_OK; i++) {
        st = process_write(p, "more input\n");
        usleep(10000);
    }
    assert_int_equal(st, PROCESS_ERR_WRITE);
}

/// The working directory option is applied to the child.
static void test_workdir(void **state)
{
    Process *p = *state;
    char *argv[] = {"/bin/pwd", NULL};
    char line[256];
    assert_int_equal(process_spawn(p, argv, "/tmp"), PROCESS_OK);
    assert_int_equal(process_read_line(p, line, sizeof line, 5000), PROCESS_OK);
    assert_string_equal(line, "/tmp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_echo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workdir, setup, teardown),
    };
    return cmocka_run_group_tests_name("process", tests, NULL, NULL);
}
