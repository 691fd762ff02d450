/* cmd_rank_exec: `mlbench rank-exec -- COMMAND [ARGS...]`, what a launcher starts in place of
 * each rank's program (docs/ranks.md): `mlbench run --ranks -- mpirun -n 4 mlbench rank-exec --
 * ./train`. It runs COMMAND as its child and, when it ends, tells the measuring mlbench how:
 * metadata "mlbench.rank_exit" with "exit N" or "signal N", from a process that announced the
 * rank (mlbench.rank), so that a rank that crashes is recorded with its rank and status even
 * when the launcher then stops the others. A program that does not mark stages needs no more:
 * its rank is known by its rank-exec.
 *
 * On a host where the marker socket is not reachable (another host of the job) and the
 * collector's address is set (MLBENCH_RANK_COLLECTOR, from `mlbench run --ranks-listen`, passed
 * on with `mpirun -x`), it gives the rank a marker socket of its own and forwards its events
 * to the collector (rank_link.h); when the collector asks, it also samples its host. Outside
 * mlbench (neither) it only runs COMMAND.
 *
 * Exit status: COMMAND's; killed by the signal that killed it (as a shell reports); 127 command
 * not found, 126 cannot execute; 2 bad usage. Stop signals (SIGTERM, SIGINT, SIGHUP) are
 * forwarded to COMMAND. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mlbench/marker.h>
#include <mlbench/marker_ring.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "measure/rank_link.h"
#include "measure/sampler.h"
#include "util/log.h"

extern char **environ;

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};
static volatile sig_atomic_t g_child;

static void forward(int sig)
{
    pid_t child = (pid_t)g_child;
    if (child > 0)
        kill(child, sig);
}

/* Whether MLBENCH_MARKER_SOCKET names a socket here (on another host it names nothing). */
static bool marker_socket_reachable(void)
{
    const char *path = getenv(MLBENCH_MARKER_SOCKET_ENV);
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Forwards the rank's datagrams until COMMAND (pid) has ended; it stays a zombie for waitpid. */
static void forward_until_exit(struct rank_forward *fwd, pid_t pid)
{
    int pfd = pidfd_open(pid, 0);
    struct pollfd p[2] = {{.fd = rank_forward_fd(fwd), .events = POLLIN},
                          {.fd = pfd, .events = POLLIN}};
    for (;;) {
        int n = poll(p, pfd >= 0 ? 2 : 1, pfd >= 0 ? -1 : 100);
        if (n < 0 && errno != EINTR)
            break;
        rank_forward_pump(fwd);
        siginfo_t si = {0};
        if ((pfd >= 0 && (p[1].revents & POLLIN)) ||
            (pfd < 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
             si.si_pid == pid))
            break;
    }
    if (pfd >= 0)
        close(pfd);
}

/* The host's samples, when the collector asked this rank-exec for them (one per host): the
 * processes of the launcher's daemon that started us (orted, prted, slurmstepd, torchrun's
 * agent: every rank of the job on this host) and the host itself. */
struct host_sampling {
    struct sampler *sampler;
    struct sample_table tab;
};

static void host_sampling_start(struct host_sampling *h, const struct rank_forward *fwd)
{
    memset(h, 0, sizeof *h);
    if (!fwd || !rank_forward_samples_wanted(fwd))
        return;
    struct sampler_config cfg = {.interval_ns = SAMPLER_DEFAULT_INTERVAL_NS, .adaptive = true};
    h->sampler = sampler_open(&cfg);
    if (sampler_start(h->sampler, &h->tab) < 0) {
        sampler_close(h->sampler);
        h->sampler = NULL;
        return;
    }
    sampler_set_leader(h->sampler, getppid());
}

/* Stops the sampling, sends the samples and closes the link (fwd NULL: nothing to do). */
static void link_finish(struct rank_forward *fwd, struct host_sampling *h, int rank)
{
    if (!fwd)
        return;
    if (h->sampler) {
        sampler_stop(h->sampler);
        rank_forward_send_samples(fwd, &h->tab);
        sample_table_free(&h->tab);
        sampler_close(h->sampler);
    }
    long lost = rank_forward_close(fwd);
    if (lost)
        log_warn("rank-exec: rank %d: the link to the collector was lost: %s", rank,
                 lost > 0 ? "some events did not arrive" : "events may be missing");
}

static const char usage_text[] =
    "Usage: mlbench rank-exec -- COMMAND [ARGS...]\n"
    "Runs one rank's COMMAND under a launcher and reports its rank and how it ended to the\n"
    "measuring mlbench: mlbench run --ranks -- mpirun -n 4 mlbench rank-exec -- ./train\n"
    "Across hosts: mlbench run --ranks-listen ADDR:0 -- mpirun -H a,b -x MLBENCH_RANK_COLLECTOR \\\n"
    "    mlbench rank-exec -- ./train   (docs/ranks.md)\n";

int cmd_rank_exec(int argc, char **argv)
{
    static const struct cli_option none[] = {CLI_OPT_END}; /* it takes no option */
    const struct cli_parser parser = {.verb = "rank-exec", .options = none,
                                      .flags = CLI_STOP_AT_ARG, .usage = usage_text};
    struct cli_args args;
    char usage_err[512];
    int parsed = cli_options_parse(&parser, argc, argv, &args, usage_err, sizeof usage_err);
    if (parsed == CLI_HELP)
        return 0;
    if (parsed == CLI_ERROR || args.n == 0) {
        log_error("rank-exec: %s\n%s", parsed == CLI_ERROR ? usage_err : "no COMMAND given",
                  usage_text);
        return 2;
    }
    int first = (int)(args.v - argv);
    int world;
    int rank = mlb_rank(&world);
    if (rank < 0)
        log_warn("rank-exec: no rank in the environment (RANK with WORLD_SIZE, "
                 "OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID): is %s started by "
                 "a launcher?", argv[first]);
    /* On a host that cannot reach the marker socket, a forwarder of our own (rank_link.h);
     * set up before the first event, which opens the library's socket. */
    struct rank_forward *fwd = NULL;
    if (!marker_socket_reachable() && getenv(RANK_LINK_ENV)) {
        char err[512];
        if (!(fwd = rank_forward_open(getenv(RANK_LINK_ENV), err, sizeof err)))
            log_warn("rank-exec: %s: running rank %d unmeasured", err, rank);
        if (fwd) {
            setenv(MLBENCH_MARKER_SOCKET_ENV, rank_forward_path(fwd), 1);
            /* The forwarder carries datagrams only: the rank's threads must not hand it rings. */
            unsetenv(MLBENCH_MARKER_RING_ENV);
        }
    } else if (!marker_socket_reachable() && getenv(MLBENCH_MARKER_SOCKET_ENV)) {
        log_warn("rank-exec: mlbench's marker socket is not on this host and %s is not set: "
                 "running rank %d unmeasured (run `mlbench run --ranks-listen ADDR` and pass "
                 "the variable on: mpirun -x %s; docs/ranks.md)", RANK_LINK_ENV, rank,
                 RANK_LINK_ENV);
    }
    /* The first event announces the rank (the library does it); a stage-less command's rank
     * is then known by this process. */
    mlb_instant("mlbench.rank_start");
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && host[0])
        mlb_meta("mlbench.host", host); /* the rank's host, in runs[].ranks[].host */

    struct sigaction sa = {.sa_handler = forward};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);
    struct host_sampling sampling;
    host_sampling_start(&sampling, fwd);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[first], NULL, NULL, argv + first, environ);
    if (rc) {
        log_error("rank-exec: %s %s", rc == ENOENT ? "command not found:" : "cannot run",
                  argv[first]);
        mlb_meta("mlbench.rank_exit", rc == ENOENT ? "exit 127" : "exit 126");
        link_finish(fwd, &sampling, rank);
        return rc == ENOENT ? 127 : 126;
    }
    g_child = pid;
    if (fwd)
        forward_until_exit(fwd, pid);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    g_child = 0;
    char how[32];
    if (WIFSIGNALED(ws))
        snprintf(how, sizeof how, "signal %d", WTERMSIG(ws));
    else
        snprintf(how, sizeof how, "exit %d", WEXITSTATUS(ws));
    mlb_meta("mlbench.rank_exit", how);
    link_finish(fwd, &sampling, rank);
    if (!WIFSIGNALED(ws))
        return WEXITSTATUS(ws);
    /* Die by the same signal, so that the launcher reports the rank as a shell would. */
    int sig = WTERMSIG(ws);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}
