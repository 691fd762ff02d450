/* fake_nvml: a stand-in for libnvidia-ml.so.1 that replays scripted answers, so that the nvml
 * metric source (src/sources/nvml.c) is tested on machines without a GPU. It exports the NVML
 * functions mlbench looks up, with the prototypes of src/sources/nvml_abi.h. Built twice
 * (tests/fakes/CMakeLists.txt): libfake_nvml.so exports them all; libfake_nvml_minimal.so
 * (FAKE_NVML_MINIMAL) only what an old driver has: no PCIe, no nvmlDeviceGetTemperatureV, no
 * ClocksEventReasons, no _v2 symbols and only the legacy process list layout.
 *
 * nvmlInit reads the script named by $FAKE_NVML_SCRIPT (when no other init is in force), one
 * directive a line, '#' starts a comment, G is a GPU index:
 *   init ERR_x                 nvmlInit answers this error
 *   count ERR_x                nvmlDeviceGetCount answers this error
 *   devices N                  N GPUs (default 1, at most 8)
 *   count_says N               nvmlDeviceGetCount says N whatever exists (a broken library)
 *   driver VERSION             nvmlSystemGetDriverVersion
 *   name G TEXT...             defaults "Fake GPU G"; uuid G TEXT: "GPU-fake-G"
 *   cc G MAJOR MINOR           default 9 0
 *   mem_total G BYTES          default 80 GiB
 *   handle G ERR_x             nvmlDeviceGetHandleByIndex(G) answers this error
 *   pcie_delay_us G US         each PCIe call sleeps this long (the real one takes ~20 ms)
 *   QUERY G STEP...            the answers of QUERY on G, one per call, the last repeated
 * QUERY: util (STEP gpu%/mem%, e.g. 80/30), mem_used (bytes; free = total - used), power (mW),
 * sm_clock, mem_clock (MHz), temp (C), pcie_rx, pcie_tx (KB/s), throttle (mask), procs (STEP:
 * PID:BYTES[,PID:BYTES...] or - for none; PID SELF is the caller's pid, CHILD its child process
 * at the time of the call (the workload mlbench is running: integration tests), BYTES NA is
 * NVML_VALUE_NOT_AVAILABLE). Any STEP may be ERR_<NAME> (ERR_UNKNOWN, ERR_NOT_SUPPORTED, ...:
 * that error, once) or LOST (NVML_ERROR_GPU_IS_LOST, and every later call on that GPU too).
 * A query with no script answers NVML_ERROR_NOT_SUPPORTED. Every call takes the next step,
 * whoever makes it: the nvml source calls nvmlDeviceGetMemoryInfo once when it opens (for the
 * total), so the first mem_used step is taken then. A process list too small for the step is
 * answered NVML_ERROR_INSUFFICIENT_SIZE and the step stays for the next call.
 *
 * fake_nvml_calls(NAME) tells how often the NVML function NAME was called since the script was
 * last read. Not thread-safe: one test thread at a time. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sources/nvml_abi.h"

#define FAKE_MAX_GPUS 8

enum seq {
    SEQ_UTIL,
    SEQ_MEM,
    SEQ_POWER,
    SEQ_SM_CLOCK,
    SEQ_MEM_CLOCK,
    SEQ_TEMP,
    SEQ_PCIE_RX,
    SEQ_PCIE_TX,
    SEQ_THROTTLE,
    SEQ_PROCS,
    N_SEQ
};

static const char *const seq_keys[N_SEQ] = {
    "util", "mem_used", "power", "sm_clock", "mem_clock",
    "temp", "pcie_rx", "pcie_tx", "throttle", "procs",
};

struct proc {
    bool child;               /* CHILD: the caller's child, looked up at each call */
    unsigned int pid;
    unsigned long long bytes;
};

/* One scripted answer. */
struct step {
    nvmlReturn_t rc;
    bool lose;                /* LOST: the GPU is gone from this call on */
    unsigned long long a, b;  /* the value; util: a = gpu %, b = memory % */
    struct proc *procs;       /* procs: the list */
    unsigned int n_procs;
};

