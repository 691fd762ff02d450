/* libmlbench_nvtx: an NVTX injection library that turns a program's NVTX annotations into
 * mlbench stage markers, with no change to the program (docs/nvtx.md).
 *
 * NVTX (the NVTX v3 headers compiled into a program or a library) loads the library named by
 * NVTX_INJECTION64_PATH on the first NVTX call of each NVTX instance and calls its one export,
 * InitializeInjectionNvtx2(), with a function that returns NVTX's export tables. Through them
 * this library fills NVTX's tables of implementation pointers for the core API (marks, ranges,
 * categories) and the domain API ("core2"), so that every such NVTX call lands here:
 *   push/pop ranges   -> B/E on the calling thread; pop carries no name, so a per-thread stack
 *                        keeps the names (one stack per domain, as NVTX specifies);
 *   start/end ranges  -> B at start; E at end with the starting thread's pid and tid (the
 *                        protocol pairs B and E per thread), sent as a raw datagram when
 *                        another thread ends the range;
 *   marks             -> I (instant).
 * Events go through libmlbench_marker (linked in, hidden). Outside mlbench
 * (MLBENCH_MARKER_SOCKET unset or unreachable) initialisation declines, and NVTX turns every
 * call back into a no-op.
 *
 * The injection ABI is declared here (abi_* below) rather than taken from the CUDA toolkit's
 * headers, so the library builds without CUDA; when the build finds the headers it defines
 * MLBENCH_NVTX_ABI_CHECK and the declarations are checked against them at compile time.
 *
 * Thread-safe: per-thread stacks need no lock; domains, categories, registered strings and
 * start/end ranges share one mutex, held only for list and table updates.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "mlbench/marker.h"

/* ---- The NVTX injection ABI (what the NVTX headers compile into every program) ---- */

typedef void (*abi_fn)(void); /* an implementation pointer of any type, cast back by NVTX */
typedef const void *(*abi_get_export_table_fn)(uint32_t table_id);

enum abi_export_table { ABI_ETID_CALLBACKS = 1, ABI_ETID_VERSIONINFO = 3 };
#define ABI_NVTX_VERSION 3 /* the API version this library implements */

/* Modules of implementation pointers (the enum is int-sized in the ABI). */
enum abi_module { ABI_MODULE_CORE = 1, ABI_MODULE_CORE2 = 5, ABI_MODULE_FORCE_INT = 0x7fffffff };

/* Slots of the core module. */
enum abi_core {
    ABI_CORE_MARK_EX = 1, ABI_CORE_MARK_A, ABI_CORE_MARK_W,
    ABI_CORE_RANGE_START_EX, ABI_CORE_RANGE_START_A, ABI_CORE_RANGE_START_W, ABI_CORE_RANGE_END,
    ABI_CORE_RANGE_PUSH_EX, ABI_CORE_RANGE_PUSH_A, ABI_CORE_RANGE_PUSH_W, ABI_CORE_RANGE_POP,
    ABI_CORE_NAME_CATEGORY_A, ABI_CORE_NAME_CATEGORY_W,
    ABI_CORE_SIZE = 16 /* NameOsThreadA/W (14, 15) stay NVTX no-ops: thread names are not stages */
};

/* Slots of the domain ("core2") module. */
enum abi_core2 {
    ABI_CORE2_MARK_EX = 1, ABI_CORE2_RANGE_START_EX, ABI_CORE2_RANGE_END,
    ABI_CORE2_RANGE_PUSH_EX, ABI_CORE2_RANGE_POP,
    ABI_CORE2_NAME_CATEGORY_A = 8, ABI_CORE2_NAME_CATEGORY_W,
    ABI_CORE2_REGISTER_STRING_A, ABI_CORE2_REGISTER_STRING_W,
    ABI_CORE2_CREATE_A, ABI_CORE2_CREATE_W, ABI_CORE2_DESTROY, ABI_CORE2_INITIALIZE,
    ABI_CORE2_SIZE /* ResourceCreate/Destroy (6, 7) stay NVTX no-ops: resources are not stages */
};

enum abi_message_type { ABI_MESSAGE_NONE = 0, ABI_MESSAGE_ASCII, ABI_MESSAGE_UNICODE,
                        ABI_MESSAGE_REGISTERED };

struct abi_callbacks {
    size_t struct_size;
    int (*get_module_function_table)(enum abi_module module, abi_fn ***table,
                                     unsigned int *size);
};

