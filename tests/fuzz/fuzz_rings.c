/* fuzz_rings: mlbench's reader of the shared-memory marker rings (src/measure/rings.c, layout
 * include/mlbench/marker_ring.h), through its API: rings_control with the announcements of the
 * marker socket and the descriptors they carry, rings_drain, rings_begin_run, rings_end_run.
 *
 * Input: text lines up to the first empty line, then bytes (the data, read in order by the lines
 * that need some; what is past its end reads as 0). The lines, at most 64, run in order:
 *   [+][@PID[/TID] ][K ]NAME[ VALUE]  a token: kind K (B, E, C or I; default M), from PID/TID
 *                  (default this process and thread); "mlbench.ring CAP" and a line with '+'
 *                  carry a descriptor made from the next ring blob of the data
 *   drain | strict  rings_drain, strict false or true (at "now", default 10 s; "now NS" sets it)
 *   begin | end     rings_begin_run, rings_end_run (into the iteration's event log)
 *   write I         writes the next write blob of the data into the file of ring line I
 * then, always: drain, strict, begin, strict, end, rings_free.
 * A ring blob: an option byte, 32 bytes written at header offset 0 (magic, version, record size,
 * capacity, pid, tid), 24 at offset 64 (head, begun, dropped), a record count N and N records of
 * 21 bytes each (t_ns, value, name id, kind; the reserved bytes stay 0). The file holds CAP
 * records when 1 <= CAP <= 1024 (else 128: a larger ring is refused as too small, and stays
 * cheap). Option bits: 0x01 the header's pid/tid set to the token's (the seeds use it, since
 * on_ring checks them); 0x02 magic, version, record size and capacity set valid; 0x04 no
 * F_SEAL_SHRINK; 0x08 the file one record short; 0x10 no descriptor (-1); 0x20 a pipe instead;
 * 0x40 F_SEAL_WRITE too (no shared writable mapping); 0x80 the descriptor reopened read-only.
 * A write blob: offset (2 bytes, little-endian, modulo the file's size), length (1 byte), bytes.
 *
 * Checked: the descriptor passed to rings_control is closed on return, whatever happened; an
 * event has a kind B/E/C/I, a name that some "mlbench.name" line announced (its bytes read), the
 * pid/tid of a ring line, a time in [0, now + 1 s], and comes only from rings_drain; a malformed
 * report has a reason and its text (bytes read); rings_count never exceeds the ring lines. Every
 * 1024 runs no descriptor or mapping of a ring file (a memfd named FILE_NAME) is left over:
 * rings_free unmaps everything. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "measure/event_log.h"
#include "measure/marker_parse.h"
#include "measure/rings.h"
#include "mlbench/marker_ring.h"

#define FAIL(...)                                                                             \
    do {                                                                                      \
        fprintf(stderr, "fuzz_rings: " __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                                  \
        abort();                                                                              \
    } while (0)

#define MAX_LINES 64
#define MAX_FILE_RECORDS 1024
#define DEFAULT_NOW_NS 10000000000LL
#define SLACK_NS 1000000000LL
#define FILE_NAME "mlbench-fuzz-ring"

enum {
    OPT_OWN_THREAD = 0x01,
    OPT_VALID_HEADER = 0x02,
    OPT_NO_SEAL = 0x04,
    OPT_SHORT = 0x08,
    OPT_NO_FD = 0x10,
    OPT_PIPE = 0x20,
    OPT_SEAL_WRITE = 0x40,
    OPT_READ_ONLY = 0x80,
};

struct cursor {
    const uint8_t *p;
    size_t n;
};

/* Copies k bytes of the data into out; past its end, zeros. */
static void take(struct cursor *c, void *out, size_t k)
{
    size_t m = k < c->n ? k : c->n;
    memcpy(out, c->p, m);
    memset((uint8_t *)out + m, 0, k - m);
    c->p += m;
    c->n -= m;
}

struct ring_line {
    int32_t pid, tid;
    int own; /* our descriptor of its file (for `write`), or -1 */
    size_t file_bytes;
};

