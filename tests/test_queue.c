// SPDX-License-Identifier: MIT
// The fleet's queue (run/queue.c, queue_page.c): a queue made safe (0700) and refused
// when others or an unnamed group can write it; ids one after another and never shared; the
// job copied as it was at submit time; a record read back as written; a broken or foreign
// record refused naming the bad member; ids that would leave tests/ refused; stop and set
// under the lock; the page model ordered running, queued, then ended (newest first), its
// figures the same from result.json and from a running test's report.json.
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "queue.h"
#include "queue_page.h"

typedef struct {
    char dir[64], queue[96], job[96];
} Paths;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    Paths *p = calloc(1, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "/tmp/xq-queue-XXXXXX");
    assert_non_null(mkdtemp(p->dir));
    snprintf(p->queue, sizeof p->queue, "%s/q", p->dir);
    snprintf(p->job, sizeof p->job, "%s/a.ini", p->dir);
    write_text(p->job, "[job]\nkind = sprt\n");
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    Paths *p = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", p->dir);
    assert_int_equal(system(cmd), 0);
    free(p);
    return 0;
}

static QueueTest *new_test(const Paths *p, const char *name)
{
    QueueTest *t = calloc(1, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->kind, sizeof t->kind, "sprt");
    snprintf(t->job_file, sizeof t->job_file, "%s", p->job);
    snprintf(t->job_dir, sizeof t->job_dir, "%s", p->dir);
    snprintf(t->set_dir, sizeof t->set_dir, "/");
    t->throughput = 100;
    t->n_sets = 2;
    snprintf(t->sets[0], sizeof t->sets[0], "job.rounds=4");
    snprintf(t->sets[1], sizeof t->sets[1], "engine.new.option.Hash=16");
    return t;
}

/// A new queue is private; one writable by others, or by a group no fleet.ini names, is
/// refused with its mode; a group named by the owner's fleet.ini (and owning the directory)
/// is accepted; a directory without tests/ is not a queue.
static void test_open_modes(void **state)
{
    Paths *p = *state;
    char why[1024], path[160];
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_NOT_QUEUE);
    assert_int_equal(queue_open(p->queue, true, why, sizeof why), QUEUE_OK);
    struct stat sb;
    assert_int_equal(stat(p->queue, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(chmod(p->queue, 0702), 0);
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "mode 0702"));
    assert_int_equal(chmod(p->queue, 0770), 0);
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "no fleet.ini names a group"));
    // The directory's own group, named by fleet.ini: a shared queue.
    snprintf(path, sizeof path, "%s/fleet.ini", p->queue);
    struct group *g = getgrgid(sb.st_gid);
    assert_non_null(g);
    char text[128];
    snprintf(text, sizeof text, "[fleet]\ngroup = %s\n", g->gr_name);
    write_text(path, text);
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_OK);
    assert_int_equal(chmod(path, 0666), 0); // a fleet.ini others could edit names nothing
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "fleet.ini is refused"));
    assert_int_equal(chmod(path, 0644), 0);
    write_text(path, "[fleet]\ngroup = no-such-group-xq\n");
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "is not a group of this machine"));
    write_text(path, "[fleet]\ncolour = blue\n");
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "unknown key"));
    assert_int_equal(chmod(p->queue, 0700), 0);
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_OK);
    char tests[128];
    snprintf(tests, sizeof tests, "%s/tests", p->queue);
    assert_int_equal(rmdir(tests), 0);
    assert_int_equal(queue_open(p->queue, false, why, sizeof why), QUEUE_ERR_NOT_QUEUE);
}

/// Ids are 0001, 0002, ...; the job is a copy (a later edit of the original is not seen);
/// the record reads back as written.
static void test_add_and_read(void **state)
{
    Paths *p = *state;
    char why[1024], path[200];
    assert_int_equal(queue_open(p->queue, true, why, sizeof why), QUEUE_OK);
    QueueTest *a = new_test(p, "first"), *b = new_test(p, "second"), *r = calloc(1, sizeof *r);
    assert_int_equal(queue_add(p->queue, a, why, sizeof why), QUEUE_OK);
    write_text(p->job, "[job]\nkind = match\n");
    assert_int_equal(queue_add(p->queue, b, why, sizeof why), QUEUE_OK);
    assert_string_equal(a->id, "0001");
    assert_string_equal(b->id, "0002");
    assert_true(queue_test_path(p->queue, "0001", "job.ini", path, sizeof path));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[64] = "";
    assert_non_null(fgets(line, sizeof line, f));
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "kind = sprt\n");
    assert_int_equal(queue_read(p->queue, "0002", r, why, sizeof why), QUEUE_OK);
    assert_string_equal(r->name, "second");
    assert_int_equal(r->state, TEST_QUEUED);
    assert_int_equal(r->n_sets, 2);
    assert_string_equal(r->sets[1], "engine.new.option.Hash=16");
    assert_string_equal(r->job_dir, p->dir);
    assert_true(r->submitted > 0);
    assert_int_equal(r->uid, (unsigned)geteuid());
    QueueTest *list;
    int n;
    assert_int_equal(queue_list(p->queue, &list, &n, why, sizeof why), QUEUE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(list[0].id, "0001");
    free(list);
    free(a);
    free(b);
    free(r);
}