struct abi_version_info {
    size_t struct_size;
    /* cppcheck-suppress unusedStructMember */
    uint32_t unused[2]; /* the program's NVTX version; reserved */
    void (*set_injection_version)(uint32_t version);
};

struct nvtx_domain;
struct nvtx_string;

/* nvtxMessageValue_t: which member is valid depends on the message type. */
union abi_message_value {
    const char *ascii;
    const wchar_t *unicode;
    const struct nvtx_string *registered;
};

/* nvtxEventAttributes_t (versions 1 and 2 share this layout; `size` says how much is valid). */
struct abi_event_attributes {
    /* cppcheck-suppress unusedStructMember */
    uint16_t version;
    uint16_t size;
    uint32_t category;
    /* cppcheck-suppress unusedStructMember */
    uint32_t unused[6]; /* colour type, colour, payload type, reserved, payload (8 bytes) */
    int32_t message_type;
    union abi_message_value message;
};

#ifdef MLBENCH_NVTX_ABI_CHECK
/* The build found the NVTX headers: check the declarations above against them. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#define ABI_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " differs from the NVTX headers")
ABI_SAME(ABI_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
ABI_SAME(ABI_ETID_VERSIONINFO, NVTX_ETID_VERSIONINFO);
ABI_SAME(ABI_NVTX_VERSION, NVTX_VERSION);
ABI_SAME(ABI_MODULE_CORE, NVTX_CB_MODULE_CORE);
ABI_SAME(ABI_MODULE_CORE2, NVTX_CB_MODULE_CORE2);
ABI_SAME(ABI_CORE_MARK_EX, NVTX_CBID_CORE_MarkEx);
ABI_SAME(ABI_CORE_RANGE_START_W, NVTX_CBID_CORE_RangeStartW);
ABI_SAME(ABI_CORE_RANGE_END, NVTX_CBID_CORE_RangeEnd);
ABI_SAME(ABI_CORE_RANGE_POP, NVTX_CBID_CORE_RangePop);
ABI_SAME(ABI_CORE_NAME_CATEGORY_W, NVTX_CBID_CORE_NameCategoryW);
ABI_SAME(ABI_CORE_SIZE, NVTX_CBID_CORE_SIZE);
ABI_SAME(ABI_CORE2_MARK_EX, NVTX_CBID_CORE2_DomainMarkEx);
ABI_SAME(ABI_CORE2_RANGE_POP, NVTX_CBID_CORE2_DomainRangePop);
ABI_SAME(ABI_CORE2_NAME_CATEGORY_A, NVTX_CBID_CORE2_DomainNameCategoryA);
ABI_SAME(ABI_CORE2_CREATE_W, NVTX_CBID_CORE2_DomainCreateW);
ABI_SAME(ABI_CORE2_INITIALIZE, NVTX_CBID_CORE2_Initialize);
ABI_SAME(ABI_CORE2_SIZE, NVTX_CBID_CORE2_SIZE);
ABI_SAME(ABI_MESSAGE_ASCII, NVTX_MESSAGE_TYPE_ASCII);
ABI_SAME(ABI_MESSAGE_UNICODE, NVTX_MESSAGE_TYPE_UNICODE);
ABI_SAME(ABI_MESSAGE_REGISTERED, NVTX_MESSAGE_TYPE_REGISTERED);
ABI_SAME(sizeof(enum abi_module), sizeof(NvtxCallbackModule));
ABI_SAME(sizeof(struct abi_callbacks), sizeof(NvtxExportTableCallbacks));
ABI_SAME(offsetof(struct abi_callbacks, get_module_function_table),
         offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable));
ABI_SAME(sizeof(struct abi_version_info), sizeof(NvtxExportTableVersionInfo));
ABI_SAME(offsetof(struct abi_version_info, set_injection_version),
         offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion));
ABI_SAME(sizeof(struct abi_event_attributes), sizeof(nvtxEventAttributes_t));
ABI_SAME(offsetof(struct abi_event_attributes, category),
         offsetof(nvtxEventAttributes_t, category));
ABI_SAME(offsetof(struct abi_event_attributes, message_type),
         offsetof(nvtxEventAttributes_t, messageType));
ABI_SAME(offsetof(struct abi_event_attributes, message), offsetof(nvtxEventAttributes_t, message));
ABI_SAME(sizeof(uint64_t), sizeof(nvtxRangeId_t));
#endif

/* ---- Names ---- */

/* The longest header of an event, "K <t_ns> <pid> <tid> " (20 + 10 + 10 digits at most), and
 * the longest stage name that fits beside it in one datagram. */