/* What one iteration's checks need. */
struct state {
    struct event_log log;
    struct ring_line rings[MAX_LINES];
    size_t n_rings;
    const char *names[MAX_LINES]; /* the NAME part of every "mlbench.name ID NAME" line */
    size_t name_len[MAX_LINES];
    size_t n_names;
    int64_t now_ns;
    bool in_drain;
    volatile unsigned sink; /* the bytes the callbacks touch */
};

static void on_event(void *arg, const struct marker_token *tok)
{
    struct state *st = arg;
    if (!st->in_drain)
        FAIL("an event outside rings_drain");
    if (!tok)
        FAIL("a NULL token");
    if (tok->kind != MARKER_BEGIN && tok->kind != MARKER_END && tok->kind != MARKER_COUNTER &&
        tok->kind != MARKER_INSTANT)
        FAIL("an event of kind 0x%02x", (unsigned)(unsigned char)tok->kind);
    if (!tok->name || tok->name_len == 0)
        FAIL("an event without a name (%p, %zu bytes)", (const void *)tok->name, tok->name_len);
    for (size_t i = 0; i < tok->name_len; i++)
        st->sink += (unsigned char)tok->name[i];
    if (tok->value || tok->value_len)
        FAIL("an event of kind %c with a value", tok->kind);
    if (tok->t_ns < 0 || tok->t_ns > st->now_ns + SLACK_NS)
        FAIL("an event at %lld ns (now %lld)", (long long)tok->t_ns, (long long)st->now_ns);
    bool named = false;
    for (size_t i = 0; i < st->n_names && !named; i++)
        named = st->name_len[i] == tok->name_len && !memcmp(st->names[i], tok->name, tok->name_len);
    if (!named)
        FAIL("an event named '%.*s', never announced", (int)tok->name_len, tok->name);
    bool ours = false;
    for (size_t i = 0; i < st->n_rings && !ours; i++)
        ours = st->rings[i].pid == tok->pid && st->rings[i].tid == tok->tid;
    if (!ours)
        FAIL("an event of pid %d tid %d, no ring's", (int)tok->pid, (int)tok->tid);
    event_log_add(&st->log, tok);
}

static void on_malformed(void *arg, const char *why, const char *text, size_t len)
{
    struct state *st = arg;
    if (!why || !why[0])
        FAIL("a malformed report without a reason");
    if (!text)
        FAIL("a malformed report (%s) without its text", why);
    st->sink += (unsigned)strlen(why);
    for (size_t i = 0; i < len; i++)
        st->sink += (unsigned char)text[i];
    event_log_add_malformed(&st->log, why, text, len);
}