struct sequence {
    struct step *steps;
    size_t n, next;
};

/* The fake's device: nvmlDevice_t points to one. */
struct nvmlDevice_st {
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    int cc_major, cc_minor;
    unsigned long long mem_total;
    nvmlReturn_t handle_rc;
    unsigned int pcie_delay_us;
    bool lost;
    struct sequence seq[N_SEQ];
};

static struct {
    int inits; /* nvmlInit minus nvmlShutdown: NVML counts references */
    nvmlReturn_t init_rc, count_rc;
    unsigned int n_gpus;
    long long count_says;  /* >= 0: what nvmlDeviceGetCount answers instead of n_gpus */
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    struct nvmlDevice_st gpu[FAKE_MAX_GPUS];
} fake;

/* Calls per function since the script was read. */
static struct {
    const char *name;
    unsigned long n;
} calls[48];

static void count_call(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        if (!calls[i].name)
            calls[i].name = name;
        if (!strcmp(calls[i].name, name)) {
            calls[i].n++;
            return;
        }
    }
}

unsigned long fake_nvml_calls(const char *name);
unsigned long fake_nvml_calls(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0] && calls[i].name; i++)
        if (!strcmp(calls[i].name, name))
            return calls[i].n;
    return 0;
}

static const struct {
    const char *token, *text;
    nvmlReturn_t rc;
} errors[] = {
    {"SUCCESS", "Success", NVML_SUCCESS},
    {"UNINITIALIZED", "Uninitialized", NVML_ERROR_UNINITIALIZED},
    {"INVALID_ARGUMENT", "Invalid Argument", NVML_ERROR_INVALID_ARGUMENT},
    {"NOT_SUPPORTED", "Not Supported", NVML_ERROR_NOT_SUPPORTED},
    {"NO_PERMISSION", "Insufficient Permissions", NVML_ERROR_NO_PERMISSION},
    {"NOT_FOUND", "Not Found", NVML_ERROR_NOT_FOUND},
    {"INSUFFICIENT_SIZE", "Insufficient Size", NVML_ERROR_INSUFFICIENT_SIZE},
    {"DRIVER_NOT_LOADED", "Driver Not Loaded", NVML_ERROR_DRIVER_NOT_LOADED},
    {"TIMEOUT", "Timeout", NVML_ERROR_TIMEOUT},
    {"LIBRARY_NOT_FOUND", "NVML Shared Library Not Found", NVML_ERROR_LIBRARY_NOT_FOUND},
    {"FUNCTION_NOT_FOUND", "Function Not Found", NVML_ERROR_FUNCTION_NOT_FOUND},
    {"GPU_IS_LOST", "GPU is lost", NVML_ERROR_GPU_IS_LOST},
    {"RESET_REQUIRED", "GPU requires reset", NVML_ERROR_RESET_REQUIRED},
    {"MEMORY", "Insufficient Memory", NVML_ERROR_MEMORY},
    {"NO_DATA", "No data", NVML_ERROR_NO_DATA},
    {"ARGUMENT_VERSION_MISMATCH", "Argument version mismatch",
     NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
    {"DEPRECATED", "Deprecated", NVML_ERROR_DEPRECATED},
    {"UNKNOWN", "Unknown Error", NVML_ERROR_UNKNOWN},
};

/* ---- the script ---- */

static void free_script(void)
{
    for (unsigned int g = 0; g < FAKE_MAX_GPUS; g++)
        for (int s = 0; s < N_SEQ; s++) {
            struct sequence *q = &fake.gpu[g].seq[s];
            for (size_t i = 0; i < q->n; i++)
                free(q->steps[i].procs);
            free(q->steps);
        }
    memset(&fake, 0, sizeof fake);
}

static void default_script(void)
{
    free_script();
    fake.n_gpus = 1;
    fake.count_says = -1;
    snprintf(fake.driver, sizeof fake.driver, "999.0.fake");
    for (unsigned int g = 0; g < FAKE_MAX_GPUS; g++) {
        struct nvmlDevice_st *d = &fake.gpu[g];
        snprintf(d->name, sizeof d->name, "Fake GPU %u", g);
        snprintf(d->uuid, sizeof d->uuid, "GPU-fake-%u", g);
        d->cc_major = 9;
        d->cc_minor = 0;
        d->mem_total = 80ULL << 30;
    }
    memset(calls, 0, sizeof calls);
}

/* ERR_<NAME> → its code; -1 when tok is not one. */
static nvmlReturn_t parse_error(const char *tok)
{
    if (strncmp(tok, "ERR_", 4))
        return -1;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (!strcmp(tok + 4, errors[i].token))
            return errors[i].rc;
    return -1;
}

static bool parse_ull(const char *tok, unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(tok, &end, 0);
    return !errno && end != tok && !*end && *tok != '-';
}

/* "SELF:1048576,1234:NA" or "-". */
static bool parse_procs(char *tok, struct step *st)
{
    if (!strcmp(tok, "-"))
        return true;
    size_t n = 1;
    for (const char *c = tok; *c; c++)
        n += *c == ',';
    st->procs = calloc(n, sizeof *st->procs);
    if (!st->procs)
        return false;
    char *save = NULL;
    for (char *e = strtok_r(tok, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(e, ':');
        if (!colon)
            return false;
        *colon = '\0';
        struct proc *p = &st->procs[st->n_procs++];
        unsigned long long pid;
        if (!strcmp(e, "SELF"))
            p->pid = (unsigned int)getpid();
        else if (!strcmp(e, "CHILD"))
            p->child = true;
        else if (parse_ull(e, &pid))
            p->pid = (unsigned int)pid;
        else
            return false;
        if (!strcmp(colon + 1, "NA"))
            p->bytes = NVML_VALUE_NOT_AVAILABLE;
        else if (!parse_ull(colon + 1, &p->bytes))
            return false;
    }
    return true;
}

static bool parse_step(enum seq s, char *tok, struct step *st)
{
    memset(st, 0, sizeof *st);
    if (!strcmp(tok, "LOST")) {
        st->rc = NVML_ERROR_GPU_IS_LOST;
        st->lose = true;
        return true;
    }
    if (!strncmp(tok, "ERR_", 4))
        return (st->rc = parse_error(tok)) >= 0;
    if (s == SEQ_PROCS)
        return parse_procs(tok, st);
    if (s == SEQ_UTIL) {
        char *slash = strchr(tok, '/');
        if (!slash)
            return false;
        *slash = '\0';
        return parse_ull(tok, &st->a) && parse_ull(slash + 1, &st->b);
    }
    return parse_ull(tok, &st->a);
}

/* The next blank-separated word of *p (NUL-terminated in place), or NULL at the end. */
static char *next_word(char **p)
{
    char *w = *p + strspn(*p, " \t\r\n");
    if (!*w)
        return NULL;
    char *end = w + strcspn(w, " \t\r\n");
    *p = *end ? end + 1 : end;
    *end = '\0';
    return w;
}

/* The answers of one query on one GPU, appended to its sequence. */
static bool parse_sequence(struct sequence *q, enum seq s, char *p)
{
    char *tok = next_word(&p);
    if (!tok)
        return false;
    for (; tok; tok = next_word(&p)) {
        struct step *grown = realloc(q->steps, (q->n + 1) * sizeof *q->steps);
        if (!grown)
            return false;
        q->steps = grown;
        if (!parse_step(s, tok, &q->steps[q->n++]))
            return false;
    }
    return true;
}

/* One line of the script; false when it is not understood. */
static bool parse_line(char *line)
{
    line[strcspn(line, "#\r\n")] = '\0';
    char *p = line;
    char *key = next_word(&p);
    if (!key)
        return true;
    char *arg = next_word(&p);
    if (!arg)
        return false;
    if (!strcmp(key, "init"))
        return (fake.init_rc = parse_error(arg)) >= 0;
    if (!strcmp(key, "count"))
        return (fake.count_rc = parse_error(arg)) >= 0;
    if (!strcmp(key, "driver")) {
        snprintf(fake.driver, sizeof fake.driver, "%s", arg);
        return true;
    }
    unsigned long long g;
    if (!parse_ull(arg, &g))
        return false;
    if (!strcmp(key, "devices")) {
        fake.n_gpus = (unsigned int)g;
        return g <= FAKE_MAX_GPUS;
    }
    if (!strcmp(key, "count_says")) {
        fake.count_says = (long long)(unsigned int)g;
        return g <= 0xffffffffull;
    }
    if (g >= FAKE_MAX_GPUS)
        return false;
    struct nvmlDevice_st *d = &fake.gpu[g];
    p += strspn(p, " \t");
    if (!strcmp(key, "name")) {
        snprintf(d->name, sizeof d->name, "%s", p);
        return true;
    }
    if (!strcmp(key, "uuid")) {
        snprintf(d->uuid, sizeof d->uuid, "%s", p);
        return true;
    }
    for (int s = 0; s < N_SEQ; s++)
        if (!strcmp(key, seq_keys[s]))
            return parse_sequence(&d->seq[s], (enum seq)s, p);
    char *val = next_word(&p);
    unsigned long long v, v2;
    if (!val)
        return false;
    if (!strcmp(key, "handle"))
        return (d->handle_rc = parse_error(val)) >= 0;
    if (!strcmp(key, "mem_total"))
        return parse_ull(val, &d->mem_total);
    if (!strcmp(key, "pcie_delay_us")) {
        if (!parse_ull(val, &v) || v > 10000000)
            return false;
        d->pcie_delay_us = (unsigned int)v;
        return true;
    }
    if (!strcmp(key, "cc")) {
        char *minor = next_word(&p);
        if (!minor || !parse_ull(val, &v) || !parse_ull(minor, &v2) || v > 99 || v2 > 99)
            return false;
        d->cc_major = (int)v;
        d->cc_minor = (int)v2;
        return true;
    }
    return false;
}

/* Reads $FAKE_NVML_SCRIPT; NVML_SUCCESS or the scripted nvmlInit error. */
static nvmlReturn_t load_script(void)
{
    default_script();
    const char *path = getenv("FAKE_NVML_SCRIPT");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        fprintf(stderr, "fake_nvml: cannot read the script FAKE_NVML_SCRIPT=%s\n",
                path ? path : "(unset)");
        return NVML_ERROR_UNKNOWN;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    nvmlReturn_t rc = NVML_SUCCESS;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (!parse_line(line)) {
            fprintf(stderr, "fake_nvml: %s:%d: not understood\n", path, lineno);
            rc = NVML_ERROR_UNKNOWN;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc != NVML_SUCCESS ? rc : fake.init_rc;
}

/* ---- the NVML functions ---- */

/* Checks that NVML is initialised and dev is one of the fake's GPUs. */
static nvmlReturn_t check(nvmlDevice_t dev)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    for (unsigned int i = 0; i < fake.n_gpus; i++)
        if (dev == &fake.gpu[i])
            return dev->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* The current step of a query on dev, or NULL with *rc the answer when there is no value. */
static const struct step *peek(nvmlDevice_t dev, enum seq s, nvmlReturn_t *rc)
{
    if ((*rc = check(dev)) != NVML_SUCCESS)
        return NULL;
    const struct sequence *q = &dev->seq[s];
    if (q->n == 0) {
        *rc = NVML_ERROR_NOT_SUPPORTED;
        return NULL;
    }
    const struct step *st = &q->steps[q->next < q->n ? q->next : q->n - 1];
    if (st->lose)
        dev->lost = true;
    *rc = st->rc;
    return st->rc == NVML_SUCCESS ? st : NULL;
}

static void advance(nvmlDevice_t dev, enum seq s)
{
    struct sequence *q = &dev->seq[s];
    if (q->next < q->n)
        q->next++;
}

/* Takes the next step of a query: peek, then advance. */
static const struct step *take(nvmlDevice_t dev, enum seq s, nvmlReturn_t *rc)
{
    const struct step *st = peek(dev, s, rc);
    if (*rc != NVML_ERROR_UNINITIALIZED && *rc != NVML_ERROR_INVALID_ARGUMENT)
        advance(dev, s);
    return st;
}

static nvmlReturn_t init(void)
{
    if (fake.inits > 0) {
        fake.inits++;
        return NVML_SUCCESS;
    }
    nvmlReturn_t rc = load_script();
    if (rc == NVML_SUCCESS)
        fake.inits = 1;
    return rc;
}

#ifndef FAKE_NVML_MINIMAL
nvml_init_fn nvmlInit_v2;
nvmlReturn_t nvmlInit_v2(void)
{
    nvmlReturn_t rc = init();
    count_call(__func__);
    return rc;
}
#endif

nvml_init_fn nvmlInit;
nvmlReturn_t nvmlInit(void)
{
    nvmlReturn_t rc = init();
    count_call(__func__);
    return rc;
}

nvml_shutdown_fn nvmlShutdown;
nvmlReturn_t nvmlShutdown(void)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (--fake.inits == 0)
        free_script();
    return NVML_SUCCESS;
}

nvml_error_string_fn nvmlErrorString;
const char *nvmlErrorString(nvmlReturn_t result)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].rc == result)
            return errors[i].text;
    return "Unknown Error";
}

