/* dataset: prepares the image datasets of imgclf as folders of JPEG files and lists them (see
 * dataset.h and docs/datasets.md, which describes the layout, the MANIFEST and the rules for
 * reusing or redoing a directory).
 *
 * Outline of dataset_open: check the request; refuse a directory holding files we did not write
 * (before writing anything into it); take an flock on <dir>/.mlbench-lock; reuse the files when
 * the MANIFEST matches the request and the files listed match its counts, else (re)write them
 * with one thread per CPU and write the MANIFEST last (temporary file + rename); list.
 *
 * The other files of the module: dataset_fs.c (file helpers), dataset_manifest.c (the request
 * and the MANIFEST), dataset_prepare.c (writing the files), dataset_list.c (listing them). */
#include "imgclf/data/dataset.h"

#include "imgclf/data/dataset_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *dataset_default_dir(const struct dataset_spec *spec)
{
    char name[64];
    if (spec->source == DATASET_FASHION_MNIST)
        snprintf(name, sizeof name, "fashion-mnist");
    else
        snprintf(name, sizeof name, "synthetic-%d-s%" PRIu64, spec->image_size, spec->seed);
    const char *base = ds_env_nonempty("MLBENCH_DATA_DIR");
    if (base)
        return ds_asprintf("%s/%s", base, name);
    base = ds_env_nonempty("XDG_CACHE_HOME");
    if (base)
        return ds_asprintf("%s/mlbench/datasets/%s", base, name);
    const char *home = ds_env_nonempty("HOME");
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (!home && getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found &&
        found->pw_dir && *found->pw_dir)
        home = found->pw_dir;
    if (home)
        return ds_asprintf("%s/.cache/mlbench/datasets/%s", home, name);
    return ds_asprintf("/tmp/mlbench-%u/datasets/%s", (unsigned)getuid(), name);
}

/* ---- dataset_open ---- */

/* Whether dir may be used: 0 when it is empty or ours (holds our lock file or MANIFEST), 1 when
 * it holds other files (*example: the first name in sort order, malloc'd), -1 when it cannot
 * be read (errno). A missing dir is empty. */
static int dir_check_foreign(const char *dir, char **example)
{
    *example = NULL;
    DIR *d = opendir(dir);
    if (!d) /* missing or not a directory: ds_mkdir_p will create it or say why it cannot */
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    int ours = 0, any = 0;
    char *least = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        any = 1;
        if (!strcmp(n, LOCK_NAME))
            ours = 1;
        if (!least || strcmp(n, least) < 0) {
            char *copy = strdup(n);
            if (copy) {
                free(least);
                least = copy;
            }
        }
    }
    closedir(d);
    if (!ours && any) {
        json_t *m = ds_manifest_load(dir);
        ours = m != NULL;
        json_decref(m);
    }
    if (ours || !any) {
        free(least);
        return 0;
    }
    *example = least;
    return 1;
}

static int dataset_fill(struct dataset *out, const char *absdir, const struct request *rq,
                        char *err, size_t errlen)
{
    out->dir = strdup(absdir);
    out->source = strdup(rq->source_name);
    out->class_names = calloc(NCLASSES, sizeof *out->class_names);
    if (!out->dir || !out->source || !out->class_names)
        goto oom;
    out->classes = NCLASSES;
    for (int c = 0; c < NCLASSES; c++)
        if (!(out->class_names[c] = strdup(rq->class_names[c])))
            goto oom;
    out->width = rq->width;
    out->height = rq->height;
    out->channels = rq->channels;
    return DATASET_OK;
oom:
    ds_err(err, errlen, "out of memory");
    return DATASET_IO_ERROR;
}

/* Opens (creating) and locks <dir>/.mlbench-lock. Returns the fd, or -1 with errno set. */
static int lock_dir(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/" LOCK_NAME, dir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
    }
    return fd;
}

/* The rest of dataset_open, under the lock (lock_fd >= 0) or in a directory we cannot write
 * (lock_fd < 0, lock_errno says why), where only a matching prepared dataset will do. */
