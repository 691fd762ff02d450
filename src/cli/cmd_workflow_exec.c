/* cmd_workflow_exec: `mlbench workflow-exec FILE [--param NAME=VALUE]...`, the hidden verb that
 * runs one repetition of a workflow file (docs/workflow.md). `mlbench run workflow.yaml`
 * measures this verb as its command: each stage is a marker stage of this process, its command
 * a child whose own stages the harness nests under it (metadata "mlbench.adopt" PID).
 *
 * Exit status: 0 every stage succeeded; the failing stage's status otherwise (its exit code,
 * 128 + signal when it was killed, 127 command not found, 126 cannot execute, 1 cannot enter
 * its cwd); 2 bad usage or a bad file (file:line:column); killed by the signal it received
 * (SIGTERM, SIGINT, SIGHUP) after forwarding it to the running stage. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mlbench/marker.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/log.h"
#include "measure/workflow.h"
#include "util/xalloc.h"

extern char **environ;

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

static volatile sig_atomic_t g_child;  /* pid of the running stage, 0 between stages */
static volatile sig_atomic_t g_signal; /* the first stop signal received */
static char **g_saved_env;             /* see save_environment */

/* Forwards the signal to the running stage, unless the kernel sent it (a terminal's Ctrl-C
 * reaches the whole foreground process group, the stage included). mlbench stops a run with
 * killpg, so the stage may get it twice: harmless for the default action, and a stage in a
 * process group of its own still gets it. */
static void on_stop(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    if (!g_signal)
        g_signal = sig;
    pid_t child = (pid_t)g_child;
    if (child > 0 && info->si_code != SI_KERNEL)
        kill(child, sig);
}

/* Dies by the stop signal received, as a shell does, so whoever waits on us sees it. Returns
 * the exit status a shell would give (128 + sig) only if raising it failed. */
static int die_by_signal(int sig)
{
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    kill(getpid(), sig); /* delivered before kill returns: a signal unblocked for ourselves */
    return 128 + sig;
}

__attribute__((format(printf, 2, 3)))
static void stage_error(const char *stage, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "workflow: stage '%s': %s\n", stage, msg);
}

/* The environment every stage starts from: ours when we started ("NAME=VALUE" strings that
 * live until exit, for putenv). */
static char **save_environment(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **saved = xcalloc(n + 1, sizeof *saved);
    for (size_t i = 0; i < n; i++)
        saved[i] = xstrdup(environ[i]);
    return saved;
}

/* Makes this process's environment the saved one plus the stage's env, so that the command's
 * $VARIABLES, the PATH search and the child all see the stage's values. */
static void apply_environment(char **saved, const struct workflow_stage *st)
{
    clearenv();
    for (size_t i = 0; saved[i]; i++)
        putenv(saved[i]);
    for (size_t i = 0; i < st->n_env; i++) {
        const char *eq = strchr(st->env[i], '=');
        char *name = xstrndup(st->env[i], (size_t)(eq - st->env[i]));
        setenv(name, eq + 1, 1);
        free(name);
    }
}

/* Spawns the stage's command with the stop signals blocked, so that g_child is set before a
 * handler can look at it; the child starts with our original mask and default handlers.
 * Returns 0 or the errno of posix_spawnp. */
static int spawn_stage(char **argv, const sigset_t *orig_mask, pid_t *pid)
{
    sigset_t block, defaults;
    sigemptyset(&block);
    sigemptyset(&defaults);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) {
        sigaddset(&block, stop_signals[i]);
        sigaddset(&defaults, stop_signals[i]);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, orig_mask);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    sigprocmask(SIG_BLOCK, &block, NULL);
    int rc = posix_spawnp(pid, argv[0], NULL, &attr, argv, environ);
    if (rc == 0)
        g_child = *pid;
    sigprocmask(SIG_SETMASK, orig_mask, NULL);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Runs stage i inside its marker stage. Returns 0 when it succeeded, or the workflow's exit
 * status after saying why on stderr. Returns -1 when a stop signal arrived: the stage is left
 * open (the harness marks it unclosed, as it does for any interrupted stage). */
