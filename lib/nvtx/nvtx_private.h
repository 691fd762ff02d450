/* nvtx_private.h: what the files of libmlbench_nvtx share (see nvtx_inject.c for the library):
 * the NVTX injection ABI, the event a call names, the process-wide state set up at
 * initialisation, and the functions one file calls in another. Everything here is hidden
 * (the library is built with -fvisibility=hidden and a version script): the only export is
 * InitializeInjectionNvtx2.
 *
 *   nvtx_inject.c  the entry points NVTX calls, their tables, initialisation
 *   nvtx_name.c    marker names from NVTX messages; domains, registered strings, categories
 *   nvtx_range.c   push/pop and start/end ranges turned into B/E markers
 */
#ifndef MLBENCH_NVTX_PRIVATE_H
#define MLBENCH_NVTX_PRIVATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
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

/* ---- Names ---- */

/* The longest header of an event, "K <t_ns> <pid> <tid> " (20 + 10 + 10 digits at most), and
 * the longest stage name that fits beside it in one datagram. */
#define HEADER_MAX 45
#define NAME_CAP (MLBENCH_MARKER_MAX_EVENT - HEADER_MAX)

/* What an NVTX call gave to name its event. */
struct message {
    enum abi_message_type type;
    union abi_message_value v;
    uint32_t category;
};

/* ---- Process-wide state (nvtx_inject.c) ---- */

extern pthread_mutex_t g_lock; /* the lists of nvtx_name.c and the range table of nvtx_range.c */
extern pthread_key_t g_stack_key; /* its destructor frees a thread's stack when it exits */
extern pid_t g_pid;               /* getpid(); refreshed in forked children */

/* realloc, or a message and abort() when memory is out: the one allocation policy. */
void *nvtx_xrealloc(void *p, size_t size);
/* gettid() of the calling thread, read once per thread (and again in a forked child). */
pid_t nvtx_thread_id(void);

/* ---- Names (nvtx_name.c) ---- */

/* Writes the stage name of an event in domain d (NULL: global) into out (NAME_CAP + 1 bytes):
 * "<domain>:" for a named domain, then the message; without a message, the name of its
 * category, else "nvtx". Returns the length, at least 1; out is NUL-terminated. */
size_t nvtx_event_name(char *out, const struct nvtx_domain *d, const struct message *m);
/* The message of an Ex call's attributes; a NULL or too short structure gives none. */
struct message nvtx_attr_message(const struct abi_event_attributes *a);
/* The domain named by m, created on first use and kept until exit; NULL (the global domain)
 * for an empty name. Takes g_lock. */
struct nvtx_domain *nvtx_domain_create(const struct message *m);
/* A new registered string, kept until exit. Takes g_lock. */
const struct nvtx_string *nvtx_string_register(const struct message *m);
/* Names category id of domain d (NULL: global); an empty name is ignored. Takes g_lock. */
void nvtx_category_set(const struct nvtx_domain *d, uint32_t id, const struct message *m);

/* ---- Ranges (nvtx_range.c) ---- */

/* Push: B on this thread; returns the range's 0-based level within domain d. */
int nvtx_range_push(const struct nvtx_domain *d, const struct message *m);
/* Pop: E for the innermost range of domain d on this thread; its level, or -1 when none. */
int nvtx_range_pop(const struct nvtx_domain *d);
/* Start: B on this thread; returns the range's id (never 0). Takes g_lock. */
uint64_t nvtx_range_start(const struct nvtx_domain *d, const struct message *m);
/* End: E for range id on the thread that started it (reported once when unknown). */
void nvtx_range_end(uint64_t id);
/* g_stack_key's destructor: frees a thread's stack of push/pop ranges. */
void nvtx_thread_stack_free(void *p);

#endif
