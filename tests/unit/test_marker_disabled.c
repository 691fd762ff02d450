/* Unit tests of the C marker client (lib/marker) outside mlbench: with MLBENCH_MARKER_SOCKET
 * unset, empty, or naming a socket nobody listens on, every call is a no-op returning 0 and
 * mlb_enabled() is 0. The client latches its state on the first call, so the set-but-unusable
 * cases run in forked children before this process makes its own first call. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlbench/marker.h"

/* Every API call on valid arguments; returns the number of calls that did not return 0. */
static int call_everything(void)
{
    int failures = 0;
    failures += mlb_stage_begin("load") != 0;
    failures += mlb_stage_end("load") != 0;
    failures += mlb_counter("loss", 0.5) != 0;
    failures += mlb_meta("model", "resnet 50") != 0;
    failures += mlb_meta("empty", "") != 0;
    failures += mlb_instant("checkpoint") != 0;
    failures += mlb_enabled() != 0;
    return failures;
}

/* Runs call_everything() in a child whose variable is `value`; stderr goes to `err_path`.
 * Returns the child's exit status (the number of failed calls). */
static int child_with_socket_variable(const char *value, const char *err_path)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (freopen(err_path, "w", stderr) == NULL)
            _exit(100);
        setenv("MLBENCH_MARKER_SOCKET", value, 1);
        int failures = call_everything();
        fflush(stderr);
        _exit(failures);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_empty_variable_is_disabled(void **state)
{
    (void)state;
    char err_path[] = "/tmp/mlbench-marker-err-XXXXXX";
    int fd = mkstemp(err_path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(child_with_socket_variable("", err_path), 0);
    char text[512];
    read_file(err_path, text, sizeof text);
    unlink(err_path);
    assert_string_equal(text, ""); /* silent */
}

static void test_unreachable_socket_is_disabled_with_one_message(void **state)
{
    (void)state;
    char err_path[] = "/tmp/mlbench-marker-err-XXXXXX";
    int fd = mkstemp(err_path);
    assert_true(fd >= 0);
    close(fd);
    const char *missing = "/nonexistent-mlbench-dir/marker.sock";
    assert_int_equal(child_with_socket_variable(missing, err_path), 0);
    char text[512];
    read_file(err_path, text, sizeof text);
    unlink(err_path);
    assert_non_null(strstr(text, "cannot connect to /nonexistent-mlbench-dir/marker.sock"));
    assert_non_null(strstr(text, "markers disabled"));
    assert_string_equal(strchr(text, '\n') + 1, ""); /* one line */
}

static void test_unset_variable_every_call_returns_zero(void **state)
{
    (void)state;
    assert_int_equal(call_everything(), 0);
    assert_int_equal(mlb_enabled(), 0);
    /* Disabled, the arguments are not even looked at: that keeps the cost at one branch. */
    assert_int_equal(mlb_stage_begin(NULL), 0);
    assert_int_equal(mlb_stage_begin("a b"), 0);
    assert_int_equal(mlb_meta("k", NULL), 0);
}

static void test_disabled_cost_is_printed_not_asserted(void **state)
{
    (void)state;
    enum { CALLS = 1000000 };
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int sum = 0;
    for (int i = 0; i < CALLS; i++)
        sum += mlb_stage_begin("step");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(sum, 0);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("disabled mlb_stage_begin: %.2f ns per call (information, not a test)\n",
                  ns / CALLS);
}

int main(void)
{
    unsetenv("MLBENCH_MARKER_SOCKET");
    const struct CMUnitTest tests[] = {
        /* These two fork before this process makes its first call (state not latched yet). */
        cmocka_unit_test(test_empty_variable_is_disabled),
        cmocka_unit_test(test_unreachable_socket_is_disabled_with_one_message),
        cmocka_unit_test(test_unset_variable_every_call_returns_zero),
        cmocka_unit_test(test_disabled_cost_is_printed_not_asserted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