static int run_stage(const struct workflow *wf, size_t i, char **saved_env,
                     const sigset_t *orig_mask)
{
    const struct workflow_stage *st = &wf->stages[i];
    char err[1024];
    int status = 0;
    mlb_stage_begin(st->name);
    apply_environment(saved_env, st);
    if (chdir(st->cwd) < 0) {
        stage_error(st->name, "cannot enter directory '%s': %s", st->cwd, strerror(errno));
        mlb_stage_end(st->name);
        return 1;
    }
    char **argv = workflow_stage_argv(wf, i, err, sizeof err);
    if (!argv) {
        fprintf(stderr, "workflow: %s\n", err);
        mlb_stage_end(st->name);
        return 2;
    }
    pid_t pid;
    int rc = spawn_stage(argv, orig_mask, &pid);
    if (rc) {
        if (rc == ENOENT) {
            stage_error(st->name, "command not found: %s", argv[0]);
            status = 127;
        } else if (rc == EACCES) {
            stage_error(st->name, "permission denied: %s", argv[0]);
            status = 126;
        } else {
            stage_error(st->name, "cannot run %s: %s", argv[0], strerror(rc));
            status = 126;
        }
        workflow_argv_free(argv);
        mlb_stage_end(st->name);
        return status;
    }
    char pidtext[24];
    snprintf(pidtext, sizeof pidtext, "%ld", (long)pid);
    mlb_meta("mlbench.adopt", pidtext);

    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    g_child = 0;
    if (g_signal) {
        workflow_argv_free(argv);
        return -1;
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
        stage_error(st->name, "%s exited with status %d", argv[0], WEXITSTATUS(ws));
        status = WEXITSTATUS(ws);
    } else if (WIFSIGNALED(ws)) {
        const char *name = sigabbrev_np(WTERMSIG(ws));
        stage_error(st->name, "%s was killed by SIG%s", argv[0], name ? name : "?");
        status = 128 + WTERMSIG(ws);
    }
    workflow_argv_free(argv);
    mlb_stage_end(st->name);
    return status;
}

/* Metadata for the result: the file and the value of every parameter. */
static void send_metadata(const struct workflow *wf)
{
    mlb_meta("workflow", wf->path);
    for (size_t i = 0; i < wf->n_params; i++) {
        const char *v = wf->params[i].value;
        bool printable = true;
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                printable = false;
        if (!printable)
            continue; /* the protocol carries no control character: leave it out */
        char key[300];
        snprintf(key, sizeof key, "params.%s", wf->params[i].name);
        mlb_meta(key, v);
    }
}

/* The prose of --help, above the options (also printed on bad usage). */
static const char usage_text[] =
    "Usage: mlbench workflow-exec FILE [--param NAME=VALUE]...\n"
    "Runs one repetition of workflow FILE, each stage a marker stage (docs/workflow.md).\n"
    "Measure it with: mlbench run [options] FILE\n";

int cmd_workflow_exec(int argc, char **argv)
{
    struct strvec params = STRVEC_INIT;
    const struct cli_option table[] = {
        CLI_OPT_STRINGS("param", 0, &params, 0, NULL, NULL, .metavar = "NAME=VALUE",
                        .help = "set parameter NAME of the workflow (repeatable)"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "workflow-exec", .options = table,
                                      .flags = 0, .usage = usage_text};
    struct cli_args args;
    char err[1024];
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_HELP) { /* args is not set */
        strvec_free(&params);
        return 0;
    }
    if (rc == CLI_ERROR)
        log_error("workflow-exec: %s\n%s", err, usage_text);
    else if (args.n > 1)
        log_error("workflow-exec: one workflow file at a time ('%s' and '%s')", args.v[0],
                  args.v[1]);
    else if (args.n == 0)
        fputs(usage_text, stderr);
    if (rc != CLI_OK || args.n != 1) {
        strvec_free(&params);
        return 2;
    }

    struct workflow *wf = workflow_load(args.v[0], err, sizeof err);
    for (size_t i = 0; wf && i < params.n; i++)
        if (workflow_set_param(wf, params.v[i], err, sizeof err) < 0) {
            workflow_free(wf);
            wf = NULL;
        }
    strvec_free(&params);
    if (!wf) {
        log_error("%s", err);
        return 2;
    }

    sigset_t orig_mask;
    sigprocmask(SIG_SETMASK, NULL, &orig_mask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);

    /* Kept until exit: its strings become the environment (putenv). */
    g_saved_env = save_environment();
    send_metadata(wf);
    int status = 0;
    for (size_t i = 0; i < wf->n_stages && status == 0; i++) {
        if (g_signal)
            break;
        status = run_stage(wf, i, g_saved_env, &orig_mask);
    }
    workflow_free(wf);
    if (g_signal)
        return die_by_signal(g_signal);
    return status;
}
