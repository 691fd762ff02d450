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
 * The injection ABI is declared in nvtx_private.h (abi_*) rather than taken from the CUDA
 * toolkit's headers, so the library builds without CUDA; when the build finds the headers it
 * defines MLBENCH_NVTX_ABI_CHECK and the declarations are checked against them at compile time
 * (below).
 *
 * Thread-safe: per-thread stacks need no lock; domains, categories, registered strings and
 * start/end ranges share one mutex, held only for list and table updates.
 *
 * This file holds the entry points NVTX calls and initialisation; nvtx_name.c makes the marker
 * names, nvtx_range.c the ranges; nvtx_private.h declares the ABI and what they share.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <wchar.h>

#include "mlbench/marker.h"
#include "nvtx_private.h"

#ifdef MLBENCH_NVTX_ABI_CHECK
/* The build found the NVTX headers: check the declarations of nvtx_private.h against them. */
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

/* ---- Process-wide state ---- */

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* lists and range table */

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
pthread_key_t g_stack_key; /* its destructor frees a thread's stack when it exits */
static int g_init_failed;
pid_t g_pid;               /* getpid(); refreshed in forked children */
static _Thread_local pid_t t_tid; /* gettid() of this thread; 0 = not read yet */

/* The one allocation policy: a tracing library cannot carry on without memory, and a silent
 * loss would leave stacks and ranges inconsistent, so it says why and aborts. */
void *nvtx_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (q == NULL) {
        fprintf(stderr, "mlbench-nvtx: out of memory (%zu bytes) recording an NVTX event; "
                        "aborting\n", size);
        abort();
    }
    return q;
}

pid_t nvtx_thread_id(void)
{
    if (t_tid == 0)
        t_tid = (pid_t)syscall(SYS_gettid);
    return t_tid;
}

/* ---- The NVTX entry points (signatures as NVTX calls them) ---- */

#define MSG_A(s) (&(struct message){ABI_MESSAGE_ASCII, {.ascii = (s)}, 0})
#define MSG_W(s) (&(struct message){ABI_MESSAGE_UNICODE, {.unicode = (s)}, 0})

static void nvtx_mark(const struct nvtx_domain *d, const struct message *m)
{
    char name[NAME_CAP + 1];
    nvtx_event_name(name, d, m);
    (void)mlb_instant(name);
}

static void cb_mark_ex(const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    nvtx_mark(NULL, &m);
}
static void cb_mark_a(const char *s) { nvtx_mark(NULL, MSG_A(s)); }
static void cb_mark_w(const wchar_t *s) { nvtx_mark(NULL, MSG_W(s)); }

static uint64_t cb_start_ex(const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    return nvtx_range_start(NULL, &m);
}
uint64_t cb_start_a(const char *s) { return nvtx_range_start(NULL, MSG_A(s)); }
uint64_t cb_start_w(const wchar_t *s) { return nvtx_range_start(NULL, MSG_W(s)); }
void cb_end(uint64_t id) { nvtx_range_end(id); }

static int cb_push_ex(const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    return nvtx_range_push(NULL, &m);
}
int cb_push_a(const char *s) { return nvtx_range_push(NULL, MSG_A(s)); }
int cb_push_w(const wchar_t *s) { return nvtx_range_push(NULL, MSG_W(s)); }
int cb_pop(void) { return nvtx_range_pop(NULL); }

static void cb_domain_name_category_a(const struct nvtx_domain *d, uint32_t id, const char *s)
{
    nvtx_category_set(d, id, MSG_A(s));
}
static void cb_domain_name_category_w(const struct nvtx_domain *d, uint32_t id, const wchar_t *s)
{
    nvtx_category_set(d, id, MSG_W(s));
}
void cb_name_category_a(uint32_t id, const char *s) { nvtx_category_set(NULL, id, MSG_A(s)); }
static void cb_name_category_w(uint32_t id, const wchar_t *s)
{
    nvtx_category_set(NULL, id, MSG_W(s));
}

static void cb_domain_mark_ex(const struct nvtx_domain *d, const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    nvtx_mark(d, &m);
}
static uint64_t cb_domain_start_ex(const struct nvtx_domain *d,
                                   const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    return nvtx_range_start(d, &m);
}
static void cb_domain_end(const struct nvtx_domain *d, uint64_t id)
{
    (void)d; /* ids are unique across domains */
    nvtx_range_end(id);
}
static int cb_domain_push_ex(const struct nvtx_domain *d, const struct abi_event_attributes *a)
{
    struct message m = nvtx_attr_message(a);
    return nvtx_range_push(d, &m);
}
int cb_domain_pop(const struct nvtx_domain *d) { return nvtx_range_pop(d); }

static const struct nvtx_string *cb_register_string_a(const struct nvtx_domain *d, const char *s)
{
    (void)d;
    return nvtx_string_register(MSG_A(s));
}
static const struct nvtx_string *cb_register_string_w(const struct nvtx_domain *d,
                                                       const wchar_t *s)
{
    (void)d;
    return nvtx_string_register(MSG_W(s));
}
struct nvtx_domain *cb_domain_create_a(const char *s) { return nvtx_domain_create(MSG_A(s)); }
struct nvtx_domain *cb_domain_create_w(const wchar_t *s) { return nvtx_domain_create(MSG_W(s)); }
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
    g_init_failed = pthread_key_create(&g_stack_key, nvtx_thread_stack_free) != 0 ||
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
