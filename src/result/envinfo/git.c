/* envinfo/git.c: the `git` object of the environment: commit, branch and dirty state of the
 * working directory, from git run with posix_spawnp (no shell), killed after 2 s; and
 * envinfo_run, which runs such a helper program (python.c uses it too). */
#include "result/envinfo/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/xalloc.h"

extern char **environ;

#define GIT_TIMEOUT_NS 2000000000LL

int envinfo_run(char *const argv[], char *const envp[], char *out, size_t outlen, size_t *lines,
                int64_t deadline)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, defaults;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    /* mlbench run blocks these and ignores SIGPIPE: git must get the usual behaviour */
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        return -1;
    }

    size_t len = 0;
    *lines = 0;
    out[0] = '\0';
    bool timed_out = false;
    for (;;) {
        int64_t left = deadline - mono_ns();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left / 1000000 + 1));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline is checked above */
        char buf[4096];
        ssize_t n = read(pfd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            *lines += buf[i] == '\n';
        size_t take = (size_t)n < outlen - 1 - len ? (size_t)n : outlen - 1 - len;
        memcpy(out + len, buf, take);
        len += take;
        out[len] = '\0';
    }
    close(pfd[0]);
    int status = 0;
    if (timed_out)
        kill(pid, SIGKILL);
    for (;;) {
        pid_t w = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
        if (w == pid)
            break;
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        /* still running after closing its output */
        if (mono_ns() >= deadline) {
            timed_out = true;
            kill(pid, SIGKILL);
            continue;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

json_t *envinfo_git(const char *dir)
{
    /* this process's environment, with git told not to take the index lock (a status that
     * refreshes the index would otherwise race with the user's own git commands) */
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **envp = xcalloc(n + 3, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "GIT_OPTIONAL_LOCKS=", 19) &&
            strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20))
            envp[k++] = environ[i];
    envp[k++] = (char *)"GIT_OPTIONAL_LOCKS=0";
    envp[k++] = (char *)"GIT_TERMINAL_PROMPT=0";
    envp[k] = NULL;

    char *d = (char *)(dir ? dir : ".");
    char *rev_argv[] = {"git", "-C", d, "rev-parse", "HEAD", "--abbrev-ref", "HEAD", NULL};
    char *status_argv[] = {"git", "-C", d, "status", "--porcelain", "--untracked-files=no", NULL};
    int64_t deadline = mono_ns() + GIT_TIMEOUT_NS;
    char rev[256], status[16];
    size_t rev_lines, changed;
    json_t *o = NULL;
    if (envinfo_run(rev_argv, envp, rev, sizeof rev, &rev_lines, deadline) == 0 &&
        envinfo_run(status_argv, envp, status, sizeof status, &changed, deadline) == 0) {
        char commit[64] = "", branch[200] = "";
        if (sscanf(rev, "%63s %199s", commit, branch) >= 1 && strlen(commit) >= 40) {
            o = json_object();
            envinfo_set_text(o, "commit", commit);
            if (branch[0] && strcmp(branch, "HEAD"))
                envinfo_set_text(o, "branch", branch);
            json_object_set_new(o, "dirty", json_boolean(changed > 0));
            envinfo_set_int(o, "changed_files", (int64_t)changed);
        }
    }
    free(envp);
    return o;
}
