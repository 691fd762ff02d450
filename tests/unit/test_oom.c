/* Unit tests of src/measure/oom.c (is this run out of memory?) and src/measure/oom_cgroup.c
 * (the OOM-kill count of a cgroup), the latter against fake /proc and /sys trees written with
 * tests/fakes/proc/fake_fs.h: v2, v1, hybrid, and the unreadable cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fakes/proc/fake_fs.h"
#include "measure/oom.h"
#include "measure/oom_cgroup.h"

static char reason[256];

/* A failed run (exit code) with stderr text and no cgroup evidence. */
static struct oom_evidence failed(int code, const char *err)
{
    return (struct oom_evidence){.status = RUN_FAILED, .exit_code = code, .stderr_tail = err,
                                 .cgroup_oom_kills = -1};
}

static bool classify(struct oom_evidence e)
{
    return oom_classify(&e, reason, sizeof reason);
}

static void test_workload_status(void **state)
{
    (void)state;
    const char *msg = "prepared\nmlbench-workload imgclf: out of memory: batch 512 needs 81.0 "
                      "MiB, over --max-memory 64 MiB\n";
    assert_true(classify(failed(OOM_WORKLOAD_EXIT, msg)));
    assert_string_equal(reason, "mlbench-workload's out-of-memory status (exit 3)");
    /* the status alone, from any command, proves nothing; nor the message with another exit */
    assert_false(classify(failed(OOM_WORKLOAD_EXIT, "error: bad thing\n")));
    assert_string_equal(reason, "");
    assert_false(classify(failed(OOM_WORKLOAD_EXIT, NULL)));
    assert_false(classify(failed(1, "mlbench-workload imgclf: cannot open x: out of memory\n")));
    /* the message must be the workload's own line, not a mention elsewhere */
    assert_false(classify(failed(OOM_WORKLOAD_EXIT, "log: mlbench-workload x: out of memory\n")));
}

static void test_pytorch(void **state)
{
    (void)state;
    assert_true(classify(failed(1, "Traceback (most recent call last):\n  File \"t.py\", line 3\n"
                                   "torch.OutOfMemoryError: CUDA out of memory. Tried to "
                                   "allocate 2.00 GiB\n")));
    assert_string_equal(reason, "PyTorch: torch.OutOfMemoryError");
    assert_true(classify(failed(1, "torch.cuda.OutOfMemoryError: CUDA out of memory.\n")));
    assert_string_equal(reason, "PyTorch: torch.cuda.OutOfMemoryError");
    assert_true(classify(failed(1, "RuntimeError: CUDA out of memory. Tried to allocate\n")));
    assert_string_equal(reason, "CUDA out of memory");
    assert_true(classify(failed(1, "RuntimeError: CUDA error: out of memory\nCUDA kernel errors "
                                   "might be asynchronously reported\n")));
    assert_string_equal(reason, "CUDA error: out of memory");
    /* an uncaught exception can end the process by a signal (abort) too */
    struct oom_evidence e = {.status = RUN_SIGNALED, .exit_code = -1, .signal = SIGABRT,
                             .stderr_tail = "terminate called after throwing an instance of "
                                            "'std::bad_alloc'\n  what():  std::bad_alloc\n",
                             .cgroup_oom_kills = 0};
    assert_true(classify(e));
    assert_string_equal(reason, "C++ std::bad_alloc");
}

static void test_python_memory_error(void **state)
{
    (void)state;
    assert_true(classify(failed(1, "Traceback (most recent call last):\n  File \"x\"\n"
                                   "MemoryError\n")));
    assert_string_equal(reason, "Python MemoryError");
    assert_true(classify(failed(1, "numpy.core._exceptions._ArrayMemoryError: Unable to "
                                   "allocate 7.45 GiB for an array\n")));
    assert_string_equal(reason, "Python MemoryError");
    assert_true(classify(failed(1, "MemoryError: Unable to allocate\r\n")));
    /* mentions are not the exception */
    assert_false(classify(failed(1, "ValueError: expected a MemoryError here\n")));
    assert_false(classify(failed(1, "  except MemoryError:\n")));
    assert_false(classify(failed(1, "NoMemoryErrorsFound: none\n")));
}

static void test_enomem(void **state)
{
    (void)state;
    assert_true(classify(failed(1, "mmap: Cannot allocate memory\n")));
    assert_string_equal(reason, "Cannot allocate memory (ENOMEM)");
    assert_true(classify(failed(1, "tensorflow.python.framework.errors_impl."
                                   "ResourceExhaustedError: OOM when allocating tensor\n")));
}

static void test_not_failed_never_oom(void **state)
{
    (void)state;
    const char *err = "warning: CUDA out of memory, retrying with a smaller batch\n";
    struct oom_evidence e = failed(0, err);
    e.status = RUN_OK;
    e.cgroup_oom_kills = 3;
    assert_false(classify(e));
    e.status = RUN_TIMEOUT;
    e.exit_code = -1;
    assert_false(classify(e));
    e.status = RUN_INTERRUPTED;
    assert_false(classify(e));
    assert_string_equal(reason, "");
    /* a plain failure with nothing about memory */
    assert_false(classify(failed(1, "Traceback\nValueError: bad shape\n")));
    assert_false(classify(failed(137, "")));
}

static void test_patterns(void **state)
{
    (void)state;
    const char *const pats[] = {"", "alloc failed", "OOM!"};
    struct oom_evidence e = failed(1, "worker 3: OOM! giving up\n");
    e.patterns = pats;
    e.n_patterns = 3;
    assert_true(classify(e));
    assert_string_equal(reason, "stderr matches --oom-pattern 'OOM!'");
    e.stderr_tail = "worker 3: oom giving up\n"; /* case-sensitive */
    assert_false(classify(e));
    e.stderr_tail = NULL;
    assert_false(classify(e)); /* the empty pattern matches nothing */
}