/* The descriptor of a ring line, made from the next ring blob (always taken from the data). */
static int make_ring(struct cursor *c, const struct marker_token *tok, struct ring_line *rl)
{
    uint8_t opt, ids[32], counters[24], nrec;
    take(c, &opt, 1);
    take(c, ids, sizeof ids);
    take(c, counters, sizeof counters);
    take(c, &nrec, 1);
    uint8_t rec[255][21];
    take(c, rec, (size_t)nrec * sizeof rec[0]);

    char cap_text[32] = "";
    if (tok->value && tok->value_len < sizeof cap_text)
        memcpy(cap_text, tok->value, tok->value_len);
    unsigned long long cap = strtoull(cap_text, NULL, 10);
    size_t records = cap >= 1 && cap <= MAX_FILE_RECORDS ? (size_t)cap : 128;

    if (opt & OPT_NO_FD)
        return -1;
    if (opt & OPT_PIPE) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            FAIL("pipe2: %s", strerror(errno));
        close(p[1]);
        return p[0];
    }
    int fd = memfd_create(FILE_NAME, MFD_ALLOW_SEALING | MFD_CLOEXEC);
    if (fd < 0)
        FAIL("memfd_create: %s", strerror(errno));
    size_t bytes = MLB_RING_HEADER_BYTES + records * MLB_RING_RECORD_BYTES;
    if (opt & OPT_SHORT)
        bytes -= MLB_RING_RECORD_BYTES;
    if (ftruncate(fd, (off_t)bytes) != 0)
        FAIL("ftruncate: %s", strerror(errno));
    struct mlb_ring_header h;
    memset(&h, 0, sizeof h);
    memcpy(&h, ids, sizeof ids);
    memcpy(&h.head, counters, sizeof counters);
    if (opt & OPT_VALID_HEADER) {
        memcpy(h.magic, MLB_RING_MAGIC, sizeof h.magic);
        h.version = MLB_RING_VERSION;
        h.record_bytes = MLB_RING_RECORD_BYTES;
        h.capacity = cap;
    }
    if (opt & OPT_OWN_THREAD) {
        h.pid = tok->pid;
        h.tid = tok->tid;
    }
    if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        FAIL("pwrite: %s", strerror(errno));
    for (size_t i = 0; i < nrec && i < records; i++) {
        off_t at = (off_t)(MLB_RING_HEADER_BYTES + i * MLB_RING_RECORD_BYTES);
        if ((size_t)at + sizeof rec[i] <= bytes && pwrite(fd, rec[i], sizeof rec[i], at) < 0)
            FAIL("pwrite: %s", strerror(errno));
    }
    int seals = (opt & OPT_NO_SEAL ? 0 : F_SEAL_SHRINK) | (opt & OPT_SEAL_WRITE ? F_SEAL_WRITE : 0);
    if (seals && fcntl(fd, F_ADD_SEALS, seals) != 0)
        FAIL("F_ADD_SEALS: %s", strerror(errno));
    rl->own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    rl->file_bytes = bytes;
    if (rl->own < 0)
        FAIL("dup: %s", strerror(errno));
    if (opt & OPT_READ_ONLY) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int ro = open(path, O_RDONLY | O_CLOEXEC);
        if (ro >= 0) {
            close(fd);
            fd = ro;
        }
    }
    return fd;
}

/* "write I": the next write blob into the file of ring line I. */
static void write_ring(struct cursor *c, struct state *st, unsigned long i)
{
    uint8_t hdr[3], bytes[255];
    take(c, hdr, sizeof hdr);
    take(c, bytes, hdr[2]);
    if (st->n_rings == 0)
        return;
    const struct ring_line *rl = &st->rings[i % st->n_rings];
    if (rl->own < 0 || rl->file_bytes == 0)
        return;
    size_t off = (size_t)(hdr[0] | hdr[1] << 8) % rl->file_bytes;
    size_t len = hdr[2] < rl->file_bytes - off ? hdr[2] : rl->file_bytes - off;
    (void)!pwrite(rl->own, bytes, len, (off_t)off); /* refused when sealed against writes */
}

/* Every 1024 runs: no descriptor and no mapping of a ring file is left over (the pipes are
 * checked as each is handed over). */
static void check_nothing_left(void)
{
    static unsigned long runs;
    if (runs++ % 1024)
        return;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            char path[300], target[256];
            snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
            ssize_t n = readlink(path, target, sizeof target - 1);
            if (n > 0) {
                target[n] = '\0';
                if (strstr(target, FILE_NAME))
                    FAIL("descriptor %s left open: %s", e->d_name, target);
            }
        }
        closedir(d);
    }
    FILE *f = fopen("/proc/self/maps", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strstr(line, FILE_NAME))
                FAIL("a ring file still mapped: %s", line);
        fclose(f);
    }
}