static nvmlReturn_t device_count(unsigned int *count)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (fake.count_rc != NVML_SUCCESS)
        return fake.count_rc;
    *count = fake.count_says >= 0 ? (unsigned int)fake.count_says : fake.n_gpus;
    return NVML_SUCCESS;
}

static nvmlReturn_t device_handle(unsigned int index, nvmlDevice_t *device)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= fake.n_gpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fake.gpu[index].handle_rc != NVML_SUCCESS)
        return fake.gpu[index].handle_rc;
    *device = &fake.gpu[index];
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_MINIMAL
nvml_count_fn nvmlDeviceGetCount_v2;
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    count_call(__func__);
    return device_count(count);
}

nvml_handle_fn nvmlDeviceGetHandleByIndex_v2;
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    count_call(__func__);
    return device_handle(index, device);
}
#endif

nvml_count_fn nvmlDeviceGetCount;
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
    count_call(__func__);
    return device_count(count);
}

nvml_handle_fn nvmlDeviceGetHandleByIndex;
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    count_call(__func__);
    return device_handle(index, device);
}

nvml_driver_version_fn nvmlSystemGetDriverVersion;
nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (len <= strlen(fake.driver))
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", fake.driver);
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(nvmlDevice_t device, char *buf, unsigned int len, const char *s)
{
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    if (len <= strlen(s))
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", s);
    return NVML_SUCCESS;
}

