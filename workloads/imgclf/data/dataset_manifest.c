/* dataset_manifest: the request (a dataset_spec checked and completed: source, size, counts,
 * the Fashion-MNIST IDX files' sizes and mtimes) and the MANIFEST that records it in a prepared
 * directory: what must match for reuse, loading ours, writing it atomically (dataset_private.h;
 * docs/datasets.md describes the fields). */
#include "imgclf/data/dataset_private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/opts.h"

const char *const ds_split_names[2] = {"train", "val"};

static const char *const fmnist_classes[NCLASSES] = {
    "0-tshirt-top", "1-trouser", "2-pullover", "3-dress",   "4-coat",
    "5-sandal",     "6-shirt",   "7-sneaker",  "8-bag",     "9-ankle-boot"};

static const char *const synth_classes[NCLASSES] = {
    "0-class0", "1-class1", "2-class2", "3-class3", "4-class4",
    "5-class5", "6-class6", "7-class7", "8-class8", "9-class9"};

/* The IDX files, in the order train images, train labels, test images, test labels. */
const char *const ds_fmnist_files[4] = {
    "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz"};

int ds_request_init(const struct dataset_spec *spec, struct request *rq, char *err,
                    size_t errlen)
{
    memset(rq, 0, sizeof *rq);
    rq->source = spec->source;
    if (spec->source == DATASET_SYNTHETIC) {
        rq->source_name = "synthetic";
        rq->class_names = synth_classes;
        if (spec->image_size < 8 || spec->image_size > 1024) {
            ds_err(err, errlen, "synthetic image size %d: must be from 8 to 1024",
                   spec->image_size);
            return DATASET_BAD_INPUT;
        }
        rq->width = rq->height = spec->image_size;
        rq->channels = 3;
        rq->quality = SYNTH_QUALITY;
        rq->seed = spec->seed;
        rq->counts[0] = spec->train_count ? spec->train_count : 10000;
        rq->counts[1] = spec->val_count ? spec->val_count : 2000;
        for (int s = 0; s < 2; s++)
            if (rq->counts[s] < 1 || rq->counts[s] > MAX_SYNTH_COUNT) {
                ds_err(err, errlen, "synthetic %s image count %d: must be from 1 to %d",
                       ds_split_names[s], rq->counts[s], MAX_SYNTH_COUNT);
                return DATASET_BAD_INPUT;
            }
        return DATASET_OK;
    }
    if (spec->source != DATASET_FASHION_MNIST) {
        ds_err(err, errlen, "unknown dataset source %d", (int)spec->source);
        return DATASET_BAD_INPUT;
    }
    rq->source_name = "fashion-mnist";
    rq->class_names = fmnist_classes;
    rq->width = rq->height = FMNIST_SIDE;
    rq->channels = 1;
    rq->quality = FMNIST_QUALITY;
    const char *d = ds_env_nonempty("MLBENCH_FASHION_MNIST_DIR");
    rq->idx_dir = strdup(d ? d : FMNIST_DEFAULT_DIR);
    rq->idx_files = json_array();
    if (!rq->idx_dir || !rq->idx_files) {
        ds_err(err, errlen, "out of memory");
        return DATASET_IO_ERROR;
    }
    for (int i = 0; i < 4; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", rq->idx_dir, ds_fmnist_files[i]);
        struct stat st;
        int missing = stat(path, &st) < 0;
        if (missing || !S_ISREG(st.st_mode)) {
            const char *why = !missing ? "not a regular file" : strerror(errno);
            snprintf(rq->idx_error, sizeof rq->idx_error,
                     "Fashion-MNIST file '%s' is missing (%s): " FMNIST_INSTALL_HINT, path, why);
            rq->idx_missing = 1;
            json_decref(rq->idx_files);
            rq->idx_files = NULL;
            return DATASET_OK;
        }
        json_int_t mtime_ns = (json_int_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        if (json_array_append_new(rq->idx_files,
                                  json_pack("{s:s, s:I, s:I}", "name", ds_fmnist_files[i], "size",
                                            (json_int_t)st.st_size, "mtime_ns", mtime_ns)) < 0) {
            ds_err(err, errlen, "out of memory");
            return DATASET_IO_ERROR;
        }
    }
    return DATASET_OK;
}

void ds_request_free(struct request *rq)
{
    free(rq->idx_dir);
    json_decref(rq->idx_files);
}

static json_t *json_seed(uint64_t seed)
{
    /* JSON readers handle 64-bit signed integers; larger seeds are written as strings. */
    if (seed <= INT64_MAX)
        return json_integer((json_int_t)seed);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, seed);
    return json_string(buf);
}

