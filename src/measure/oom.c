/* oom: the out-of-memory classifier (see oom.h). Evidence is weighed strongest first: the
 * workload's own status with its message, the messages of the runtimes people use (one table),
 * the user's patterns, then the kernel's OOM killer as seen in the cgroup's memory events. */
#include "measure/oom.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages that mean out of memory in a failed run's stderr: what each runtime prints when an
 * allocation fails. Order matters only for the reason given: the more specific first. */
static const struct {
    const char *needle;
    const char *reason;
} messages[] = {
    {"torch.cuda.OutOfMemoryError", "PyTorch: torch.cuda.OutOfMemoryError"},
    {"torch.OutOfMemoryError", "PyTorch: torch.OutOfMemoryError"},
    {"CUDA out of memory", "CUDA out of memory"},
    {"CUDA error: out of memory", "CUDA error: out of memory"},
    {"ResourceExhaustedError", "TensorFlow: ResourceExhaustedError"},
    {"RESOURCE_EXHAUSTED: Out of memory", "XLA: RESOURCE_EXHAUSTED: Out of memory"},
    {"std::bad_alloc", "C++ std::bad_alloc"},
    {"Cannot allocate memory", "Cannot allocate memory (ENOMEM)"},
};

static __attribute__((format(printf, 3, 4))) void say(char *reason, size_t len,
                                                       const char *fmt, ...)
{
    if (len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, len, fmt, ap);
    va_end(ap);
}

/* The line of text that starts at p (up to '\n' or the end), as [p, *end). */
static const char *line_end(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl : p + strlen(p);
}

/* Whether a line of stderr is the last line of a Python traceback for a MemoryError or a
 * subclass named ...MemoryError (numpy's _ArrayMemoryError): "Name" or "Name: message" at the
 * start of the line, Name a dotted identifier ending in "MemoryError". A sentence that mentions
 * MemoryError in passing does not count. */
static bool python_memory_error(const char *line, const char *end)
{
    const char *p = line;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
        p++;
    static const char name[] = "MemoryError";
    size_t n = sizeof name - 1;
    if ((size_t)(p - line) < n || memcmp(p - n, name, n) != 0)
        return false;
    return p == end || *p == ':' || *p == '\r';
}

/* The workload's message: a line "mlbench-workload NAME: out of memory..." */
static bool workload_message(const char *line, const char *end)
{
    static const char prefix[] = "mlbench-workload ";
    size_t n = sizeof prefix - 1;
    if ((size_t)(end - line) < n || memcmp(line, prefix, n) != 0)
        return false;
    const char *colon = memchr(line + n, ':', (size_t)(end - line - (ptrdiff_t)n));
    static const char oom[] = ": out of memory";
    size_t m = sizeof oom - 1;
    return colon && (size_t)(end - colon) >= m && memcmp(colon, oom, m) == 0;
}

/* Runs test on each line of text; true when one matches. */
static bool any_line(const char *text, bool (*test)(const char *, const char *))
{
    for (const char *p = text; *p;) {
        const char *end = line_end(p);
        if (test(p, end))
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

bool oom_classify(const struct oom_evidence *e, char *reason, size_t len)
{
    if (len)
        reason[0] = '\0';
    /* Finished, or stopped by mlbench itself: whatever it printed, it did not run out. */
    if (e->status != RUN_FAILED && e->status != RUN_SIGNALED)
        return false;
    const char *err = e->stderr_tail ? e->stderr_tail : "";
    if (e->status == RUN_FAILED && e->exit_code == OOM_WORKLOAD_EXIT &&
        any_line(err, workload_message)) {
        say(reason, len, "mlbench-workload's out-of-memory status (exit %d)", OOM_WORKLOAD_EXIT);
        return true;
    }
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++)
        if (strstr(err, messages[i].needle)) {
            say(reason, len, "%s", messages[i].reason);
            return true;
        }
    if (any_line(err, python_memory_error)) {
        say(reason, len, "Python MemoryError");
        return true;
    }
    for (size_t i = 0; i < e->n_patterns; i++)
        if (e->patterns[i] && *e->patterns[i] && strstr(err, e->patterns[i])) {
            say(reason, len, "stderr matches --oom-pattern '%s'", e->patterns[i]);
            return true;
        }
    bool sigkill = (e->status == RUN_SIGNALED && e->signal == SIGKILL) ||
                   (e->status == RUN_FAILED && e->exit_code == 128 + SIGKILL);
    if (e->cgroup_oom_kills > 0) {
        /* The leader killed, or a process of its tree killed and the leader failed after it
         * (a DataLoader worker killed: the script raises and exits 1). */
        say(reason, len, "%s by the kernel's OOM killer (oom_kill +%ld in the cgroup's memory "
            "events)", sigkill ? "killed" : "a process of the run was killed",
            e->cgroup_oom_kills);
        return true;
    }
    if (sigkill && e->cgroup_oom_kills < 0)
        say(reason, len, "killed by SIGKILL; not taken for out of memory: the cgroup's memory "
            "events (oom_kill) are not readable here");
    else if (sigkill)
        say(reason, len, "killed by SIGKILL; not out of memory: the cgroup's oom_kill count "
            "did not rise");
    return false;
}
