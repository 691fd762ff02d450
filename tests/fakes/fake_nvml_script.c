/* fake_nvml_script: reads the script of the fake NVML ($FAKE_NVML_SCRIPT; its directives are
 * listed at the top of fake_nvml.c) into the fake's state (fake_nvml.h), which the NVML
 * functions of fake_nvml.c replay. Not thread-safe, like the rest of the fake. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_nvml.h"

FAKE_INTERNAL struct fake_state fake;

static const char *const seq_keys[N_SEQ] = {
    "util", "mem_used", "power", "sm_clock", "mem_clock", "temp", "pcie_rx", "pcie_tx",
    "throttle", "procs", "gpm_sample", "gpm_graphics", "gpm_sm", "gpm_occupancy", "gpm_tensor",
    "gpm_dram", "gpm_fp64", "gpm_fp32", "gpm_fp16", "gpm_pcie_rx", "gpm_pcie_tx",
    "gpm_nvlink_rx", "gpm_nvlink_tx",
};

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

const char *fake_error_text(nvmlReturn_t rc)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].rc == rc)
            return errors[i].text;
    return "Unknown Error";
}

void fake_free_script(void)
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
    fake_free_script();
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
        d->sm_clock_max_rc = NVML_ERROR_NOT_SUPPORTED;
    }
    fake_reset_calls();
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

bool fake_parse_ull(const char *tok, unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(tok, &end, 0);
    return !errno && end != tok && !*end && *tok != '-';
}

static bool parse_double(const char *tok, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(tok, &end);
    return !errno && end != tok && !*end;
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
        else if (fake_parse_ull(e, &pid))
            p->pid = (unsigned int)pid;
        else
            return false;
        if (!strcmp(colon + 1, "NA"))
            p->bytes = NVML_VALUE_NOT_AVAILABLE;
        else if (!fake_parse_ull(colon + 1, &p->bytes))
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
    if (s == SEQ_GPM_SAMPLE)
        return !strcmp(tok, "OK");
    if (s >= SEQ_GPM_FIRST_METRIC)
        return parse_double(tok, &st->x);
    if (s == SEQ_UTIL) {
        char *slash = strchr(tok, '/');
        if (!slash)
            return false;
        *slash = '\0';
        return fake_parse_ull(tok, &st->a) && fake_parse_ull(slash + 1, &st->b);
    }
    return fake_parse_ull(tok, &st->a);
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
    if (!fake_parse_ull(arg, &g))
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
    if (!strcmp(key, "gpm")) {
        if (!strcmp(val, "0") || !strcmp(val, "1")) {
            d->gpm = val[0] == '1';
            return true;
        }
        return (d->gpm_rc = parse_error(val)) >= 0;
    }
    if (!strcmp(key, "sm_clock_max")) {
        if (!strncmp(val, "ERR_", 4))
            return (d->sm_clock_max_rc = parse_error(val)) >= 0;
        if (!fake_parse_ull(val, &v) || v > 1000000)
            return false;
        d->sm_clock_max_mhz = (unsigned int)v;
        d->sm_clock_max_rc = NVML_SUCCESS;
        return true;
    }
    if (!strcmp(key, "mem_total"))
        return fake_parse_ull(val, &d->mem_total);
    if (!strcmp(key, "pcie_delay_us")) {
        if (!fake_parse_ull(val, &v) || v > 10000000)
            return false;
        d->pcie_delay_us = (unsigned int)v;
        return true;
    }
    if (!strcmp(key, "cc")) {
        char *minor = next_word(&p);
        if (!minor || !fake_parse_ull(val, &v) || !fake_parse_ull(minor, &v2) || v > 99 || v2 > 99)
            return false;
        d->cc_major = (int)v;
        d->cc_minor = (int)v2;
        return true;
    }
    return false;
}

/* Reads $FAKE_NVML_SCRIPT; NVML_SUCCESS or the scripted nvmlInit error. */
nvmlReturn_t fake_load_script(void)
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