/* The MANIFEST fields that must match for reuse: everything that decides the files' content.
 * For fashion-mnist the counts come from the IDX files (checked through their sizes and
 * mtimes), and the IDX files are left out when missing, so that a prepared copy is reused on a
 * machine without them. NULL when out of memory. */
json_t *ds_manifest_want(const struct request *rq)
{
    json_t *classes = json_array();
    if (!classes)
        return NULL;
    for (int c = 0; c < NCLASSES; c++)
        if (json_array_append_new(classes, json_string(rq->class_names[c])) < 0) {
            json_decref(classes);
            return NULL;
        }
    json_t *m = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:i}", "generator", DATASET_GENERATOR,
                          "source", rq->source_name, "width", rq->width, "height", rq->height,
                          "channels", rq->channels, "classes", classes, "jpeg_quality",
                          rq->quality);
    if (!m)
        return NULL;
    int rc = 0;
    if (rq->source == DATASET_SYNTHETIC) {
        rc |= json_object_set_new(m, "seed", json_seed(rq->seed));
        rc |= json_object_set_new(m, "counts", json_pack("{s:i, s:i}", "train", rq->counts[0],
                                                         "val", rq->counts[1]));
    } else if (rq->idx_files) {
        rc |= json_object_set(m, "idx_files", rq->idx_files);
    }
    if (rc) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* The first field of want that have lacks or holds differently; NULL when have matches. */
const char *ds_manifest_differs(const json_t *want, const json_t *have)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)want, key, value)
    {
        if (!json_equal(value, json_object_get(have, key)))
            return key;
    }
    return NULL;
}

/* Loads <dir>/MANIFEST if it is one of ours (an object with our generator's name). */
json_t *ds_manifest_load(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/" MANIFEST_NAME, dir);
    json_t *m = json_load_file(path, 0, NULL);
    const char *gen = json_string_value(json_object_get(m, "generator"));
    if (!gen || strncmp(gen, "mlbench-dataset/", 16) != 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

int ds_manifest_count(const json_t *m, int split)
{
    json_int_t n = json_integer_value(json_object_get(json_object_get(m, "counts"),
                                                      ds_split_names[split]));
    return n >= 0 && n <= INT_MAX ? (int)n : -1;
}

/* Writes MANIFEST through a temporary file (fsync'd) and a rename: a MANIFEST is never
 * partial. The caller has flushed the images first (syncfs). */
int ds_manifest_write(const char *dir, const json_t *m, char *err, size_t errlen)
{
    char tmp[PATH_MAX], final[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/" MANIFEST_TMP_NAME, dir);
    snprintf(final, sizeof final, "%s/" MANIFEST_NAME, dir);
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
    if (!text) {
        ds_err(err, errlen, "out of memory writing the MANIFEST");
        return DATASET_IO_ERROR;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* the terminator becomes the final newline */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = dfd >= 0 && fd >= 0 && wl_write_all(fd, text, len + 1) == 0 &&
                     fsync(fd) == 0
                 ? 0
                 : -1;
    int e = errno;
    free(text);
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, final) < 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0)
        fsync(dfd); /* the rename itself; failing here loses nothing but durability */
    if (dfd >= 0)
        close(dfd);
    if (rc < 0) {
        unlink(tmp);
        ds_err(err, errlen, "cannot write '%s': %s", final, strerror(e));
        return DATASET_IO_ERROR;
    }
    return DATASET_OK;
}