#define HEADER_MAX 45
#define NAME_CAP (MLBENCH_MARKER_MAX_EVENT - HEADER_MAX)
#define DOMAIN_PREFIX_CAP 256 /* bytes of a domain name kept in the prefix */
#define INVALID_CHAR '?'      /* stands for input that is not valid UTF-8/UTF-16/UTF-32 */
#define FALLBACK_NAME "nvtx"  /* an event without a message nor a named category */

struct nvtx_domain {
    struct nvtx_domain *next;
    size_t prefix_len;
    char prefix[]; /* the domain's name as a marker name, then ':' */
};

struct nvtx_string { /* a registered string: the handle NVTX gives back to the program */
    struct nvtx_string *next;
    size_t len;
    char name[]; /* as a marker name */
};

struct category {
    struct category *next;
    const struct nvtx_domain *domain; /* NULL: the global domain */
    uint32_t id;
    size_t len;
    char name[]; /* as a marker name */
};

/* What an NVTX call gave to name its event. */
struct message {
    enum abi_message_type type;
    union abi_message_value v;
    uint32_t category;
};

/* A name being built in a buffer of at least `cap` + 1 bytes. */
struct name_buf {
    char *s;
    size_t len, cap;
};

static int is_space_or_control(uint32_t cp)
{
    if (cp <= 0x20 || (cp >= 0x7f && cp <= 0xa0))
        return 1; /* C0 and C1 controls, space, DEL, no-break space */
    return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Appends code point cp as UTF-8, white space and control characters as '_'. Returns 0, or
 * -1 when it does not fit: the name is cut before it, at a character boundary. */
static int name_put(struct name_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (is_space_or_control(cp)) {
        u[0] = '_';
        n = 1;
    } else if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    if (b->len + n > b->cap)
        return -1;
    memcpy(b->s + b->len, u, n);
    b->len += n;
    return 0;
}

/* Decodes the UTF-8 sequence at s (NUL-terminated) into *cp, INVALID_CHAR for a malformed one
 * (overlong, surrogate, beyond U+10FFFF, cut short); returns the bytes consumed (>= 1). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1fu, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07u, min = 0x10000;
    } else {
        *cp = INVALID_CHAR;
        return 1;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) { /* a NUL stops here too */
            *cp = INVALID_CHAR;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3fu);
    }
    *cp = (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) ? INVALID_CHAR : v;
    return n;
}

/* Appends a UTF-8 (NVTX says "ASCII") string as a marker name, cut to fit. */
static void name_add_utf8(struct name_buf *b, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s != '\0') {
        if (*s > 0x20 && *s < 0x7f) { /* the common case: printable ASCII */
            if (b->len == b->cap)
                return;
            b->s[b->len++] = (char)*s++;
            continue;
        }
        uint32_t cp;
        s += utf8_decode(s, &cp);
        if (name_put(b, cp) != 0)
            return;
    }
}

/* Appends a wide string (UTF-32 where wchar_t has 32 bits, as on Linux; UTF-16 otherwise) as
 * a marker name, cut to fit. */
static void name_add_wide(struct name_buf *b, const wchar_t *text)
{
    for (const wchar_t *w = text; *w != 0; w++) {
        uint32_t cp = (uint32_t)*w;
        if (sizeof(wchar_t) == 2 && cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t lo = (uint32_t)w[1];
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                w++;
            }
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            cp = INVALID_CHAR;
        if (name_put(b, cp) != 0)
            return;
    }
}

/* Appends n bytes of a name already clean (a prefix, a registered string), cut to fit at a
 * UTF-8 character boundary. */
static void name_add_clean(struct name_buf *b, const char *s, size_t n)
{
    if (n > b->cap - b->len) {
        n = b->cap - b->len;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
}

/* ---- Process-wide state ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* lists and range table below */
static struct nvtx_domain *g_domains;
static struct nvtx_string *g_strings;
static struct category *g_categories;

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_stack_key; /* its destructor frees a thread's stack when it exits */
static int g_init_failed;
static pid_t g_pid;               /* getpid(); refreshed in forked children */
static _Thread_local pid_t t_tid; /* gettid() of this thread; 0 = not read yet */

/* The one allocation policy: a tracing library cannot carry on without memory, and a silent
 * loss would leave stacks and ranges inconsistent, so it says why and aborts. */
static void *nvtx_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (q == NULL) {
        fprintf(stderr, "mlbench-nvtx: out of memory (%zu bytes) recording an NVTX event; "
                        "aborting\n", size);
        abort();
    }
    return q;
}

