// SPDX-License-Identifier: MIT
// The output directory's lock (files_lock): flock, held against a second taker with this
// host and pid named; the O_EXCL lock-file fallback (forced by the test hook
// XQ_LOCK_NO_FLOCK=1, as on Lustre or NFS mounted without flock): held, released (the file
// removed), a stale one of this host taken over (its process gone, or its pid reused), one
// of another host refused naming that host; and flock refused while a live fallback file
// exists (a run on a mount without flock).
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "files.h"

typedef struct {
    char dir[64], lock[128], excl[160], host[256];
} Paths;

static int setup(void **state)
{
    Paths *p = calloc(1, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "/tmp/xq-files-XXXXXX");
    assert_non_null(mkdtemp(p->dir));
    snprintf(p->lock, sizeof p->lock, "%s/.xqforge.lock", p->dir);
    snprintf(p->excl, sizeof p->excl, "%s.excl", p->lock);
    assert_int_equal(gethostname(p->host, sizeof p->host), 0);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    Paths *p = *state;
    unsetenv("XQ_LOCK_NO_FLOCK");
    unlink(p->excl);
    unlink(p->lock);
    rmdir(p->dir);
    free(p);
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_flock_held(void **state)
{
    Paths *p = *state;
    FilesLock a, b;
    FilesLockHolder h;
    assert_int_equal(files_lock(p->lock, &a, &h), 0);
    assert_false(a.excl);
    assert_true(a.fd >= 0);
    assert_int_equal(files_lock(p->lock, &b, &h), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    assert_int_equal(h.pid, getpid());
    assert_string_equal(h.host, p->host);
    files_unlock(&a);
    assert_int_equal(files_lock(p->lock, &b, &h), 0);
    files_unlock(&b);
}

static void test_fallback_held_and_released(void **state)
{
    Paths *p = *state;
    setenv("XQ_LOCK_NO_FLOCK", "1", 1);
    FilesLock a, b;
    FilesLockHolder h;
    long long before = time(NULL);
    assert_int_equal(files_lock(p->lock, &a, &h), 0);
    assert_true(a.excl);
    assert_string_equal(a.excl_path, p->excl);
    assert_false(h.stale);
    assert_int_equal(access(p->excl, F_OK), 0);
    assert_int_equal(files_lock(p->lock, &b, &h), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    assert_int_equal(h.pid, getpid());
    assert_string_equal(h.host, p->host);
    assert_true(h.started >= before && h.started <= time(NULL));
    files_unlock(&a);
    assert_int_equal(access(p->excl, F_OK), -1); // removed at the end
    assert_int_equal(files_lock(p->lock, &b, &h), 0);
    files_unlock(&b);
}

static void test_fallback_stale_taken_over(void **state)
{
    Paths *p = *state;
    setenv("XQ_LOCK_NO_FLOCK", "1", 1);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child); // its pid now names no process
    char text[400];
    snprintf(text, sizeof text, "%s %ld %lld\n", p->host, (long)child, (long long)time(NULL));
    write_file(p->excl, text);
    FilesLock a;
    FilesLockHolder h;
    assert_int_equal(files_lock(p->lock, &a, &h), 0);
    assert_true(h.stale);
    assert_int_equal(h.pid, child);
    files_unlock(&a);
    // A pid that names a process started after the lock was taken: reused, so stale too.
    snprintf(text, sizeof text, "%s %ld 1000\n", p->host, (long)getpid());
    write_file(p->excl, text);
    assert_int_equal(files_lock(p->lock, &a, &h), 0);
    assert_true(h.stale);
    files_unlock(&a);
}

static void test_fallback_other_host_refused(void **state)
{
    Paths *p = *state;
    setenv("XQ_LOCK_NO_FLOCK", "1", 1);
    write_file(p->excl, "login-node-7.example 1 1000\n");
    FilesLock a;
    FilesLockHolder h;
    assert_int_equal(files_lock(p->lock, &a, &h), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    assert_string_equal(h.host, "login-node-7.example");
    assert_int_equal(h.pid, 1);
    assert_int_equal(access(p->excl, F_OK), 0); // never taken over
}

static void test_flock_refused_while_fallback_held(void **state)
{
    Paths *p = *state;
    setenv("XQ_LOCK_NO_FLOCK", "1", 1);
    FilesLock a, b;
    FilesLockHolder h;
    assert_int_equal(files_lock(p->lock, &a, &h), 0);
    unsetenv("XQ_LOCK_NO_FLOCK");
    assert_int_equal(files_lock(p->lock, &b, &h), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    assert_int_equal(h.pid, getpid());
    files_unlock(&a);
    assert_int_equal(files_lock(p->lock, &b, &h), 0);
    assert_false(b.excl);
    files_unlock(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_flock_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_held_and_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_stale_taken_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_other_host_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flock_refused_while_fallback_held, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
