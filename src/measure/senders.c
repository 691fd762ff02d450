/* senders: is a marker sender in the measured process tree? (see senders.h) */
#include "measure/senders.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

#define SLOTS 4096       /* direct-mapped cache of verdicts; a collision costs a new check */
#define MAX_DEPTH 4096   /* ancestors walked at most (a chain is far shorter) */
#define WALK_TRIES 3     /* walks restarted when an ancestor ended under us */

struct slot {
    pid_t pid;                  /* 0: empty */
    bool inside;                /* verdict */
    unsigned long long start;   /* starttime (clock ticks after boot) of the process judged */
    int64_t checked_ns;         /* when the process was last seen alive with that start */
};

struct senders {
    pid_t self;
    char root[200];
    struct slot slot[SLOTS];
};

struct senders *senders_new(const char *proc_root, pid_t self)
{
    if (strlen(proc_root) >= sizeof ((struct senders *)0)->root)
        return NULL;
    struct senders *s = xcalloc(1, sizeof *s);
    s->self = self;
    snprintf(s->root, sizeof s->root, "%s", proc_root);
    return s;
}

void senders_free(struct senders *s)
{
    free(s);
}

enum stat_read { STAT_OK, STAT_GONE, STAT_BAD };

/* Reads ppid (field 4) and starttime (field 22) of <root>/<pid>/stat. comm may hold spaces and
 * parentheses: the fields after it start after the last ')'. */
static enum stat_read read_stat(const struct senders *s, pid_t pid, pid_t *ppid,
                                unsigned long long *start)
{
    char path[256], buf[1024];
    snprintf(path, sizeof path, "%s/%ld/stat", s->root, (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? STAT_GONE : STAT_BAD;
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    int read_errno = errno;
    close(fd);
    if (n <= 0) /* a process reaped between open and read gives ESRCH */
        return n < 0 && read_errno == ESRCH ? STAT_GONE : STAT_BAD;
    buf[n] = '\0';
    const char *p = memrchr(buf, ')', (size_t)n);
    if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
        return STAT_BAD;
    p += 4; /* past ") S " */
    unsigned long long f[19]; /* fields 4..22 */
    for (size_t i = 0; i < 19; i++) {
        char *end;
        errno = 0;
        f[i] = strtoull(p, &end, 10);
        if (end == p || errno)
            return STAT_BAD;
        p = end;
    }
    *ppid = (pid_t)f[0];
    *start = f[18];
    return STAT_OK;
}

static struct slot *slot_of(struct senders *s, pid_t pid)
{
    return &s->slot[((uint32_t)pid * 2654435761u) >> 20 & (SLOTS - 1)];
}

/* Walks up from ppid. Returns 1 when the chain reaches self (or an ancestor already verified
 * inside), 0 when it ends elsewhere (init, or 0: a parent outside our pid namespace), -1 when an
 * ancestor ended under us (its child was re-parented meanwhile: walk again). */
static int walk(struct senders *s, pid_t ppid, int64_t now_ns)
{
    pid_t a = ppid;
    for (int depth = 0; depth < MAX_DEPTH; depth++) {
        if (a == s->self)
            return 1;
        if (a <= 1)
            return 0;
        const struct slot *c = slot_of(s, a);
        if (c->pid == a && now_ns - c->checked_ns < SENDERS_RECHECK_NS)
            return c->inside;
        unsigned long long start;
        pid_t up;
        if (read_stat(s, a, &up, &start) != STAT_OK)
            return -1;
        a = up;
    }
    return 0;
}

bool senders_accept(struct senders *s, pid_t pid, int64_t now_ns)
{
    if (pid <= 0)
        return false;
    if (pid == s->self)
        return true;
    struct slot *c = slot_of(s, pid);
    bool known = c->pid == pid;
    if (known && now_ns - c->checked_ns < SENDERS_RECHECK_NS)
        return c->inside;

    for (int tries = 0; tries < WALK_TRIES; tries++) {
        pid_t ppid;
        unsigned long long start;
        enum stat_read got = read_stat(s, pid, &ppid, &start);
        if (got == STAT_GONE) /* its last datagrams: only for a process verified recently */
            return known && c->inside && now_ns - c->checked_ns < SENDERS_GONE_GRACE_NS;
        if (got != STAT_OK)
            return false;
        if (known && c->start == start) { /* the same process: membership never changes */
            c->checked_ns = now_ns;
            return c->inside;
        }
        int in = walk(s, ppid, now_ns);
        if (in < 0)
            continue;
        *c = (struct slot){.pid = pid, .inside = in == 1, .start = start, .checked_ns = now_ns};
        return in == 1;
    }
    return false;
}
