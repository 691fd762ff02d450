/* Unit tests of src/measure/senders.c (is a marker sender in mlbench's process tree?) against a
 * fake /proc that each test writes with tests/fakes/proc/fake_fs.h, with the clock moved by
 * hand; and once against the real /proc with a forked child and grandchild. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fakes/proc/fake_fs.h"
#include "measure/senders.h"

#define MS 1000000LL
#define SELF 50

/* Writes <pid>/stat as the kernel does: ppid is field 4, starttime field 22. */
static void proc_write(const char *root, int pid, const char *comm, int ppid,
                       unsigned long long start)
{
    char rel[32];
    snprintf(rel, sizeof rel, "%d/stat", pid);
    fake_write(root, rel,
               "%d (%s) S %d %d %d 34816 %d 4194304 1200 0 3 0 10 5 0 0 20 0 1 0 %llu "
               "123456789 300 18446744073709551615 1 1 0 0 0 0 0 4096 16386 0 0 0 17 1 0 0 0 0 "
               "0 0 0 0 0 0 0 0 0\n", pid, comm, ppid, ppid, ppid, ppid, start);
}

static void proc_remove(const char *root, int pid)
{
    char rel[32];
    snprintf(rel, sizeof rel, "%d", pid);
    fake_remove(root, rel);
}

/* init 1; mlbench 50; its workload 60 with child 61 and grandchild 62 (whose comm has spaces
 * and parentheses), an orphan 70 adopted by mlbench; a shell 90 with a forger 91 of the same
 * user; 92, whose parent is outside our pid namespace (ppid 0). */
static int setup(void **state)
{
    char *root = fake_root_new();
    proc_write(root, 1, "systemd", 0, 1);
    proc_write(root, SELF, "mlbench", 1, 400);
    proc_write(root, 60, "python3", SELF, 500);
    proc_write(root, 61, "worker", 60, 510);
    proc_write(root, 62, "a) (b c) S 90", 61, 520);
    proc_write(root, 70, "daemon", SELF, 530);
    proc_write(root, 90, "bash", 1, 100);
    proc_write(root, 91, "forger", 90, 540);
    proc_write(root, 92, "outsider", 0, 550);
    *state = root;
    return 0;
}

static int teardown(void **state)
{
    fake_root_free(*state);
    return 0;
}

static void test_tree_and_outsiders(void **state)
{
    struct senders *s = senders_new(*state, SELF);
    assert_non_null(s);
    int64_t t = 1000 * MS;
    for (int pid = 60; pid <= 62; pid++)
        assert_true(senders_accept(s, pid, t));
    assert_true(senders_accept(s, 70, t));    /* orphans come back to the subreaper */
    assert_true(senders_accept(s, SELF, t));  /* our own control messages */
    assert_false(senders_accept(s, 91, t));
    assert_false(senders_accept(s, 90, t));
    assert_false(senders_accept(s, 92, t));
    assert_false(senders_accept(s, 1, t));
    assert_false(senders_accept(s, 0, t));    /* no credentials */
    assert_false(senders_accept(s, -5, t));
    assert_false(senders_accept(s, 12345, t)); /* never seen, gone: cannot be verified */
    /* cached verdicts hold when asked again, later too */
    assert_false(senders_accept(s, 91, t + 1 * MS));
    assert_false(senders_accept(s, 91, t + 50 * MS));
    assert_true(senders_accept(s, 61, t + 50 * MS));
    senders_free(s);
}

static void test_sender_gone_before_check(void **state)
{
    const char *root = *state;
    struct senders *s = senders_new(root, SELF);
    int64_t t = 1000 * MS;
    assert_true(senders_accept(s, 61, t));
    assert_false(senders_accept(s, 91, t));
    proc_remove(root, 61); /* its last marker arrives after it was reaped */
    proc_remove(root, 91);
    assert_true(senders_accept(s, 61, t + 2 * MS));   /* cached */
    assert_true(senders_accept(s, 61, t + 500 * MS)); /* gone, verified recently */
    assert_false(senders_accept(s, 91, t + 500 * MS)); /* gone, was outside */
    assert_false(senders_accept(s, 61, t + 500 * MS + SENDERS_GONE_GRACE_NS)); /* too long ago */
    senders_free(s);
}

static void test_confirmation_extends_grace(void **state)
{
    const char *root = *state;
    struct senders *s = senders_new(root, SELF);
    int64_t t = 1000 * MS;
    assert_true(senders_accept(s, 62, t));
    /* alive and confirmed at t + 900 ms: gone later, it is still accepted within the grace */
    assert_true(senders_accept(s, 62, t + 900 * MS));
    proc_remove(root, 62);
    assert_true(senders_accept(s, 62, t + 1500 * MS));
    senders_free(s);
}

static void test_reused_pid(void **state)
{
    const char *root = *state;
    struct senders *s = senders_new(root, SELF);
    int64_t t = 1000 * MS;
    assert_true(senders_accept(s, 62, t));
    /* 62 ends and an outsider gets its pid: another start time, another parent */
    proc_write(root, 62, "forger", 90, 900);
    assert_true(senders_accept(s, 62, t + 1 * MS)); /* within the re-check time: cached */
    assert_false(senders_accept(s, 62, t + SENDERS_RECHECK_NS));
    /* and the other way round: a pid judged outside, reused by a worker */
    assert_false(senders_accept(s, 91, t));
    proc_write(root, 91, "worker", 60, 910);
    assert_true(senders_accept(s, 91, t + SENDERS_RECHECK_NS));
    senders_free(s);
}

static void test_reparented_during_walk(void **state)
{
    const char *root = *state;
    struct senders *s = senders_new(root, SELF);
    /* 63's parent 64 ended: 63 now belongs to mlbench, the subreaper */
    proc_write(root, 63, "grandchild", SELF, 560);
    assert_true(senders_accept(s, 63, 1000 * MS));
    /* a chain through an ancestor that is gone and no re-parenting seen: not accepted */
    proc_write(root, 65, "lost", 64, 570);
    assert_false(senders_accept(s, 65, 1000 * MS));
    senders_free(s);
}

static void test_real_proc(void **state)
{
    (void)state;
    struct senders *s = senders_new("/proc", getpid());
    int go[2], ready[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        close(go[1]); /* so that both see EOF when the test closes its end */
        close(ready[0]);
        pid_t g = fork();
        if (g == 0) {
            char b;
            (void)!write(ready[1], &g, 1);
            (void)!read(go[0], &b, 1);
            _exit(0);
        }
        char b;
        (void)!read(go[0], &b, 1);
        waitpid(g, NULL, 0);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    char b;
    assert_int_equal(read(ready[0], &b, 1), 1);
    assert_true(senders_accept(s, child, 0));
    assert_true(senders_accept(s, getpid(), 0));
    assert_false(senders_accept(s, getppid(), 0)); /* whoever started the tests */
    assert_false(senders_accept(s, 1, 0));
    close(go[1]);
    close(ready[0]);
    waitpid(child, NULL, 0);
    senders_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tree_and_outsiders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sender_gone_before_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_confirmation_extends_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reused_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reparented_during_walk, setup, teardown),
        cmocka_unit_test(test_real_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
