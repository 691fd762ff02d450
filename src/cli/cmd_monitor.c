/* cmd_monitor: `mlbench monitor`: sample the machine (and a workload, when a command is given)
 * without end and serve the latest values, stage histograms and marker counters as Prometheus
 * /metrics (docs/monitoring.md). Runs as a service: a pid file, a log file reopened on SIGHUP,
 * a clean stop on SIGTERM/SIGINT. The aggregates are live/, the HTTP side live/http_server.c; the
 * command runs in a measure/instruments.c like a run of `mlbench run`. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "live/http_server.h"
#include "live/live.h"
#include "util/log.h"
#include "measure/runner.h"
#include "measure/instruments.h"
#include "util/units.h"
#include "util/xalloc.h"

#define MONITOR_DEFAULT_INTERVAL_NS 1000000000LL /* 1 s */
#define MONITOR_DEFAULT_GRACE_S 10.0
#define MONITOR_KEEP_ROWS 4           /* rows the sample table keeps: only the latest is served */
#define HOUSEKEEPING_MS 1000          /* sampler error count, pruning of dead threads */

/* The prose of --help, above and below the options (the rows of parse). */
static const char usage_text[] =
    "Usage: mlbench monitor [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Samples the machine, its GPUs and (with COMMAND) the command's process tree without end,\n"
    "and serves the latest values, stage durations and marker counters at /metrics in the\n"
    "Prometheus text format (/healthz answers \"ok\"). With COMMAND it also receives the\n"
    "command's stage markers, and ends when the command ends, with its exit status.\n";
static const char tail_text[] =
    "SIGTERM or SIGINT stops monitoring (and the command) and exits 0. docs/monitoring.md lists\n"
    "the metrics and shows a systemd unit and a Prometheus scrape configuration.\n";

struct monitor_options {
    const char *listen;
    const char *pidfile;
    const char *log_path;
    int64_t interval_ns;
    double grace_s;
    char **argv; /* the command, NULL-terminated, or NULL */
};

struct monitor {
    struct monitor_options opt;
    FILE *log;                 /* NULL: log lines go to stderr */
    struct live_metrics *live;
    struct instruments inst;    /* markers only with a command */
    bool pidfile_written;
    bool with_command;
};

/* "TERM" for SIGTERM. */
static const char *sig_name(int sig)
{
    const char *n = sigabbrev_np(sig);
    return n ? n : "?";
}

/* One log line. With --log: a timestamped line in the file (errors also on stderr, where the
 * operator looks when the service will not start); without: on stderr. Called from the main
 * thread only. */
__attribute__((format(printf, 3, 4)))
static void mon_log(struct monitor *m, bool error, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (m->log) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        char when[32];
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(m->log, "%s.%03ldZ mlbench monitor[%ld]: %s%s\n", when, ts.tv_nsec / 1000000,
                (long)getpid(), error ? "error: " : "", msg);
        fflush(m->log);
    }
    if (error)
        log_error("monitor: %s", msg);
    else if (!m->log)
        log_info("monitor: %s", msg);
}