static void drain(struct ring_set *s, struct state *st, const struct ring_sink *sink, bool strict)
{
    st->in_drain = true;
    (void)rings_drain(s, sink, st->now_ns, strict);
    st->in_drain = false;
    (void)rings_busy(s);
    if (rings_count(s) > st->n_rings)
        FAIL("%zu rings mapped of %zu announced", rings_count(s), st->n_rings);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the text up to the first empty line; the data after it */
    size_t text_len = size;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == '\n' && data[i + 1] == '\n') {
            text_len = i;
            break;
        }
    size_t skip = text_len < size ? 2 : 0; /* the empty line itself */
    struct cursor c = {data + text_len + skip, size - text_len - skip};
    char *text = malloc(text_len + 1);
    if (!text)
        return 0;
    memcpy(text, data, text_len);
    text[text_len] = '\0';

    struct state st;
    memset(&st, 0, sizeof st);
    event_log_init(&st.log);
    st.now_ns = DEFAULT_NOW_NS;
    const struct ring_sink sink = {&st, on_event, on_malformed, NULL, NULL};
    struct ring_set *s = rings_new();
    const int32_t my_pid = (int32_t)getpid(), my_tid = (int32_t)syscall(SYS_gettid);

    char *p = text, *end = text + text_len;
    for (int n = 0; n < MAX_LINES && p <= end; n++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        *line_end = '\0';
        size_t len = (size_t)(line_end - p);
        char *line = p;
        p = line_end + 1;

        if (!strcmp(line, "drain") || !strcmp(line, "strict")) {
            drain(s, &st, &sink, line[0] == 's');
        } else if (!strcmp(line, "begin")) {
            rings_begin_run(s);
        } else if (!strcmp(line, "end")) {
            rings_end_run(s, &st.log, &sink);
        } else if (!strncmp(line, "now ", 4)) {
            long long now = strtoll(line + 4, NULL, 10);
            /* the monotonic clock of a real reading: never negative, never near overflow */
            st.now_ns = now < 0 ? 0 : now > INT64_MAX / 2 ? INT64_MAX / 2 : now;
        } else if (!strncmp(line, "write ", 6)) {
            write_ring(&c, &st, strtoul(line + 6, NULL, 10));
        } else {
            const char *q = line, *q_end = line + len;
            bool carry = q < q_end && *q == '+';
            q += carry;
            struct marker_token tok = {.kind = MARKER_META, .t_ns = 1, .pid = my_pid,
                                       .tid = my_tid};
            if (q < q_end && *q == '@') {
                char *e;
                tok.pid = (int32_t)strtol(q + 1, &e, 10);
                if (*e == '/')
                    tok.tid = (int32_t)strtol(e + 1, &e, 10);
                q = *e == ' ' ? e + 1 : e;
            }
            if (q_end - q >= 2 && *q && strchr("BECI", *q) && q[1] == ' ') {
                tok.kind = *q;
                q += 2;
            }
            const char *sp = memchr(q, ' ', (size_t)(q_end - q));
            tok.name = q;
            tok.name_len = (size_t)((sp ? sp : q_end) - q);
            if (tok.kind == MARKER_META) {
                tok.value = sp ? sp + 1 : q_end;
                tok.value_len = (size_t)(q_end - tok.value);
            }
            bool is_ring = tok.name_len == 12 && !memcmp(tok.name, "mlbench.ring", 12);
            if (tok.kind == MARKER_META && tok.name_len == 12 &&
                !memcmp(tok.name, "mlbench.name", 12)) {
                const char *v_end = tok.value + tok.value_len;
                const char *name = memchr(tok.value, ' ', tok.value_len);
                if (name) {
                    st.names[st.n_names] = name + 1;
                    st.name_len[st.n_names++] = (size_t)(v_end - name - 1);
                }
            }
            int fd = -1;
            if (is_ring || carry) {
                struct ring_line *rl = &st.rings[st.n_rings++];
                *rl = (struct ring_line){.pid = tok.pid, .tid = tok.tid, .own = -1};
                fd = make_ring(&c, &tok, rl);
            }
            bool control = rings_control(s, &tok, fd, tok.pid, &sink);
            if (fd >= 0 && (fcntl(fd, F_GETFD) != -1 || errno != EBADF))
                FAIL("rings_control left descriptor %d open (line '%s')", fd, line);
            if (control != (tok.kind == MARKER_META &&
                            (is_ring || (tok.name_len == 12 &&
                                         !memcmp(tok.name, "mlbench.name", 12)))))
                FAIL("rings_control returned %d for '%s'", (int)control, line);
        }
        if (!nl)
            break;
    }

    drain(s, &st, &sink, false);
    drain(s, &st, &sink, true);
    rings_begin_run(s);
    drain(s, &st, &sink, true);
    rings_end_run(s, &st.log, &sink);
    rings_free(s);
    for (size_t i = 0; i < st.n_rings; i++)
        if (st.rings[i].own >= 0)
            close(st.rings[i].own);
    event_log_free(&st.log);
    free(text);
    check_nothing_left();
    return 0;
}