/// A record that is not JSON, or with a member out of range, is refused naming it; an id
/// that is not digits (a path out of tests/) is no test at all.
static void test_bad_records(void **state)
{
    Paths *p = *state;
    char why[1024], path[200];
    assert_int_equal(queue_open(p->queue, true, why, sizeof why), QUEUE_OK);
    QueueTest *a = new_test(p, "first"), *r = calloc(1, sizeof *r);
    assert_int_equal(queue_add(p->queue, a, why, sizeof why), QUEUE_OK);
    assert_int_equal(queue_read(p->queue, "../q", r, why, sizeof why), QUEUE_ERR_NO_TEST);
    assert_int_equal(queue_read(p->queue, "0009", r, why, sizeof why), QUEUE_ERR_NO_TEST);
    assert_non_null(strstr(why, "no test '0009'"));
    a->throughput = 0; // out of 1..QUEUE_THROUGHPUT_MAX
    assert_int_equal(queue_write(p->queue, a, why, sizeof why), QUEUE_OK);
    assert_int_equal(queue_read(p->queue, "0001", r, why, sizeof why), QUEUE_ERR_RECORD);
    assert_non_null(strstr(why, "'throughput'"));
    assert_true(queue_test_path(p->queue, "0001", "test.json", path, sizeof path));
    write_text(path, "{\"id\": ");
    assert_int_equal(queue_read(p->queue, "0001", r, why, sizeof why), QUEUE_ERR_RECORD);
    assert_non_null(strstr(why, "not a test record"));
    QueueTest *list;
    int n;
    assert_int_equal(queue_list(p->queue, &list, &n, why, sizeof why), QUEUE_ERR_RECORD);
    assert_int_equal(n, 0);
    free(list);
    free(a);
    free(r);
}

static bool change_stop(QueueTest *t, void *user, char *why, size_t why_len)
{
    (void)user;
    if (t->state != TEST_QUEUED) {
        snprintf(why, why_len, "ended");
        return false;
    }
    t->state = TEST_STOPPED;
    t->finished = t->submitted + 1;
    return true;
}

/// An update is read, changed and written under the lock; a change that does not apply
/// leaves the record as it was.
static void test_update(void **state)
{
    Paths *p = *state;
    char why[1024];
    assert_int_equal(queue_open(p->queue, true, why, sizeof why), QUEUE_OK);
    QueueTest *a = new_test(p, "first"), *r = calloc(1, sizeof *r);
    assert_int_equal(queue_add(p->queue, a, why, sizeof why), QUEUE_OK);
    assert_int_equal(queue_update(p->queue, "0001", change_stop, NULL, why, sizeof why), QUEUE_OK);
    assert_int_equal(queue_read(p->queue, "0001", r, why, sizeof why), QUEUE_OK);
    assert_int_equal(r->state, TEST_STOPPED);
    assert_int_equal(queue_update(p->queue, "0001", change_stop, NULL, why, sizeof why),
                     QUEUE_ERR_STATE);
    assert_string_equal(why, "ended");
    assert_int_equal(queue_update(p->queue, "0002", change_stop, NULL, why, sizeof why),
                     QUEUE_ERR_NO_TEST);
    // The owner's test runs; one whose job.ini another user owns does not.
    assert_int_equal(queue_test_allowed(p->queue, "0001", why, sizeof why), QUEUE_OK);
    if (geteuid() == 0) {
        char path[200];
        assert_true(queue_test_path(p->queue, "0001", "job.ini", path, sizeof path));
        assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
        assert_int_equal(queue_test_allowed(p->queue, "0001", why, sizeof why), QUEUE_ERR_UNSAFE);
        assert_non_null(strstr(why, "job.ini: written by nobody, not by the test's submitter"));
        // A test directory another user made: foreign, never run nor written to.
        assert_int_equal(chown(path, 0, (gid_t)-1), 0);
        assert_true(queue_test_path(p->queue, "0001", NULL, path, sizeof path));
        assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
        assert_int_equal(queue_test_allowed(p->queue, "0001", why, sizeof why), QUEUE_ERR_FOREIGN);
        assert_non_null(strstr(why, "is not the queue's (owner nobody"));
    }
    // A job.ini that is a symbolic link (to the owner's own file) is refused.
    char job[200], moved[220];
    assert_true(queue_test_path(p->queue, "0001", NULL, job, sizeof job));
    if (geteuid() == 0)
        assert_int_equal(chown(job, 0, (gid_t)-1), 0);
    assert_true(queue_test_path(p->queue, "0001", "job.ini", job, sizeof job));
    snprintf(moved, sizeof moved, "%s.real", job);
    assert_int_equal(rename(job, moved), 0);
    assert_int_equal(symlink(moved, job), 0);
    assert_int_equal(queue_test_allowed(p->queue, "0001", why, sizeof why), QUEUE_ERR_UNSAFE);
    assert_non_null(strstr(why, "job.ini: a symbolic link (refused)"));
    free(a);
    free(r);
}