static int parse(int argc, char **argv, struct monitor_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->listen = HTTP_DEFAULT_LISTEN;
    o->interval_ns = MONITOR_DEFAULT_INTERVAL_NS;
    o->grace_s = MONITOR_DEFAULT_GRACE_S;
    const struct cli_option table[] = {
        CLI_OPT_LISTEN("listen", &o->listen, .metavar = "ADDR",
                       .help = "address to serve on: HOST:PORT, [IPV6]:PORT or :PORT (default "
                               HTTP_DEFAULT_LISTEN "; 0.0.0.0:PORT for every interface)"),
        CLI_OPT_NANOSECONDS("interval", 0, &o->interval_ns, SAMPLER_MIN_INTERVAL_NS,
                            SAMPLER_MAX_INTERVAL_NS,
                            "is not a duration from 10ms to 10s (e.g. 1s, 250ms)",
                            .metavar = "SEC",
                            .help = "sampling interval, 10ms..10s (default 1s)"),
        CLI_OPT_STRING("pidfile", 0, &o->pidfile, CLI_NONEMPTY, "needs a file name",
                       .metavar = "FILE",
                       .help = "write the process id to FILE (refused when FILE names a running "
                               "process); removed on exit"),
        CLI_OPT_STRING("log", 0, &o->log_path, CLI_NONEMPTY, "needs a file name",
                       .metavar = "FILE",
                       .help = "append log lines (start, stop, errors) to FILE instead of "
                               "stderr; SIGHUP reopens it (log rotation)"),
        CLI_OPT_SECONDS("grace", 0, &o->grace_s, 0, 3600, 0,
                        "is not a duration up to 1h (e.g. 10s)", .metavar = "SEC",
                        .help = "on SIGTERM/SIGINT, time the command gets between SIGTERM and "
                                "SIGKILL (default 10s)"),
        CLI_OPT_END,
    };
    /* Options end at the command: its own options are not ours. */
    const struct cli_parser parser = {.verb = "monitor", .options = table,
                                      .flags = CLI_STOP_AT_ARG, .usage = usage_text,
                                      .tail = tail_text};
    struct cli_args args;
    int rc = cli_options_parse(&parser, argc, argv, &args, err, errlen);
    if (rc != CLI_OK)
        return rc == CLI_HELP ? 1 : -1;
    if (args.n > 0)
        o->argv = args.v;
    return 0;
}

/* --- pid file --------------------------------------------------------------------------- */

/* The pid a pid file names: > 0, 0 when it holds no pid, -1 when it does not exist. */
static long pidfile_read(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? -1 : 0;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1 || pid <= 0)
        pid = 0;
    fclose(f);
    return pid;
}

/* A process with this pid exists and is not us (a stale file may name our own pid in a new
 * container). */
static bool pid_alive(long pid)
{
    return pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* A pid file may be replaced only when it is absent, or a regular file (not a link, a device or
 * a FIFO) that holds a pid, of a process that is gone: anything else is somebody's file that
 * --pidfile named by mistake, and is refused, never deleted. */
static int pidfile_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot use the pid file '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "pid file '%s' is not a regular file (a %s): it is left alone; "
                 "choose another --pidfile", path,
                 S_ISLNK(st.st_mode) ? "symbolic link" : S_ISDIR(st.st_mode) ? "directory"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device" : "FIFO or socket");
        return -1;
    }
    long pid = pidfile_read(path);
    if (pid <= 0) {
        snprintf(err, errlen, "pid file '%s' exists and holds no process id: it is left alone "
                 "(not mlbench's?); remove it yourself or choose another --pidfile", path);
        return -1;
    }
    if (pid_alive(pid)) {
        snprintf(err, errlen, "pid file '%s' names process %ld, which is running (another "
                 "mlbench monitor?): stop it, or choose another --pidfile", path, pid);
        return -1;
    }
    return 0;
}

/* Writes our pid atomically: a complete temporary file, then link() (which fails if the file
 * appeared meanwhile: two monitors started at once cannot both win). A stale file is
 * replaced. The temporary file is made by mkstemp (O_EXCL, a random name): a link planted
 * beside the pid file cannot redirect the write. */
static int pidfile_write(const char *path, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the pid file '%s': %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    bool ok = write(fd, line, (size_t)n) == n;
    ok = close(fd) == 0 && ok;
    int rc = -1;
    for (int attempt = 0; ok && attempt < 2 && rc < 0; attempt++) {
        if (link(tmp, path) == 0) {
            rc = 0;
        } else if (errno == EEXIST) {
            if (pidfile_check(path, err, errlen) < 0) {
                unlink(tmp);
                free(tmp);
                return -1;
            }
            unlink(path); /* stale: try again */
        } else if (rename(tmp, path) == 0) { /* no hard links on this file system */
            rc = 0;
        } else {
            break;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "cannot write the pid file '%s': %s", path,
                 ok ? strerror(errno) : "write failed");
    unlink(tmp);
    free(tmp);
    return rc;
}

/* Removes the pid file if it still names us. */
static void pidfile_remove(const char *path)
{
    if (pidfile_read(path) == (long)getpid())
        unlink(path);
}

/* --- log -------------------------------------------------------------------------------- */

static FILE *log_open(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "ae");
    if (!f)
        snprintf(err, errlen, "cannot open the log file '%s': %s", path, strerror(errno));
    return f;
}