static int open_locked(const struct dataset_spec *spec, struct request *rq, const char *absdir,
                       int lock_fd, int lock_errno, struct dataset *out, char *err,
                       size_t errlen)
{
    json_t *want = ds_manifest_want(rq);
    json_t *have = ds_manifest_load(absdir);
    int rc = DATASET_OK;
    if (!want) {
        ds_err(err, errlen, "out of memory");
        rc = DATASET_IO_ERROR;
        goto done;
    }
    char why[256] = "";
    const char *diff = have ? ds_manifest_differs(want, have) : "MANIFEST";
    if (!diff) {
        rc = ds_list_all(absdir, rq, out, err, errlen);
        if (rc != DATASET_OK)
            goto done;
        int want_n[2] = {ds_manifest_count(have, 0), ds_manifest_count(have, 1)};
        if (out->train.count == want_n[0] && out->val.count == want_n[1])
            goto done; /* reused */
        snprintf(why, sizeof why,
                 "it holds %d train and %d val images where its MANIFEST says %d and %d",
                 out->train.count, out->val.count, want_n[0], want_n[1]);
        ds_split_free(&out->train);
        ds_split_free(&out->val);
    } else if (have) {
        snprintf(why, sizeof why, "its MANIFEST differs in '%s'", diff);
    }
    if (lock_fd < 0) {
        ds_err(err, errlen,
               "cannot write in '%s' (%s) to prepare the %s dataset: choose a writable "
               "directory with --data-dir",
               absdir, strerror(lock_errno), rq->source_name);
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    if (rq->idx_missing) {
        ds_err(err, errlen, "%s", rq->idx_error);
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    if (spec->progress && *why)
        fprintf(stderr, "mlbench-workload: redoing %s: %s\n", absdir, why);
    json_t *written = NULL;
    rc = ds_prepare(rq, absdir, spec->progress, &written, &out->prepare_seconds, err, errlen);
    if (rc != DATASET_OK)
        goto done;
    out->prepared_now = 1;
    rc = ds_list_all(absdir, rq, out, err, errlen);
    if (rc == DATASET_OK &&
        (out->train.count != ds_manifest_count(written, 0) ||
         out->val.count != ds_manifest_count(written, 1))) {
        ds_err(err, errlen,
               "'%s' holds %d train and %d val images just after writing %d and %d: is another "
               "program changing it?",
               absdir, out->train.count, out->val.count, ds_manifest_count(written, 0),
               ds_manifest_count(written, 1));
        rc = DATASET_IO_ERROR;
    }
    json_decref(written);
done:
    json_decref(want);
    json_decref(have);
    return rc;
}

int dataset_open(const struct dataset_spec *spec, struct dataset *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    struct request rq;
    int rc = ds_request_init(spec, &rq, err, errlen);
    char *dir = NULL, *absdir = NULL, *example = NULL;
    int lock_fd = -1;
    if (rc != DATASET_OK)
        goto done;
    if (spec->dir && !*spec->dir) {
        ds_err(err, errlen, "the data directory is empty: give one with --data-dir");
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    dir = spec->dir ? strdup(spec->dir) : dataset_default_dir(spec);
    if (!dir) {
        ds_err(err, errlen, "out of memory");
        rc = DATASET_IO_ERROR;
        goto done;
    }
    /* Refuse foreign files before writing anything, the lock file included. */
    int foreign = dir_check_foreign(dir, &example);
    if (foreign < 0) {
        ds_err(err, errlen, "cannot read the data directory '%s': %s; choose another with "
               "--data-dir", dir, strerror(errno));
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    if (foreign) {
        ds_err(err, errlen,
               "%s holds files mlbench did not write (e.g. '%s'): choose an empty or new "
               "directory with --data-dir",
               dir, example);
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    /* Without the IDX files only an already prepared copy can serve: fail before mkdir. */
    if (rq.idx_missing) {
        json_t *m = ds_manifest_load(dir);
        json_decref(m);
        if (!m) {
            ds_err(err, errlen, "%s", rq.idx_error);
            rc = DATASET_BAD_INPUT;
            goto done;
        }
    }
    const char *failed;
    if (ds_mkdir_p(dir, &failed) < 0) {
        ds_err(err, errlen, "cannot create the data directory '%s': %s; choose another with "
               "--data-dir", failed, strerror(errno));
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    absdir = realpath(dir, NULL);
    if (!absdir) {
        ds_err(err, errlen, "cannot resolve the data directory '%s': %s", dir, strerror(errno));
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    lock_fd = lock_dir(absdir);
    int lock_errno = lock_fd < 0 ? errno : 0;
    if (lock_fd < 0 && errno != EACCES && errno != EROFS && errno != EPERM) {
        ds_err(err, errlen, "cannot lock '%s/" LOCK_NAME "': %s; choose another directory "
               "with --data-dir", absdir, strerror(errno));
        rc = DATASET_BAD_INPUT;
        goto done;
    }
    /* lock_fd < 0: a read-only directory, usable only as it is (open_locked checks). */
    rc = dataset_fill(out, absdir, &rq, err, errlen);
    if (rc == DATASET_OK)
        rc = open_locked(spec, &rq, absdir, lock_fd, lock_errno, out, err, errlen);
done:
    if (lock_fd >= 0)
        close(lock_fd); /* releases the flock */
    if (rc != DATASET_OK)
        dataset_free(out);
    ds_request_free(&rq);
    free(dir);
    free(absdir);
    free(example);
    return rc;
}

void dataset_free(struct dataset *d)
{
    if (!d)
        return;
    free(d->dir);
    free(d->source);
    if (d->class_names)
        for (int c = 0; c < d->classes; c++)
            free(d->class_names[c]);
    free(d->class_names);
    ds_split_free(&d->train);
    ds_split_free(&d->val);
    memset(d, 0, sizeof *d);
}