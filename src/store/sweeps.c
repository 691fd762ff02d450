/* sweeps: sweep documents in a store (see sweeps.h). */
#include "store/sweeps.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/sweep.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define SWEEP_REF_PREFIX "sweep:"

bool store_is_sweep_ref(const char *ref)
{
    return !strcmp(ref, "latest-sweep") ||
           !strncmp(ref, SWEEP_REF_PREFIX, strlen(SWEEP_REF_PREFIX));
}

/* An id as sweeps have them: letters, digits, '-' and 'T' only (no path). */
static bool plain_id(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              *s == '-'))
            return false;
    return true;
}

/* The file of the sweep whose id is id, starts with it (prefix), or the newest (id NULL). */
static char *find_sweep(const char *store_dir, const char *id, char *err, size_t errlen)
{
    char *dir = xasprintf("%s/%s", store_dir, STORE_SWEEPS_DIR);
    DIR *d = opendir(dir);
    char *best = NULL;
    size_t matches = 0;
    char other[256] = "";
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
                continue;
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
            if (id && !strcmp(name, id)) { /* exact wins over prefixes */
                free(best);
                best = xstrdup(name);
                matches = 1;
                break;
            }
            if (id && strncmp(name, id, strlen(id)))
                continue;
            matches++;
            if (!best || strcmp(name, best) > 0) {
                if (best)
                    snprintf(other, sizeof other, "%.200s", best);
                free(best);
                best = xstrdup(name);
            } else {
                snprintf(other, sizeof other, "%.200s", name);
            }
        }
        closedir(d);
    }
    char *path = NULL;
    if (!best && id)
        snprintf(err, errlen, "no sweep '%s' in the store %s (see ls %s)", id, store_dir, dir);
    else if (!best)
        snprintf(err, errlen, "no sweep in the store %s yet (run mlbench sweep)", store_dir);
    else if (id && matches > 1)
        snprintf(err, errlen, "ambiguous sweep prefix '%s' matches %s and %s: give more of the id",
                 id, best, other);
    else
        path = xasprintf("%s/%s.json", dir, best);
    free(best);
    free(dir);
    return path;
}

json_t *store_sweep_load(const char *store_dir, const char *ref, char **path_out, char *err,
                         size_t errlen)
{
    *path_out = NULL;
    char *path;
    if (!strcmp(ref, "latest-sweep")) {
        path = find_sweep(store_dir, NULL, err, errlen);
    } else if (!strncmp(ref, SWEEP_REF_PREFIX, strlen(SWEEP_REF_PREFIX))) {
        const char *id = ref + strlen(SWEEP_REF_PREFIX);
        if (!plain_id(id)) {
            snprintf(err, errlen, "'%.200s' is not sweep:ID (an id as mlbench sweep prints it, "
                     "or a unique prefix)", ref);
            return NULL;
        }
        path = find_sweep(store_dir, id, err, errlen);
    } else {
        path = xstrdup(ref);
    }
    if (!path)
        return NULL;
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        snprintf(err, errlen, "%s: line %d, column %d: %s", path, je.line, je.column, je.text);
        free(path);
        return NULL;
    }
    struct doc_sweep *view = doc_sweep_read(doc);
    const char *schema = view->schema;
    bool is_sweep = schema && !strcmp(schema, DOC_SWEEP_SCHEMA) && view->has_points;
    if (!is_sweep)
        snprintf(err, errlen, "%s is not a sweep document (schema %s with points expected, "
                 "found %.60s)", path, DOC_SWEEP_SCHEMA, schema ? schema : "none");
    doc_sweep_free(view);
    if (!is_sweep) {
        json_decref(doc);
        free(path);
        return NULL;
    }
    *path_out = path;
    return doc;
}

/* Whether a stored relative path stays inside the store: no absolute path, no "..". */
static bool inside(const char *rel)
{
    if (!*rel || rel[0] == '/')
        return false;
    for (const char *p = rel; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += len;
        while (*p == '/')
            p++;
    }
    return true;
}

int store_sweep_results(const json_t *sweep, const char *sweep_path, const char *store_dir,
                        const char *reference, char ***paths, const char ***names, size_t *n,
                        char *err, size_t errlen)
{
    *paths = NULL;
    *names = NULL;
    *n = 0;
    /* The store: the parent of the sweeps/ directory the file is in ("st/sweeps/x.json": st);
     * a file kept elsewhere (-o FILE) belongs to store_dir. */
    char *base = xstrdup(sweep_path);
    char *slash = strrchr(base, '/');
    char *up = NULL;
    if (slash) {
        *slash = '\0';
        up = strrchr(base, '/');
    }
    if (slash && !strcmp(up ? up + 1 : base, STORE_SWEEPS_DIR)) {
        if (up)
            *up = '\0';
        else
            snprintf(base, strlen(base) + 1, ".");
    } else {
        free(base);
        base = xstrdup(store_dir);
    }
    struct doc_sweep *view = doc_sweep_read(sweep);
    size_t count = view->n_points;
    char **p = xcalloc(count + 1, sizeof *p);
    const char **nm = xcalloc(count + 1, sizeof *nm);
    size_t k = 0;
    long ref_at = -1;
    struct strbuf all = STRBUF_INIT;
    for (size_t i = 0; i < count; i++) {
        const char *rel = view->points[i].result_path;
        const char *name = view->points[i].name;
        if (!rel)
            continue;
        if (!inside(rel)) { /* an edited file: that point is left out, the others count */
            log_warn("%s: point %zu's result_path '%.200s' leaves the store (the file was "
                     "edited?): left out", sweep_path, i, rel);
            continue;
        }
        if (reference && name && !strcmp(name, reference))
            ref_at = (long)k;
        if (all.len < 400)
            strbuf_printf(&all, "%s'%s'", all.len ? ", " : "", name ? name : "?");
        p[k] = xasprintf("%s/%s", base, rel);
        nm[k++] = name ? name : "?";
    }
    if (reference && ref_at < 0) {
        snprintf(err, errlen, "--reference '%.200s' names no point of the sweep with a result "
                 "(%s%s)", reference, all.len ? "they are " : "none has one", all.s);
        goto fail;
    }
    if (ref_at > 0) { /* the reference first, the others in their order */
        char *rp = p[ref_at];
        const char *rn = nm[ref_at];
        memmove(p + 1, p, (size_t)ref_at * sizeof *p);
        memmove(nm + 1, nm, (size_t)ref_at * sizeof *nm);
        p[0] = rp;
        nm[0] = rn;
    }
    strbuf_free(&all);
    free(base);
    doc_sweep_free(view);
    *paths = p;
    *names = nm;
    *n = k;
    return 0;
fail:
    for (size_t j = 0; j < k; j++)
        free(p[j]);
    free(p);
    free(nm);
    strbuf_free(&all);
    free(base);
    doc_sweep_free(view);
    return -1;
}
