/* fuzz_store_ref: the store's reference resolver ("latest", an id, a label, a unique id
 * prefix, or a file path). A store is made once with four results (two sharing a label, ids
 * sharing prefixes); each input, up to its first NUL, is resolved by store_load (what show,
 * compare and report call) and store_find_stored (what rm calls), and read as a --store value
 * by store_where (a directory, a PostgreSQL connection string, or refused). A reference that
 * resolves to a stored result must name it: be latest (latest~N the right one), its id, its
 * label or a prefix of its id. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "store/store.h"
#include "util/log.h"

struct stored {
    const char *id, *label;
    char path[300];
};

static struct stored results[] = {
    {"20260101T000000-aaaaaa", "base", ""},
    {"20260101T000001-aaaabb", "base", ""},
    {"20260102T000000-bbbbbb", "cand", ""},
    {"20260103T000000-b%_*?'", "a label with spaces", ""},
};
#define N_RESULTS (sizeof results / sizeof *results)

static char store_dir[256];
static struct store *store;

static void setup(void)
{
    log_set_quiet(1);
    snprintf(store_dir, sizeof store_dir, "%s/store", fuzz_tmpdir());
    char runs[300], err[1024];
    snprintf(runs, sizeof runs, "%s/runs", store_dir);
    if (mkdir(store_dir, 0700) < 0 || mkdir(runs, 0700) < 0)
        abort();
    for (size_t i = 0; i < N_RESULTS; i++) {
        struct stored *r = &results[i];
        snprintf(r->path, sizeof r->path, "%s/%s.json", runs, r->id);
        FILE *f = fopen(r->path, "w");
        if (!f)
            abort();
        fprintf(f, "{\"schema\":\"mlbench.result/1\",\"id\":\"%s\",\"label\":\"%s\","
                "\"created\":\"2026-01-0%zuT00:00:00Z\",\"command\":[\"true\"],"
                "\"status\":\"complete\",\"runs\":[],\"summary\":{}}", r->id, r->label, i + 1);
        if (fclose(f) != 0 || store_record(store_dir, r->path, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "fuzz_store_ref: %s\n", err);
            abort();
        }
    }
    if (!(store = store_open(store_dir, err, sizeof err))) {
        fprintf(stderr, "fuzz_store_ref: %s\n", err);
        abort();
    }
}

/* Whether ref may name result r. */
/* latest~N: the result N before the newest (results[] is in created order). */
static bool names_back(const char *ref, const struct stored *r)
{
    if (strncmp(ref, "latest~", 7) != 0 || !ref[7] ||
        strspn(ref + 7, "0123456789") != strlen(ref + 7))
        return false;
    unsigned long back = strtoul(ref + 7, NULL, 10);
    return back < N_RESULTS && r == &results[N_RESULTS - 1 - back];
}

static bool names(const char *ref, const struct stored *r)
{
    return !strcmp(ref, "latest") || !strcmp(ref, r->id) || !strcmp(ref, r->label) ||
           !strncmp(ref, r->id, strlen(ref)) || names_back(ref, r);
}

static void check(const char *ref, const char *id, const char *path)
{
    for (size_t i = 0; i < N_RESULTS; i++) {
        const struct stored *r = &results[i];
        if ((id && !strcmp(id, r->id)) || (path && strstr(path, r->id))) {
            if (!names(ref, r)) {
                fprintf(stderr, "fuzz_store_ref: '%s' resolved to %s\n", ref, r->id);
                abort();
            }
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!store)
        setup();
    char *ref = malloc(size + 1);
    if (!ref)
        abort();
    memcpy(ref, data, size);
    ref[size] = '\0';
    bool is_path = strchr(ref, '/') || (strlen(ref) >= 5 && !strcmp(ref + strlen(ref) - 5, ".json"));
    char err[1024] = "", *path = NULL, *id = NULL;
    /* the same input as a --store value: a directory, a connection string, or refused with
     * a reason; never both */
    char *shown = NULL;
    int kind = store_where(ref, &shown, err, sizeof err);
    if (kind < -1 || kind > 1 || (kind >= 0) != (shown != NULL) || (kind < 0 && !err[0]))
        abort();
    free(shown);
    err[0] = '\0';
    json_t *doc = store_load(store_dir, ref, &path, err, sizeof err);
    if (doc) {
        if (!path)
            abort();
        if (!is_path)
            check(ref, NULL, path);
    } else if (!err[0] || path) {
        abort(); /* a refusal says why and returns nothing */
    }
    json_decref(doc);
    free(path);
    err[0] = '\0';
    if (store_find_stored(store, ref, &id, err, sizeof err) == 0) {
        if (!id)
            abort();
        if (!is_path)
            check(ref, id, NULL);
    } else if (!err[0] || id) {
        abort();
    }
    free(id);
    free(ref);
    return 0;
}
