/* runner: runs one command as a supervised, measured process group.
 *
 * The command is spawned without a shell in its own process group, with stdin from /dev/null,
 * stdout discarded and stderr captured (or both passed through with show_output). The runner
 * waits for it while enforcing the timeout and reacting to SIGINT/SIGTERM, reaps the whole
 * process tree (mlbench is a child subreaper, so orphaned descendants come back to it) and
 * adds up their resource usage. The leader is killed by the kernel if mlbench dies
 * (PR_SET_PDEATHSIG); docs/security.md says what that does not cover.
 *
 * Call runner_init() once, from the main thread, before any other thread is started: it blocks
 * SIGINT, SIGTERM, SIGHUP and SIGCHLD, which are then received through a signalfd. */
#ifndef MLBENCH_RUNNER_H
#define MLBENCH_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum run_status {
    RUN_OK,          /* exited with status 0 */
    RUN_FAILED,      /* exited non-zero, or could not be started (exit_code 126/127) */
    RUN_SIGNALED,    /* killed by a signal it did not get from mlbench */
    RUN_TIMEOUT,     /* stopped by mlbench after --timeout */
    RUN_INTERRUPTED, /* stopped by mlbench because mlbench got SIGINT/SIGTERM/SIGHUP */
};

/* "ok", "failed", "signaled", "timeout", "interrupted". */
const char *run_status_name(enum run_status s);

struct runner_spec {
    char *const *argv;       /* argv[0] is looked up in PATH */
    char *const *envp;       /* complete environment of the child */
    double timeout_s;        /* 0 = none */
    double grace_s;          /* SIGTERM to SIGKILL */
    bool show_output;        /* inherit stdout and stderr instead of discarding/capturing */
    /* Called about every tick_ms while the command runs (progress display); may be NULL. */
    void (*tick)(void *arg, int64_t elapsed_ns);
    void *tick_arg;
    int tick_ms;
    /* Called with the pid right after the command started (the sampler follows it); may be NULL. */
    void (*spawned)(void *arg, pid_t pid);
    void *spawned_arg;
    /* Called when a child of mlbench (the leader, or an orphan of its tree) has ended, before
     * it is reaped: while it is a zombie its /proc entry stays, so the marker receiver can
     * still verify the sender of its last datagrams (instruments_before_reap). May be NULL. */
    void (*before_reap)(void *arg);
    void *before_reap_arg;
    /* Called on SIGHUP instead of stopping the command (a service reopening its log, `mlbench
     * monitor`); NULL: SIGHUP stops the command like SIGINT. */
    void (*hangup)(void *arg);
    void *hangup_arg;
    /* A file descriptor (an eventfd) that becomes readable when the command should be stopped
     * as planned: it is stopped like a timeout (SIGTERM, SIGKILL after grace_s), and the
     * outcome is RUN_OK with stop_requested set, however it exits (`mlbench load` stops the
     * server it started this way). 0: none (a zero-initialised spec has none). */
    int stop_fd;
    /* Called when mlbench got SIGINT/SIGTERM (or SIGHUP without a hangup callback), before the
     * command is stopped; may be NULL. With a stop_fd, the first such signal stops the command
     * only once stop_fd is readable (the companion has finished), or grace_s later. */
    void (*interrupt)(void *arg);
    void *interrupt_arg;
};

#define RUNNER_STDERR_TAIL 4096 /* bytes of stderr kept */

struct run_outcome {
    enum run_status status;
    int exit_code;       /* valid for RUN_OK/RUN_FAILED; -1 otherwise */
    int signal;          /* signal that ended the leader (0 if none) */
    int stop_signal;     /* RUN_INTERRUPTED: the signal mlbench received */
    bool stop_requested; /* stopped through runner_spec.stop_fd */
    char error[256];     /* why it could not start ("command not found: foo"), or "" */
    int64_t start_ns;    /* CLOCK_MONOTONIC just before the spawn */
    int64_t wall_ns;     /* spawn to the leader's exit */
    int64_t start_unix_ns; /* CLOCK_REALTIME at start */
    /* Resource usage of the leader and every descendant that was reaped. */
    int64_t user_ns, sys_ns;
    int64_t max_rss_bytes; /* largest of any single process of the tree */
    int64_t minor_faults, major_faults;
    int64_t vol_ctx_switches, invol_ctx_switches;
    char *stderr_tail;   /* last RUNNER_STDERR_TAIL bytes of stderr (valid UTF-8), or NULL;
                          * owned by the caller */
};

/* Blocks the signals the runner handles and becomes a child subreaper.
 * Returns 0, or -1 with a message in err. */
int runner_init(char *err, size_t errlen);

/* Runs spec to completion and fills *out. Call it from the main thread (or one that outlives
 * the run): the command gets PR_SET_PDEATHSIG(SIGKILL), which fires when the thread that
 * spawned it ends, and so dies with mlbench even when mlbench is SIGKILLed. Returns 0 when the
 * outcome is valid (whatever the command did), -1 only on an internal error (message in
 * out->error). */
int runner_run(const struct runner_spec *spec, struct run_outcome *out);

/* Nonzero once SIGINT/SIGTERM/SIGHUP was received: the caller should stop repeating.
 * The value is the signal number. It reads the signals that came meanwhile without waiting,
 * so a caller that waits on something else than a command may poll it. */
int runner_interrupted(void);

#endif
