/* runner: spawn, supervise and measure one command (see runner.h). */
#include "measure/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/units.h"
#include "util/xalloc.h"
#include "util/clock.h"

static int sig_fd = -1;
static volatile int interrupted; /* only written by the thread that runs runner_run */

const char *run_status_name(enum run_status s)
{
    switch (s) {
    case RUN_OK: return "ok";
    case RUN_FAILED: return "failed";
    case RUN_SIGNALED: return "signaled";
    case RUN_TIMEOUT: return "timeout";
    case RUN_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

static void handled_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGCHLD);
}

int runner_init(char *err, size_t errlen)
{
    sigset_t set;
    handled_signals(&set);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
        (sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        snprintf(err, errlen, "cannot set up signal handling: %s", strerror(errno));
        return -1;
    }
    /* A closed stdout must give EPIPE to mlbench, not kill it before the result is written. */
    signal(SIGPIPE, SIG_IGN);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        snprintf(err, errlen, "cannot become a child subreaper: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void drain_signals(int *got_stop, int *got_hup);

int runner_interrupted(void)
{
    int got = 0;
    if (sig_fd >= 0)
        drain_signals(&got, NULL); /* a signal that came between runs */
    if (got && !interrupted)
        interrupted = got;
    return interrupted;
}

static void add_rusage(struct run_outcome *out, const struct rusage *ru)
{
    out->user_ns += (int64_t)ru->ru_utime.tv_sec * 1000000000 + ru->ru_utime.tv_usec * 1000;
    out->sys_ns += (int64_t)ru->ru_stime.tv_sec * 1000000000 + ru->ru_stime.tv_usec * 1000;
    if ((int64_t)ru->ru_maxrss * 1024 > out->max_rss_bytes)
        out->max_rss_bytes = (int64_t)ru->ru_maxrss * 1024;
    out->minor_faults += ru->ru_minflt;
    out->major_faults += ru->ru_majflt;
    out->vol_ctx_switches += ru->ru_nvcsw;
    out->invol_ctx_switches += ru->ru_nivcsw;
}

/* The last bytes of the captured stderr, cut to whole lines where possible, with bytes that
 * are not UTF-8 replaced by '?' so the text can go into JSON. */
static char *read_tail(int fd)
{
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0)
        return NULL;
    size_t want = size > RUNNER_STDERR_TAIL ? RUNNER_STDERR_TAIL : (size_t)size;
    char *buf = xmalloc(want + 1);
    ssize_t n = pread(fd, buf, want, size - (off_t)want);
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    size_t len = (size_t)n, start = 0;
    if ((off_t)want < size) { /* started mid-file: skip to the next line */
        char *nl = memchr(buf, '\n', len);
        if (nl && (size_t)(nl - buf) + 1 < len)
            start = (size_t)(nl - buf) + 1;
    }
    char *out = units_utf8_sanitize(buf + start, len - start);
    free(buf);
    return out;
}

static void spawn_error(struct run_outcome *out, int rc, const char *name)
{
    out->status = RUN_FAILED;
    switch (rc) {
    case ENOENT:
        out->exit_code = 127;
        snprintf(out->error, sizeof out->error, "command not found: %s", name);
        break;
    case EACCES:
    case EPERM:
        out->exit_code = 126;
        snprintf(out->error, sizeof out->error, "permission denied: %s", name);
        break;
    case ENOEXEC:
        out->exit_code = 126;
        snprintf(out->error, sizeof out->error, "not an executable: %s", name);
        break;
    default:
        out->exit_code = 126;
        snprintf(out->error, sizeof out->error, "cannot run %s: %s", name, strerror(rc));
    }
}

/* Saturates far below INT64_MAX (about 292 years): no deadline arithmetic can overflow, and an
 * out-of-range double is never cast (the options refuse such values before; this is the
 * runner's own guard). */
static int64_t seconds_to_ns(double s)
{
    const double max_s = 4e9; /* 126 years */
    if (!(s > 0))
        return 0;
    return (int64_t)((s < max_s ? s : max_s) * 1e9);
}

/* Reaps every child that has exited; records the leader's wait status. */
static void reap(const struct runner_spec *spec, pid_t leader, struct run_outcome *out,
                 int *leader_status, int64_t *leader_end)
{
    siginfo_t si = {0};
    if (spec->before_reap && waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        si.si_pid != 0)
        spec->before_reap(spec->before_reap_arg);
    for (;;) {
        int st;
        struct rusage ru;
        pid_t p = wait4(-1, &st, WNOHANG, &ru);
        if (p <= 0)
            return;
        add_rusage(out, &ru);
        if (p == leader) {
            *leader_status = st;
            *leader_end = mono_ns();
        }
    }
}

/* Reads the pending signals: SIGCHLD only wakes us; SIGHUP sets *got_hup when got_hup is
 * not NULL, else it stops like the others. */
static void drain_signals(int *got_stop, int *got_hup)
{
    struct signalfd_siginfo si;
    while (read(sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGHUP && got_hup)
            *got_hup = 1;
        else if (si.ssi_signo != SIGCHLD)
            *got_stop = (int)si.ssi_signo;
    }
}

/* What the child of vfork needs, prepared before it: it may only make system calls. */
struct child_args {
    const struct runner_spec *spec;
    pid_t parent;           /* our pid: the child checks it is still its parent */
    int errfd;              /* memfd for stderr, or -1 */
    sigset_t defaults;      /* signals back to SIG_DFL */
    volatile int err;       /* written by the child when it cannot exec (shared memory) */
};

/* Runs in the vfork child, on the parent's memory: async-signal-safe calls only, and it never
 * returns. */
static __attribute__((noinline, noreturn)) void child_exec(struct child_args *a)
{
    setpgid(0, 0);
    /* The workload must not outlive mlbench, SIGKILL included. The signal comes when the thread
     * that forked ends: runner_run's caller, the main thread, which lives for the whole run. A
     * parent killed before this prctl is caught by the getppid() check. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent) {
        a->err = ESRCH;
        _exit(127);
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&a->defaults, sig) == 1)
            sigaction(sig, &dfl, NULL);
    int null_in = open("/dev/null", O_RDONLY);
    if (null_in < 0 || dup2(null_in, 0) < 0) {
        a->err = errno;
        _exit(127);
    }
    if (null_in > 2)
        close(null_in);
    if (!a->spec->show_output) {
        int null_out = open("/dev/null", O_WRONLY);
        if (null_out < 0 || dup2(null_out, 1) < 0 ||
            dup2(a->errfd >= 0 ? a->errfd : null_out, 2) < 0) {
            a->err = errno;
            _exit(127);
        }
        if (null_out > 2)
            close(null_out);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvpe(a->spec->argv[0], a->spec->argv, a->spec->envp);
    a->err = errno;
    _exit(127);
}

/* Spawns spec's command in its own process group, stdin from /dev/null, stdout and stderr
 * discarded (stderr into *errfd, a memfd, when one can be made) unless show_output, with
 * PR_SET_PDEATHSIG. vfork, like posix_spawn, copies no page tables: a large harness does not
 * slow the start of the measured command. Returns 0, or the errno why it did not start. */
static int spawn(const struct runner_spec *spec, struct run_outcome *out, pid_t *pid, int *errfd)
{
    struct child_args a = {.spec = spec, .parent = getpid(), .errfd = -1, .err = 0};
    handled_signals(&a.defaults);
    sigaddset(&a.defaults, SIGPIPE);
    if (!spec->show_output)
        a.errfd = memfd_create("mlbench-stderr", MFD_CLOEXEC);
    *errfd = a.errfd;
    out->start_unix_ns = unix_ns();
    out->start_ns = mono_ns();
    pid_t p = vfork();
    if (p == 0)
        child_exec(&a);
    if (p < 0)
        return errno;
    if (a.err) { /* it ended without exec: reap it here, it is no run */
        int st;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR)
            ;
        return a.err;
    }
    setpgid(p, p); /* done by the child already; EACCES after its exec is fine */
    *pid = p;
    return 0;
}

/* Waits for the leader of group pid to end while enforcing the timeout, forwarding stop
 * signals (SIGTERM, then SIGKILL after the grace time or a second signal) and calling the
 * tick and hangup callbacks. Returns RUN_OK, or RUN_TIMEOUT/RUN_INTERRUPTED when mlbench
 * stopped it; *leader_status and *leader_end (CLOCK_MONOTONIC) say how and when it ended. */
static enum run_status supervise(const struct runner_spec *spec, struct run_outcome *out,
                                 pid_t pid, int *leader_status, int64_t *leader_end)
{
    int64_t deadline = spec->timeout_s > 0 ? out->start_ns + seconds_to_ns(spec->timeout_s) : 0;
    int64_t kill_at = 0, term_at = 0, next_tick = out->start_ns;
    int got_stop = 0, stopping = 0; /* stopping: SIGTERM sent */
    enum run_status forced = RUN_OK;
    bool stop_fd_open = spec->stop_fd > 0;

    *leader_status = -1;
    while (*leader_status == -1) {
        int64_t now = mono_ns();
        if (spec->tick && now >= next_tick) {
            spec->tick(spec->tick_arg, now - out->start_ns);
            next_tick = now + (int64_t)(spec->tick_ms > 0 ? spec->tick_ms : 100) * 1000000;
        }
        if (deadline && now >= deadline && !stopping) {
            forced = RUN_TIMEOUT;
            killpg(pid, SIGTERM);
            stopping = 1;
            kill_at = now + seconds_to_ns(spec->grace_s);
        }
        if (term_at && now >= term_at && !stopping) { /* the companion took too long */
            killpg(pid, SIGTERM);
            stopping = 1;
            kill_at = now + seconds_to_ns(spec->grace_s);
        }
        if (kill_at && now >= kill_at) {
            killpg(pid, SIGKILL);
            kill_at = 0;
        }
        int64_t wake = spec->tick ? next_tick : now + 1000000000;
        if (deadline && !stopping && deadline < wake)
            wake = deadline;
        if (kill_at && kill_at < wake)
            wake = kill_at;
        if (term_at && !stopping && term_at < wake)
            wake = term_at;
        int timeout_ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;

        struct pollfd pfd[2] = {{.fd = sig_fd, .events = POLLIN},
                                {.fd = stop_fd_open ? spec->stop_fd : -1, .events = POLLIN}};
        int ready = poll(pfd, 2, timeout_ms);
        if (ready > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            stop_fd_open = false; /* once is enough */
            if (!stopping && (forced == RUN_OK || term_at)) {
                out->stop_requested = forced == RUN_OK;
                killpg(pid, SIGTERM);
                stopping = 1;
                kill_at = mono_ns() + seconds_to_ns(spec->grace_s);
            }
        }
        if (ready > 0 && (pfd[0].revents & POLLIN)) {
            int got_hup = 0;
            drain_signals(&got_stop, spec->hangup ? &got_hup : NULL);
            if (got_hup)
                spec->hangup(spec->hangup_arg);
            if (got_stop) {
                if (!interrupted)
                    interrupted = got_stop;
                if (spec->interrupt)
                    spec->interrupt(spec->interrupt_arg);
                if (stop_fd_open && !stopping && forced == RUN_OK) {
                    /* The companion stops first (mlbench load drains the queries it sent) and
                     * then signals stop_fd; within grace_s, else the command is stopped anyway. */
                    forced = RUN_INTERRUPTED;
                    term_at = mono_ns() + seconds_to_ns(spec->grace_s);
                } else if (!stopping || out->stop_requested) { /* first: ask politely */
                    out->stop_requested = false;
                    forced = RUN_INTERRUPTED;
                    killpg(pid, SIGTERM);
                    stopping = 1;
                    kill_at = mono_ns() + seconds_to_ns(spec->grace_s);
                } else { /* again: no more waiting */
                    forced = forced == RUN_OK ? RUN_INTERRUPTED : forced;
                    killpg(pid, SIGKILL);
                }
                got_stop = 0;
            }
        }
        reap(spec, pid, out, leader_status, leader_end);
    }
    return forced;
}

/* Kills and reaps whatever the leader left behind in its group, so that it cannot disturb the
 * next run, and takes the signals that came meanwhile. */
static void clear_group(const struct runner_spec *spec, struct run_outcome *out, pid_t pid,
                        int *leader_status, int64_t *leader_end)
{
    int64_t give_up = mono_ns() + 2000000000;
    while (killpg(pid, SIGKILL) == 0 && mono_ns() < give_up) {
        int dummy;
        reap(spec, pid, out, &dummy, leader_end);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    reap(spec, pid, out, leader_status, leader_end);
    int late_stop = 0, late_hup = 0;
    drain_signals(&late_stop, spec->hangup ? &late_hup : NULL); /* SIGCHLDs already handled */
    if (late_hup)
        spec->hangup(spec->hangup_arg);
    if (late_stop && !interrupted)
        interrupted = late_stop;
}

static void set_status(struct run_outcome *out, int leader_status, enum run_status forced)
{
    if (WIFSIGNALED(leader_status))
        out->signal = WTERMSIG(leader_status);
    else if (WIFEXITED(leader_status))
        out->exit_code = WEXITSTATUS(leader_status);
    if (forced == RUN_OK && out->stop_requested) {
        out->status = RUN_OK; /* stopped as planned, however it ended */
    } else if (forced != RUN_OK) {
        out->status = forced;
        out->stop_signal = forced == RUN_INTERRUPTED ? interrupted : 0;
    } else if (WIFSIGNALED(leader_status)) {
        out->status = RUN_SIGNALED;
    } else {
        out->status = out->exit_code == 0 ? RUN_OK : RUN_FAILED;
    }
}

int runner_run(const struct runner_spec *spec, struct run_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    pid_t pid;
    int errfd;
    int rc = spawn(spec, out, &pid, &errfd);
    if (rc) {
        out->wall_ns = mono_ns() - out->start_ns;
        spawn_error(out, rc, spec->argv[0]);
        if (errfd >= 0)
            close(errfd);
        return 0;
    }
    if (spec->spawned)
        spec->spawned(spec->spawned_arg, pid);

    int leader_status;
    int64_t leader_end = 0;
    enum run_status forced = supervise(spec, out, pid, &leader_status, &leader_end);
    out->wall_ns = leader_end - out->start_ns;
    clear_group(spec, out, pid, &leader_status, &leader_end);
    set_status(out, leader_status, forced);
    if (errfd >= 0) {
        out->stderr_tail = read_tail(errfd);
        close(errfd);
    }
    return 0;
}