/* SIGHUP: the log was rotated (renamed); write to a new file under the same name. */
static void reopen_log(void *arg)
{
    struct monitor *m = arg;
    if (!m->opt.log_path) {
        mon_log(m, false, "SIGHUP: no --log file to reopen");
        return;
    }
    char err[512];
    FILE *f = log_open(m->opt.log_path, err, sizeof err);
    if (!f) {
        mon_log(m, true, "SIGHUP: %s; still writing to the old file", err);
        return;
    }
    fclose(m->log);
    m->log = f;
    mon_log(m, false, "reopened the log file on SIGHUP");
}

/* --- running ---------------------------------------------------------------------------- */

static void housekeeping(struct monitor *m)
{
    live_set_sampler_errors(m->live, sampler_errors(m->inst.sampler));
    if (m->inst.markers) { /* never in a run: whatever was not an event was malformed */
        live_set_marker_datagrams(m->live, markers_outside(m->inst.markers));
        live_set_marker_foreign(m->live, markers_foreign(m->inst.markers, NULL));
    }
    if (m->with_command)
        live_prune_dead(m->live); /* threads and workers that ended inside a stage */
}

static void tick(void *arg, int64_t elapsed_ns)
{
    (void)elapsed_ns;
    housekeeping(arg);
}

/* Without a command: wait for a signal, doing housekeeping every second. Returns the signal
 * that stopped us. */
static int wait_for_stop(struct monitor *m)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    for (;;) {
        struct timespec ts = {HOUSEKEEPING_MS / 1000, (HOUSEKEEPING_MS % 1000) * 1000000L};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGHUP)
            reopen_log(m);
        else if (sig == SIGINT || sig == SIGTERM)
            return sig;
        else
            housekeeping(m);
    }
}

/* Runs the command to its end (or until a stop signal). Returns monitor's exit status. */
static int run_command(struct monitor *m)
{
    struct runner_spec spec = {
        .argv = m->opt.argv, .envp = m->inst.env, .grace_s = m->opt.grace_s,
        .show_output = true, .tick = tick, .tick_arg = m, .tick_ms = HOUSEKEEPING_MS,
        .spawned = instruments_spawned, .spawned_arg = &m->inst,
        .before_reap = instruments_before_reap, .before_reap_arg = &m->inst,
        .hangup = reopen_log, .hangup_arg = m,
    };
    struct run_outcome o;
    int status = 0;
    runner_run(&spec, &o);
    instruments_stop_markers(&m->inst); /* no listener call after this */
    if (o.error[0]) {
        mon_log(m, true, "%s", o.error);
        status = o.exit_code;
    } else if (o.status == RUN_INTERRUPTED) {
        mon_log(m, false, "stop: SIG%s received; the command was stopped", sig_name(o.stop_signal));
        status = 0;
    } else if (o.signal) {
        mon_log(m, false, "stop: the command was killed by SIG%s", sig_name(o.signal));
        status = 128 + o.signal;
    } else {
        mon_log(m, o.exit_code != 0, "stop: the command exited with status %d", o.exit_code);
        status = o.exit_code;
    }
    free(o.stderr_tail);
    return status;
}

