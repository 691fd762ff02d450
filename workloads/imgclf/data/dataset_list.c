/* dataset_list: lists a prepared dataset, the .jpg files in <dir>/<split>/<class>, sorted by
 * class then name, with readdir only (no stat per file), into struct dataset_split
 * (dataset_private.h: ds_list_all, ds_split_free). */
#include "imgclf/data/dataset_private.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with_jpg(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && name[0] != '.' && !strcmp(name + n - 4, ".jpg");
}

/* Appends the *.jpg files of <dir>/<split>/<class> (sorted by name) to out; a missing class
 * folder adds nothing (the count check then catches it). readdir only: no stat per file. */
static int list_class(const char *dir, int split, const char *cls, int label,
                      struct dataset_split *out, int *cap, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/%s", dir, ds_split_names[split], cls);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT)
            return DATASET_OK;
        ds_err(err, errlen, "cannot list '%s': %s", path, strerror(errno));
        return DATASET_IO_ERROR;
    }
    int first = out->count, rc = DATASET_OK;
    struct dirent *de;
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (!de) {
            if (errno) {
                ds_err(err, errlen, "cannot list '%s': %s", path, strerror(errno));
                rc = DATASET_IO_ERROR;
            }
            break;
        }
        if (!ends_with_jpg(de->d_name) ||
            (de->d_type != DT_REG && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN))
            continue;
        if (out->count == *cap) {
            int ncap = *cap ? *cap * 2 : 1024;
            char **np = realloc(out->paths, (size_t)ncap * sizeof *np);
            if (np)
                out->paths = np;
            int *nl = np ? realloc(out->labels, (size_t)ncap * sizeof *nl) : NULL;
            if (nl)
                out->labels = nl;
            if (!np || !nl) {
                rc = DATASET_IO_ERROR;
                ds_err(err, errlen, "out of memory listing '%s'", path);
                break;
            }
            *cap = ncap;
        }
        /* the bare name for now: sorted, then made absolute below */
        char *name = strdup(de->d_name);
        if (!name) {
            rc = DATASET_IO_ERROR;
            ds_err(err, errlen, "out of memory listing '%s'", path);
            break;
        }
        out->paths[out->count] = name;
        out->labels[out->count++] = label;
    }
    closedir(d);
    qsort(out->paths + first, (size_t)(out->count - first), sizeof *out->paths, cmp_str);
    for (int i = first; rc == DATASET_OK && i < out->count; i++) {
        char *full = ds_asprintf("%s/%s", path, out->paths[i]);
        if (!full) {
            ds_err(err, errlen, "out of memory listing '%s'", path);
            rc = DATASET_IO_ERROR;
            break;
        }
        free(out->paths[i]);
        out->paths[i] = full;
    }
    return rc;
}

void ds_split_free(struct dataset_split *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->paths[i]);
    free(s->paths);
    free(s->labels);
    memset(s, 0, sizeof *s);
}

int ds_list_all(const char *dir, const struct request *rq, struct dataset *d, char *err,
                size_t errlen)
{
    struct dataset_split *splits[2] = {&d->train, &d->val};
    for (int s = 0; s < 2; s++) {
        int cap = 0;
        for (int c = 0; c < NCLASSES; c++) {
            int rc = list_class(dir, s, rq->class_names[c], c, splits[s], &cap, err, errlen);
            if (rc != DATASET_OK)
                return rc;
        }
    }
    return DATASET_OK;
}