nvml_string_fn nvmlDeviceGetName;
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    count_call(__func__);
    return copy_string(device, name, length, check(device) ? "" : device->name);
}

nvml_string_fn nvmlDeviceGetUUID;
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    count_call(__func__);
    return copy_string(device, uuid, length, check(device) ? "" : device->uuid);
}

nvml_cc_fn nvmlDeviceGetCudaComputeCapability;
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc == NVML_SUCCESS) {
        *major = device->cc_major;
        *minor = device->cc_minor;
    }
    return rc;
}

nvml_memory_fn nvmlDeviceGetMemoryInfo;
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    const struct step *st = take(device, SEQ_MEM, &rc);
    if (st)
        *memory = (nvmlMemory_t){device->mem_total, device->mem_total - st->a, st->a};
    return rc;
}

nvml_utilization_fn nvmlDeviceGetUtilizationRates;
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *util)
{
    count_call(__func__);
    nvmlReturn_t rc;
    const struct step *st = take(device, SEQ_UTIL, &rc);
    if (st)
        *util = (nvmlUtilization_t){(unsigned int)st->a, (unsigned int)st->b};
    return rc;
}

/* A query whose answer is one unsigned number. */
static nvmlReturn_t take_uint(nvmlDevice_t device, enum seq s, unsigned int *value)
{
    nvmlReturn_t rc;
    const struct step *st = take(device, s, &rc);
    if (st)
        *value = (unsigned int)st->a;
    return rc;
}