static void test_sigkill(void **state)
{
    (void)state;
    struct oom_evidence e = {.status = RUN_SIGNALED, .exit_code = -1, .signal = SIGKILL,
                             .cgroup_oom_kills = 1};
    assert_true(classify(e));
    assert_string_equal(reason, "killed by the kernel's OOM killer (oom_kill +1 in the cgroup's "
                                "memory events)");
    e.cgroup_oom_kills = 0; /* a SIGKILL from someone else */
    assert_false(classify(e));
    assert_non_null(strstr(reason, "did not rise"));
    e.cgroup_oom_kills = -1; /* no evidence either way: not OOM */
    assert_false(classify(e));
    assert_non_null(strstr(reason, "not readable"));
    e.signal = SIGSEGV;
    assert_false(classify(e));
    assert_string_equal(reason, "");
    /* a shell or a wrapper reports its child's SIGKILL as 137 */
    e = failed(137, "Killed\n");
    e.cgroup_oom_kills = 2;
    assert_true(classify(e));
    assert_string_equal(reason, "killed by the kernel's OOM killer (oom_kill +2 in the cgroup's "
                                "memory events)");
    /* a DataLoader worker killed, the script failing after it */
    e = failed(1, "RuntimeError: DataLoader worker (pid 123) is killed by signal: Killed.\n");
    e.cgroup_oom_kills = 1;
    assert_true(classify(e));
    assert_non_null(strstr(reason, "a process of the run was killed"));
}

static void test_reason_small_buffer(void **state)
{
    (void)state;
    struct oom_evidence e = failed(1, "MemoryError\n");
    char small[8];
    assert_true(oom_classify(&e, small, sizeof small));
    assert_string_equal(small, "Python ");
    assert_true(oom_classify(&e, NULL, 0));
}

/* ---- oom_cgroup against fake trees ---- */

static void test_cgroup_v2(void **state)
{
    (void)state;
    char *root = fake_root_new();
    fake_write(root, "proc/self/cgroup", "0::/user.slice/run-1.scope\n");
    fake_write(root, "sys/fs/cgroup/user.slice/run-1.scope/memory.events",
               "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n");
    char proc[1024], sys[1024];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), 2);
    /* by pid */
    fake_write(root, "proc/4242/cgroup", "0::/other\n");
    fake_write(root, "sys/fs/cgroup/other/memory.events", "oom 0\noom_kill 7\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 4242), 7);
    /* through the environment, as mlbench uses it */
    setenv("MLBENCH_PROC_ROOT", proc, 1);
    setenv("MLBENCH_SYS_ROOT", sys, 1);
    assert_int_equal(oom_cgroup_kills(4242), 7);
    unsetenv("MLBENCH_PROC_ROOT");
    unsetenv("MLBENCH_SYS_ROOT");
    /* the root cgroup has no memory.events; a file without oom_kill; a malformed value */
    fake_write(root, "proc/1/cgroup", "0::/\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 1), -1);
    fake_write(root, "sys/fs/cgroup/other/memory.events", "oom 0\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 4242), -1);
    fake_write(root, "sys/fs/cgroup/other/memory.events", "oom_kill x\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 4242), -1);
    /* no such process */
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 999), -1);
    fake_root_free(root);
}

static void test_cgroup_v1_and_hybrid(void **state)
{
    (void)state;
    char *root = fake_root_new();
    char proc[1024], sys[1024];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    /* v1 with a v2 line at the root (hybrid, as systemd mounts it): the memory controller's */
    fake_write(root, "proc/self/cgroup",
               "9:name=systemd:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/\n0::/\n");
    fake_write(root, "sys/fs/cgroup/memory/process_api/abc/memory.oom_control",
               "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), 5);
    /* an old kernel without the counter, the v2 hierarchy at unified/ without memory */
    fake_write(root, "sys/fs/cgroup/memory/process_api/abc/memory.oom_control",
               "oom_kill_disable 0\nunder_oom 0\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), -1);
    /* hybrid whose v2 part has the memory events */
    fake_write(root, "proc/self/cgroup", "4:cpu:/\n0::/app\n");
    fake_write(root, "sys/fs/cgroup/unified/app/memory.events", "oom_kill 1\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), 1);
    /* memory among several controllers of one v1 hierarchy */
    fake_write(root, "proc/self/cgroup", "3:blkio,memory:/job/\n");
    fake_write(root, "sys/fs/cgroup/memory/job/memory.oom_control", "oom_kill 9\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), 9);
    /* garbage lines are skipped */
    fake_write(root, "proc/self/cgroup", "nonsense\n::\n");
    assert_int_equal(oom_cgroup_kills_at(proc, sys, 0), -1);
    fake_root_free(root);
}

/* On this machine: a number or -1, never an error, and stable while nothing is killed. */
static void test_cgroup_real(void **state)
{
    (void)state;
    long a = oom_cgroup_kills(0), b = oom_cgroup_kills(getpid());
    assert_true(a >= -1);
    assert_int_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_status),
        cmocka_unit_test(test_pytorch),
        cmocka_unit_test(test_python_memory_error),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_not_failed_never_oom),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_sigkill),
        cmocka_unit_test(test_reason_small_buffer),
        cmocka_unit_test(test_cgroup_v2),
        cmocka_unit_test(test_cgroup_v1_and_hybrid),
        cmocka_unit_test(test_cgroup_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