static pid_t thread_id(void)
{
    if (t_tid == 0)
        t_tid = (pid_t)syscall(SYS_gettid);
    return t_tid;
}

/* The name of category `id` of domain d as a marker name, copied into b; 0, or -1 when the
 * category has no name. The newest name given wins. */
static int category_name(struct name_buf *b, const struct nvtx_domain *d, uint32_t id)
{
    int found = -1;
    pthread_mutex_lock(&g_lock);
    for (const struct category *c = g_categories; c != NULL; c = c->next) {
        if (c->domain == d && c->id == id) {
            name_add_clean(b, c->name, c->len);
            found = 0;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return found;
}

/* Appends the text of message m (nothing for none or a NULL pointer). */
static void name_add_message(struct name_buf *b, const struct message *m)
{
    switch (m->type) {
    case ABI_MESSAGE_ASCII:
        if (m->v.ascii != NULL)
            name_add_utf8(b, m->v.ascii);
        break;
    case ABI_MESSAGE_UNICODE:
        if (m->v.unicode != NULL)
            name_add_wide(b, m->v.unicode);
        break;
    case ABI_MESSAGE_REGISTERED:
        if (m->v.registered != NULL)
            name_add_clean(b, m->v.registered->name, m->v.registered->len);
        break;
    default:
        break;
    }
}

/* Writes the text of message m as a marker name into out (cap + 1 bytes), NUL-terminated;
 * returns its length, 0 when the message is empty. For registrations. */
static size_t message_name(char *out, size_t cap, const struct message *m)
{
    struct name_buf b = {out, 0, cap};
    name_add_message(&b, m);
    out[b.len] = '\0';
    return b.len;
}

/* Writes the stage name of an event in domain d (NULL: global) into out (NAME_CAP + 1 bytes):
 * "<domain>:" for a named domain, then the message; without a message, the name of its
 * category, else FALLBACK_NAME. Returns the length, at least 1; out is NUL-terminated. */
static size_t event_name(char *out, const struct nvtx_domain *d, const struct message *m)
{
    struct name_buf b = {out, 0, NAME_CAP};
    if (d != NULL)
        name_add_clean(&b, d->prefix, d->prefix_len);
    size_t start = b.len;
    name_add_message(&b, m);
    if (b.len == start && (m->category == 0 || category_name(&b, d, m->category) != 0))
        name_add_clean(&b, FALLBACK_NAME, sizeof FALLBACK_NAME - 1);
    out[b.len] = '\0';
    return b.len;
}

/* The message of an Ex call's attributes; a NULL or too short structure gives none. */
static struct message attr_message(const struct abi_event_attributes *a)
{
    struct message m = {ABI_MESSAGE_NONE, {NULL}, 0};
    if (a == NULL)
        return m;
    if (a->size >= offsetof(struct abi_event_attributes, category) + sizeof a->category)
        m.category = a->category;
    if (a->size >= offsetof(struct abi_event_attributes, message) + sizeof a->message) {
        m.type = (enum abi_message_type)a->message_type;
        m.v = a->message;
    }
    return m;
}

/* ---- Push/pop ranges: a stack per thread, levels per domain ---- */

struct frame {
    const struct nvtx_domain *domain; /* NULL: the global domain */
    size_t off, len;                  /* the name, in the stack's names[] */
    int level;                        /* 0-based depth within its domain on this thread */
    pid_t pid;                        /* the process that pushed it (a forked child inherits
                                       * its parent's open ranges, but not their stages) */
};

struct thread_stack {
    struct frame *frames;
    size_t n, cap;
    char *names; /* the frames' names, NUL-terminated, in push order */
    size_t used, names_cap;
};

static _Thread_local struct thread_stack *t_stack;

static void thread_stack_free(void *p)
{
    struct thread_stack *ts = p;
    free(ts->frames);
    free(ts->names);
    free(ts);
    t_stack = NULL;
}

static struct thread_stack *thread_stack(void)
{
    if (t_stack == NULL) {
        t_stack = nvtx_xrealloc(NULL, sizeof *t_stack);
        memset(t_stack, 0, sizeof *t_stack);
        (void)pthread_setspecific(g_stack_key, t_stack); /* only frees it at thread exit */
    }
    return t_stack;
}

/* Push: B with the message's name; returns the range's 0-based level within domain d. */
static int range_push(const struct nvtx_domain *d, const struct message *m)
{
    struct thread_stack *ts = thread_stack();
    if (ts->names_cap - ts->used < NAME_CAP + 1) {
        ts->names_cap = ts->used + NAME_CAP + 1 + ts->names_cap;
        ts->names = nvtx_xrealloc(ts->names, ts->names_cap);
    }
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 16;
        ts->frames = nvtx_xrealloc(ts->frames, ts->cap * sizeof *ts->frames);
    }
    int level = 0;
    for (size_t i = ts->n; i-- > 0;) {
        if (ts->frames[i].domain == d) {
            level = ts->frames[i].level + 1;
            break;
        }
    }
    char *name = ts->names + ts->used;
    size_t len = event_name(name, d, m);
    ts->frames[ts->n++] = (struct frame){d, ts->used, len, level, g_pid};
    ts->used += len + 1;
    (void)mlb_stage_begin(name);
    return level;
}

/* Pop: E for the innermost range of domain d on this thread; returns its level, or -1 when
 * there is none (nothing is sent). A range a forked child inherited is popped silently: its
 * stage belongs to the parent's thread. */
static int range_pop(const struct nvtx_domain *d)
{
    struct thread_stack *ts = t_stack;
    if (ts == NULL)
        return -1;
    size_t i = ts->n;
    while (i > 0 && ts->frames[i - 1].domain != d)
        i--;
    if (i == 0)
        return -1;
    struct frame f = ts->frames[--i];
    if (f.pid == g_pid)
        (void)mlb_stage_end(ts->names + f.off);
    if (i + 1 < ts->n) {
        /* Another domain's ranges are open above it: close the gap it leaves. */
        size_t gap = f.len + 1;
        memmove(ts->names + f.off, ts->names + f.off + gap, ts->used - f.off - gap);
        memmove(&ts->frames[i], &ts->frames[i + 1], (ts->n - i - 1) * sizeof *ts->frames);
        for (size_t j = i; j < ts->n - 1; j++)
            ts->frames[j].off -= gap;
    }
    ts->n--;
    ts->used -= f.len + 1;
    return f.level;
}

/* ---- Start/end ranges: a table of open ranges by id ---- */

struct range {
    struct range *next;
    uint64_t id;
    pid_t pid, tid; /* the thread that started it: its E must carry them */
    char name[];
};

static struct range **g_range_buckets; /* chained hash table, by id; under g_lock */
static size_t g_range_mask, g_range_count;
static atomic_uint_fast64_t g_next_range_id = 1; /* 0 means "no range" to NVTX */
static atomic_flag g_unknown_reported = ATOMIC_FLAG_INIT;

/* The marker library pairs B and E on its caller's thread; an E for a range started by another
 * thread is formatted here and sent on a socket of this library's own. */
static pthread_once_t g_raw_once = PTHREAD_ONCE_INIT;
static int g_raw_fd = -1;

static void raw_open(void)
{
    const char *path = getenv(MLBENCH_MARKER_SOCKET_ENV);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (path == NULL || strlen(path) >= sizeof addr.sun_path)
        return; /* cannot happen: the marker library connected to it */
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        fprintf(stderr, "mlbench-nvtx: cannot connect to %s: ranges ended on another thread "
                        "than the one that started them are lost\n", path);
    g_raw_fd = fd;
}

/* Sends "E <now> <pid> <tid> <name>" for the thread (pid, tid). */
static void send_end_as(pid_t pid, pid_t tid, const char *name)
{
    pthread_once(&g_raw_once, raw_open);
    if (g_raw_fd < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char buf[MLBENCH_MARKER_MAX_EVENT + 1];
    int n = snprintf(buf, sizeof buf, "E %llu %ld %ld %s",
                     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                     (long)pid, (long)tid, name);
    if (n < 0 || n > MLBENCH_MARKER_MAX_EVENT)
        return; /* cannot happen: names are at most NAME_CAP bytes */
    while (send(g_raw_fd, buf, (size_t)n, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* Inserts r; g_lock held. */
static void range_insert(struct range *r)
{
    if (g_range_count >= g_range_mask) { /* also on the first call: mask 0 */
        size_t nb = g_range_mask ? 2 * (g_range_mask + 1) : 64;
        struct range **nt = nvtx_xrealloc(NULL, nb * sizeof *nt);
        memset(nt, 0, nb * sizeof *nt);
        for (size_t i = 0; g_range_buckets != NULL && i <= g_range_mask; i++) {
            for (struct range *x = g_range_buckets[i], *next; x != NULL; x = next) {
                next = x->next;
                x->next = nt[x->id & (nb - 1)];
                nt[x->id & (nb - 1)] = x;
            }
        }
        free(g_range_buckets);
        g_range_buckets = nt;
        g_range_mask = nb - 1;
    }
    struct range **head = &g_range_buckets[r->id & g_range_mask];
    r->next = *head;
    *head = r;
    g_range_count++;
}

/* Removes and returns the range `id`, or NULL; g_lock held. */
static struct range *range_remove(uint64_t id)
{
    if (g_range_buckets == NULL)
        return NULL;
    for (struct range **p = &g_range_buckets[id & g_range_mask]; *p != NULL; p = &(*p)->next) {
        if ((*p)->id == id) {
            struct range *r = *p;
            *p = r->next;
            g_range_count--;
            return r;
        }
    }
    return NULL;
}

/* Start: B on this thread; returns the range's id (never 0). */
static uint64_t range_start(const struct nvtx_domain *d, const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = event_name(name, d, m);
    struct range *r = nvtx_xrealloc(NULL, sizeof *r + len + 1);
    uint64_t id = atomic_fetch_add_explicit(&g_next_range_id, 1, memory_order_relaxed);
    r->id = id;
    r->pid = g_pid;
    r->tid = thread_id();
    memcpy(r->name, name, len + 1);
    /* B goes out before the id is returned, so before any thread can end the range (and r is
     * not read once it is in the table: another thread may end it and free it). */
    (void)mlb_stage_begin(name);
    pthread_mutex_lock(&g_lock);
    range_insert(r);
    pthread_mutex_unlock(&g_lock);
    return id;
}

/* End: E for the range, on the thread that started it. A forked child ending a range its
 * parent started sends nothing: the parent's span is the parent's to end. */
static void range_end(uint64_t id)
{
    pthread_mutex_lock(&g_lock);
    struct range *r = range_remove(id);
    pthread_mutex_unlock(&g_lock);
    if (r == NULL) {
        if (!atomic_flag_test_and_set(&g_unknown_reported))
            fprintf(stderr, "mlbench-nvtx: nvtxRangeEnd of unknown range id %llu (ended twice, "
                            "or never started): ignored (reported once per process)\n",
                    (unsigned long long)id);
        return;
    }
    if (r->pid == g_pid && r->tid == thread_id())
        (void)mlb_stage_end(r->name);
    else if (r->pid == g_pid)
        send_end_as(r->pid, r->tid, r->name);
    free(r);
}

/* ---- Domains, registered strings, categories ---- */

/* The domain named by message m, created on first use: one handle per name, kept until the
 * process exits (nvtxDomainDestroy is a no-op). A domain without a name is the global domain,
 * the NULL handle. */
static struct nvtx_domain *domain_create(const struct message *m)
{
    char prefix[DOMAIN_PREFIX_CAP + 1];
    size_t len = message_name(prefix, DOMAIN_PREFIX_CAP - 1, m); /* leaves room for the ':' */
    if (len == 0)
        return NULL;
    prefix[len++] = ':';
    pthread_mutex_lock(&g_lock);
    struct nvtx_domain *d = g_domains;
    while (d != NULL && (d->prefix_len != len || memcmp(d->prefix, prefix, len) != 0))
        d = d->next;
    if (d == NULL) {
        d = nvtx_xrealloc(NULL, sizeof *d + len + 1);
        d->prefix_len = len;
        memcpy(d->prefix, prefix, len);
        d->prefix[len] = '\0';
        d->next = g_domains;
        g_domains = d;
    }
    pthread_mutex_unlock(&g_lock);
    return d;
}

/* A registered string: kept until the process exits, as NVTX specifies. Its domain is applied
 * where it is used. */
static const struct nvtx_string *string_register(const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = message_name(name, NAME_CAP, m);
    struct nvtx_string *s = nvtx_xrealloc(NULL, sizeof *s + len + 1);
    s->len = len;
    memcpy(s->name, name, len + 1);
    pthread_mutex_lock(&g_lock);
    s->next = g_strings;
    g_strings = s;
    pthread_mutex_unlock(&g_lock);
    return s;
}

/* Names category `id` of domain d (NULL: global); an empty name is ignored. */
static void category_set(const struct nvtx_domain *d, uint32_t id, const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = message_name(name, NAME_CAP, m);
    if (len == 0)
        return;
    struct category *c = nvtx_xrealloc(NULL, sizeof *c + len + 1);
    c->domain = d;
    c->id = id;
    c->len = len;
    memcpy(c->name, name, len + 1);
    pthread_mutex_lock(&g_lock);
    c->next = g_categories; /* first in the list: the newest name wins */
    g_categories = c;
    pthread_mutex_unlock(&g_lock);
}

/* ---- The NVTX entry points (signatures as NVTX calls them) ---- */

#define MSG_A(s) (&(struct message){ABI_MESSAGE_ASCII, {.ascii = (s)}, 0})
#define MSG_W(s) (&(struct message){ABI_MESSAGE_UNICODE, {.unicode = (s)}, 0})

static void nvtx_mark(const struct nvtx_domain *d, const struct message *m)
{
    char name[NAME_CAP + 1];
    event_name(name, d, m);
    (void)mlb_instant(name);
}

static void cb_mark_ex(const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    nvtx_mark(NULL, &m);
}
static void cb_mark_a(const char *s) { nvtx_mark(NULL, MSG_A(s)); }
static void cb_mark_w(const wchar_t *s) { nvtx_mark(NULL, MSG_W(s)); }

static uint64_t cb_start_ex(const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    return range_start(NULL, &m);
}
static uint64_t cb_start_a(const char *s) { return range_start(NULL, MSG_A(s)); }
static uint64_t cb_start_w(const wchar_t *s) { return range_start(NULL, MSG_W(s)); }
static void cb_end(uint64_t id) { range_end(id); }

static int cb_push_ex(const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    return range_push(NULL, &m);
}
static int cb_push_a(const char *s) { return range_push(NULL, MSG_A(s)); }
static int cb_push_w(const wchar_t *s) { return range_push(NULL, MSG_W(s)); }
static int cb_pop(void) { return range_pop(NULL); }

static void cb_domain_name_category_a(const struct nvtx_domain *d, uint32_t id, const char *s)
{
    category_set(d, id, MSG_A(s));
}
static void cb_domain_name_category_w(const struct nvtx_domain *d, uint32_t id, const wchar_t *s)
{
    category_set(d, id, MSG_W(s));
}
static void cb_name_category_a(uint32_t id, const char *s) { category_set(NULL, id, MSG_A(s)); }
static void cb_name_category_w(uint32_t id, const wchar_t *s)
{
    category_set(NULL, id, MSG_W(s));
}

static void cb_domain_mark_ex(const struct nvtx_domain *d, const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    nvtx_mark(d, &m);
}
static uint64_t cb_domain_start_ex(const struct nvtx_domain *d,
                                   const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    return range_start(d, &m);
}
static void cb_domain_end(const struct nvtx_domain *d, uint64_t id)
{
    (void)d; /* ids are unique across domains */
    range_end(id);
}
static int cb_domain_push_ex(const struct nvtx_domain *d, const struct abi_event_attributes *a)
{
    struct message m = attr_message(a);
    return range_push(d, &m);
}
static int cb_domain_pop(const struct nvtx_domain *d) { return range_pop(d); }

static const struct nvtx_string *cb_register_string_a(const struct nvtx_domain *d, const char *s)
{
    (void)d;
    return string_register(MSG_A(s));
}
static const struct nvtx_string *cb_register_string_w(const struct nvtx_domain *d,
                                                       const wchar_t *s)
{
    (void)d;
    return string_register(MSG_W(s));
}
static struct nvtx_domain *cb_domain_create_a(const char *s) { return domain_create(MSG_A(s)); }
static struct nvtx_domain *cb_domain_create_w(const wchar_t *s) { return domain_create(MSG_W(s)); }
static void cb_domain_destroy(struct nvtx_domain *d) { (void)d; }
static void cb_initialize(const void *reserved) { (void)reserved; }

/* NVTX's slots filled by this library, by module and callback id. */
static const abi_fn g_core[ABI_CORE_SIZE] = {
    [ABI_CORE_MARK_EX] = (abi_fn)cb_mark_ex,
    [ABI_CORE_MARK_A] = (abi_fn)cb_mark_a,
    [ABI_CORE_MARK_W] = (abi_fn)cb_mark_w,
    [ABI_CORE_RANGE_START_EX] = (abi_fn)cb_start_ex,
    [ABI_CORE_RANGE_START_A] = (abi_fn)cb_start_a,
    [ABI_CORE_RANGE_START_W] = (abi_fn)cb_start_w,
    [ABI_CORE_RANGE_END] = (abi_fn)cb_end,
    [ABI_CORE_RANGE_PUSH_EX] = (abi_fn)cb_push_ex,
    [ABI_CORE_RANGE_PUSH_A] = (abi_fn)cb_push_a,
    [ABI_CORE_RANGE_PUSH_W] = (abi_fn)cb_push_w,
    [ABI_CORE_RANGE_POP] = (abi_fn)cb_pop,
    [ABI_CORE_NAME_CATEGORY_A] = (abi_fn)cb_name_category_a,
    [ABI_CORE_NAME_CATEGORY_W] = (abi_fn)cb_name_category_w,
};

static const abi_fn g_core2[ABI_CORE2_SIZE] = {
    [ABI_CORE2_MARK_EX] = (abi_fn)cb_domain_mark_ex,
    [ABI_CORE2_RANGE_START_EX] = (abi_fn)cb_domain_start_ex,
    [ABI_CORE2_RANGE_END] = (abi_fn)cb_domain_end,
    [ABI_CORE2_RANGE_PUSH_EX] = (abi_fn)cb_domain_push_ex,
    [ABI_CORE2_RANGE_POP] = (abi_fn)cb_domain_pop,
    [ABI_CORE2_NAME_CATEGORY_A] = (abi_fn)cb_domain_name_category_a,
    [ABI_CORE2_NAME_CATEGORY_W] = (abi_fn)cb_domain_name_category_w,
    [ABI_CORE2_REGISTER_STRING_A] = (abi_fn)cb_register_string_a,
    [ABI_CORE2_REGISTER_STRING_W] = (abi_fn)cb_register_string_w,
    [ABI_CORE2_CREATE_A] = (abi_fn)cb_domain_create_a,
    [ABI_CORE2_CREATE_W] = (abi_fn)cb_domain_create_w,
    [ABI_CORE2_DESTROY] = (abi_fn)cb_domain_destroy,
    [ABI_CORE2_INITIALIZE] = (abi_fn)cb_initialize,
};

/* ---- Initialisation ---- */

/* fork() while another thread holds g_lock would leave it locked forever in the child. */
static void atfork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_lock); }
static void atfork_child(void)
{
    pthread_mutex_unlock(&g_lock);
    g_pid = getpid();
    t_tid = 0;
}

static void init_once(void)
{
    g_pid = getpid();
    g_init_failed = pthread_key_create(&g_stack_key, thread_stack_free) != 0 ||
                    pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0;
    if (g_init_failed)
        fprintf(stderr, "mlbench-nvtx: cannot set up thread-local state; NVTX ranges are not "
                        "recorded\n");
}

/* Points NVTX's slots of `module` at the functions of impl[] (n entries). Returns 0, or -1
 * when NVTX does not have the module. */
static int attach(const struct abi_callbacks *cb, enum abi_module module, const abi_fn *impl,
                  unsigned int n)
{
    abi_fn **table = NULL;
    unsigned int size = 0;
    if (!cb->get_module_function_table(module, &table, &size) || table == NULL)
        return -1;
    for (unsigned int i = 1; i < size && i < n; i++)
        if (impl[i] != NULL && table[i] != NULL)
            *table[i] = impl[i];
    return 0;
}

/* The entry point NVTX looks up (each NVTX instance of the process calls it once: the
 * program's, and those of libraries built with their own copy of the headers). Returns 1 when
 * the calls are attached, 0 to decline: NVTX then unloads the library and every call is a
 * no-op. It declines outside mlbench (no marker socket). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    abi_get_export_table_fn get_export_table);

int InitializeInjectionNvtx2(abi_get_export_table_fn get_export_table)
{
    if (get_export_table == NULL || !mlb_enabled())
        return 0;
    pthread_once(&g_init_once, init_once);
    if (g_init_failed)
        return 0;
    const struct abi_callbacks *cb = get_export_table(ABI_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof *cb || cb->get_module_function_table == NULL)
        return 0;
    if (attach(cb, ABI_MODULE_CORE, g_core, ABI_CORE_SIZE) != 0)
        return 0;
    (void)attach(cb, ABI_MODULE_CORE2, g_core2, ABI_CORE2_SIZE); /* absent before NVTX 2 */
    const struct abi_version_info *vi = get_export_table(ABI_ETID_VERSIONINFO);
    if (vi != NULL && vi->struct_size >= sizeof *vi && vi->set_injection_version != NULL)
        vi->set_injection_version(ABI_NVTX_VERSION);
    return 1;
}