nvml_uint_fn nvmlDeviceGetPowerUsage;
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    count_call(__func__);
    return take_uint(device, SEQ_POWER, power);
}

nvml_query_fn nvmlDeviceGetClockInfo;
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    count_call(__func__);
    if (type != NVML_CLOCK_SM && type != NVML_CLOCK_MEM)
        return NVML_ERROR_NOT_SUPPORTED;
    return take_uint(device, type == NVML_CLOCK_SM ? SEQ_SM_CLOCK : SEQ_MEM_CLOCK, clock);
}

nvml_query_fn nvmlDeviceGetTemperature;
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp)
{
    count_call(__func__);
    if (sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    return take_uint(device, SEQ_TEMP, temp);
}

static nvmlReturn_t take_reasons(nvmlDevice_t device, unsigned long long *reasons)
{
    nvmlReturn_t rc;
    const struct step *st = take(device, SEQ_THROTTLE, &rc);
    if (st)
        *reasons = st->a;
    return rc;
}

nvml_reasons_fn nvmlDeviceGetCurrentClocksThrottleReasons;
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
    count_call(__func__);
    return take_reasons(device, reasons);
}

/* A child process of the caller (the first found in /proc), or 0. */
static unsigned int first_child(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    unsigned int found = 0;
    while (d && !found && (e = readdir(d))) {
        char path[300], buf[512];
        unsigned long long pid;
        if (!parse_ull(e->d_name, &pid))
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            const char *close = strrchr(buf, ')');
            int ppid;
            if (close && sscanf(close + 2, "%*c %d", &ppid) == 1 && ppid == getpid())
                found = (unsigned int)pid;
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* Copies the current process list into infos (v1: legacy layout) when count is enough. */
static nvmlReturn_t take_procs(nvmlDevice_t device, unsigned int *count, void *infos, bool v1)
{
    nvmlReturn_t rc;
    const struct step *st = peek(device, SEQ_PROCS, &rc);
    if (!st) {
        if (rc != NVML_ERROR_UNINITIALIZED && rc != NVML_ERROR_INVALID_ARGUMENT)
            advance(device, SEQ_PROCS);
        return rc;
    }
    if (*count < st->n_procs) {
        *count = st->n_procs; /* not consumed: the caller asks again with more room */
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < st->n_procs; i++) {
        unsigned int pid = st->procs[i].child ? first_child() : st->procs[i].pid;
        if (v1)
            ((nvmlProcessInfo_v1_t *)infos)[i] = (nvmlProcessInfo_v1_t){pid, st->procs[i].bytes};
        else
            ((nvmlProcessInfo_v2_t *)infos)[i] =
                (nvmlProcessInfo_v2_t){pid, st->procs[i].bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
    }
    *count = st->n_procs;
    advance(device, SEQ_PROCS);
    return NVML_SUCCESS;
}

nvml_procs_v1_fn nvmlDeviceGetComputeRunningProcesses;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, true);
}

#ifndef FAKE_NVML_MINIMAL
nvml_procs_v2_fn nvmlDeviceGetComputeRunningProcesses_v2;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_v2_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, false);
}

nvml_procs_v2_fn nvmlDeviceGetComputeRunningProcesses_v3;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_v2_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, false);
}

nvml_reasons_fn nvmlDeviceGetCurrentClocksEventReasons;
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    count_call(__func__);
    return take_reasons(device, reasons);
}

nvml_temperature_v_fn nvmlDeviceGetTemperatureV;
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temp)
{
    count_call(__func__);
    if (temp->version != NVML_TEMPERATURE_V1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temp->sensorType != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int celsius;
    nvmlReturn_t rc = take_uint(device, SEQ_TEMP, &celsius);
    if (rc == NVML_SUCCESS)
        temp->temperature = (int)celsius;
    return rc;
}

nvml_query_fn nvmlDeviceGetPcieThroughput;
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int *value)
{
    count_call(__func__);
    if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (check(device) == NVML_SUCCESS && device->pcie_delay_us) {
        struct timespec ts = {0, (long)device->pcie_delay_us * 1000};
        ts.tv_sec = ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return take_uint(device, counter == NVML_PCIE_UTIL_TX_BYTES ? SEQ_PCIE_TX : SEQ_PCIE_RX,
                     value);
}
#endif