static void describe_start(struct monitor *m, const char *address)
{
    char cmd[1024] = ""; /* the command's words, cut if very long */
    for (char **a = m->opt.argv; a && *a; a++) {
        size_t used = strlen(cmd);
        snprintf(cmd + used, sizeof cmd - used, "%s%s", used ? " " : "", *a);
    }
    char interval[32];
    mon_log(m, false, "start: mlbench %s serving http://%s/metrics, sampling every %s%s%s%s%s",
            MLBENCH_VERSION, address,
            units_duration((double)m->opt.interval_ns, interval, sizeof interval),
            m->opt.pidfile ? ", pid file " : "", m->opt.pidfile ? m->opt.pidfile : "",
            cmd[0] ? ", command: " : "", cmd);
    const char *const *skipped;
    size_t n = sampler_skipped(m->inst.sampler, &skipped);
    for (size_t i = 0; i < n; i++)
        mon_log(m, false, "not measured: %s", skipped[i]);
}

int cmd_monitor(int argc, char **argv)
{
    struct monitor m = {0};
    char err[1024];
    int rc = parse(argc, argv, &m.opt, err, sizeof err);
    if (rc == 1)
        return 0;
    if (rc < 0) {
        log_error("%s", err);
        return 2;
    }
    m.with_command = m.opt.argv != NULL;
    if (m.opt.log_path && !(m.log = log_open(m.opt.log_path, err, sizeof err))) {
        log_error("%s", err);
        return 2;
    }
    if (m.opt.pidfile && pidfile_check(m.opt.pidfile, err, sizeof err) < 0) {
        mon_log(&m, true, "%s", err);
        if (m.log)
            fclose(m.log);
        return 2;
    }
    /* Before any thread starts, so that they all leave the signals to this one. */
    if (runner_init(err, sizeof err) < 0) {
        mon_log(&m, true, "%s", err);
        if (m.log)
            fclose(m.log);
        return 3;
    }
    m.live = live_new();
    struct http_server *http = http_server_start(m.opt.listen, m.live, err, sizeof err);
    if (!http || (m.opt.pidfile && pidfile_write(m.opt.pidfile, err, sizeof err) < 0)) {
        mon_log(&m, true, "%s", err);
        http_server_stop(http);
        live_free(m.live);
        if (m.log)
            fclose(m.log);
        return 2;
    }
    m.pidfile_written = m.opt.pidfile != NULL;

    struct instruments_config scfg = {.interval_ns = m.opt.interval_ns, .markers = m.with_command};
    if (instruments_open(&m.inst, &scfg, err, sizeof err) < 0) {
        mon_log(&m, true, "%s", err);
        http_server_stop(http);
        live_free(m.live);
        if (m.pidfile_written)
            pidfile_remove(m.opt.pidfile);
        if (m.log)
            fclose(m.log);
        return 3;
    }
    if (m.inst.markers) {
        live_expect_markers(m.live);
        markers_set_listener(m.inst.markers, live_on_marker, m.live);
    }
    sampler_set_listener(m.inst.sampler, live_on_sample, m.live);
    sampler_keep_rows(m.inst.sampler, MONITOR_KEEP_ROWS);
    struct sample_table tab;
    bool sampling = sampler_start(m.inst.sampler, &tab) == 0;
    describe_start(&m, http_server_address(http));
    if (!sampling)
        mon_log(&m, true, "cannot start the sampling thread: only markers are served");

    int status;
    if (m.with_command) {
        status = run_command(&m);
    } else {
        int sig = wait_for_stop(&m);
        mon_log(&m, false, "stop: SIG%s received", sig_name(sig));
        status = 0;
    }

    http_server_stop(http);
    instruments_stop_markers(&m.inst);
    if (sampling)
        sampler_stop(m.inst.sampler);
    sample_table_free(&tab); /* initialised by sampler_start even when its thread did not start */
    live_free(m.live);
    instruments_close(&m.inst);
    if (m.pidfile_written)
        pidfile_remove(m.opt.pidfile);
    if (m.log)
        fclose(m.log);
    return status;
}