/// The page lists running, then queued by priority, then ended newest first; a finished
/// test's figures come from result.json and a running one's from report.json, in one shape.
static void test_page_model(void **state)
{
    Paths *p = *state;
    char why[1024], path[200];
    assert_int_equal(queue_open(p->queue, true, why, sizeof why), QUEUE_OK);
    const char *names[] = {"old-end", "new-end", "queued-low", "queued-high", "running"};
    for (int i = 0; i < 5; i++) {
        QueueTest *t = new_test(p, names[i]);
        assert_int_equal(queue_add(p->queue, t, why, sizeof why), QUEUE_OK);
        t->state = i < 2 ? TEST_FINISHED : (i == 4 ? TEST_RUNNING : TEST_QUEUED);
        t->finished = i < 2 ? 1000 + i : 0;
        t->priority = i == 3 ? 5 : 0;
        assert_int_equal(queue_write(p->queue, t, why, sizeof why), QUEUE_OK);
        free(t);
    }
    queue_test_path(p->queue, "0001", "result.json", path, sizeof path);
    write_text(path, "{\"games\": 8, \"text\": \"-88.6 (no error bar)\", \"llr\": -0.37, "
                     "\"lower\": -2.2, \"upper\": 2.2, \"pairs_done\": 4, \"pairs_total\": 4}");
    queue_test_path(p->queue, "0005", "report.json", path, sizeof path);
    write_text(path, "{\"totals\": {\"games\": 6}, \"elo\": {\"text\": \"12.0 +/- 30.0\"}, "
                     "\"sprt\": {\"llr\": 0.5, \"lower\": -2.9, \"upper\": 2.9}, "
                     "\"pairs\": {\"done\": 3, \"total\": 10}, "
                     "\"timings\": {\"games_per_minute\": 42.5}}");
    json_t *m = queue_page_model(p->queue, why, sizeof why);
    assert_non_null(m);
    json_t *tests = json_object_get(m, "tests");
    const char *order[] = {"running", "queued-high", "queued-low", "new-end", "old-end"};
    assert_int_equal(json_array_size(tests), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(tests, i), "name")),
                            order[i]);
    json_t *run = json_object_get(json_array_get(tests, 0), "result");
    assert_int_equal((int)json_number_value(json_object_get(run, "games")), 6);
    assert_int_equal((int)json_number_value(json_object_get(run, "total")), 10);
    assert_string_equal(json_string_value(json_object_get(run, "elo_text")), "12.0 +/- 30.0");
    json_t *end = json_object_get(json_array_get(tests, 4), "result");
    assert_int_equal((int)json_number_value(json_object_get(end, "games")), 8);
    assert_true(json_number_value(json_object_get(end, "llr")) == -0.37);
    assert_true(json_is_null(json_object_get(json_array_get(tests, 1), "result")));
    json_decref(m);
    assert_true(queue_page_write(p->queue, why, sizeof why));
    snprintf(path, sizeof path, "%s/index.html", p->queue);
    assert_int_equal(access(path, R_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_and_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
