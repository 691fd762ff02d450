/* dataset_private: what the files of the dataset module share (dataset.c: dataset_open and the
 * directory's lock; dataset_fs.c: file helpers; dataset_manifest.c: the request and its
 * MANIFEST; dataset_prepare.c: writing the JPEG files; dataset_list.c: listing them). Included
 * by those files only: the loader and the workload see dataset.h. The ds_ functions return
 * DATASET_OK or an error kind of dataset.h with a message in err unless they say otherwise. */
#ifndef MLBENCH_WL_DATASET_PRIVATE_H
#define MLBENCH_WL_DATASET_PRIVATE_H

#include "imgclf/data/dataset.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define DATASET_GENERATOR "mlbench-dataset/1"
#define LOCK_NAME ".mlbench-lock"
#define MANIFEST_NAME "MANIFEST"
#define MANIFEST_TMP_NAME "MANIFEST.tmp"
#define NCLASSES 10
#define MAX_SYNTH_COUNT 10000000
#define FMNIST_SIDE 28
#define FMNIST_QUALITY 95
#define SYNTH_QUALITY 90
#define FMNIST_MAX_IMAGES 1000000
#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define FMNIST_INSTALL_HINT \
    "install the Debian package dataset-fashion-mnist or set MLBENCH_FASHION_MNIST_DIR"

extern const char *const ds_split_names[2]; /* "train", "val" */
/* The IDX files, in the order train images, train labels, test images, test labels. */
extern const char *const ds_fmnist_files[4];

/* A dataset_spec checked and completed: what decides the files' content. */
struct request {
    enum dataset_source source;
    const char *source_name;
    const char *const *class_names;
    int width, height, channels, quality;
    uint64_t seed;
    int counts[2];     /* synthetic: asked; fashion-mnist: from the IDX headers when read */
    char *idx_dir;     /* fashion-mnist: where the IDX files are */
    int idx_missing;   /* fashion-mnist: a file could not be stat'ed (idx_error says which) */
    char idx_error[PATH_MAX + 256];
    json_t *idx_files; /* fashion-mnist: [{name, size, mtime_ns}] when all four exist */
};

/* ---- dataset_fs.c ---- */

/* vsnprintf into err (nothing when err is NULL or errlen 0). */
void ds_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* printf into a new string; NULL when out of memory. */
char *ds_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getenv, with an empty value as NULL. */
const char *ds_env_nonempty(const char *name);
/* mkdir -p. 0, or -1 with errno set and path cut after the component that could not be
 * created (*failed = path, for the message). */
int ds_mkdir_p(char *path, const char **failed);
/* Removes name (relative to dirfd) and everything under it, without following symbolic
 * links. A missing name is not an error. 0, or -1 with errno set. */
int ds_rm_tree_at(int dirfd, const char *name);
/* Writes a whole file (no fsync: the MANIFEST, written last after a syncfs, vouches for all).
 * 0, or -1 with errno set. */
int ds_write_file(const char *path, const unsigned char *data, size_t len);

/* ---- dataset_manifest.c ---- */

/* Checks spec into *rq (zeroed first; for fashion-mnist, stats the IDX files: a missing one
 * sets idx_missing, not an error). ds_request_free releases it, also after a failure. */
int ds_request_init(const struct dataset_spec *spec, struct request *rq, char *err,
                    size_t errlen);
void ds_request_free(struct request *rq);
/* The MANIFEST fields that must match for reuse (new reference); NULL when out of memory. */
json_t *ds_manifest_want(const struct request *rq);
/* The first field of want that have lacks or holds differently; NULL when have matches. */
const char *ds_manifest_differs(const json_t *want, const json_t *have);
/* <dir>/MANIFEST if it is one of ours (new reference), else NULL. */
json_t *ds_manifest_load(const char *dir);
/* The MANIFEST's count of split (0 train, 1 val); -1 when missing or out of range. */
int ds_manifest_count(const json_t *m, int split);
/* Writes m as <dir>/MANIFEST through a temporary file (fsync'd) and a rename. */
int ds_manifest_write(const char *dir, const json_t *m, char *err, size_t errlen);

/* ---- dataset_prepare.c ---- */

/* Prepares the files of rq in dir (one thread per CPU); on success *written is the MANIFEST
 * written (new reference) and *seconds the time taken. On failure nothing of ours is left in
 * dir but the lock file. */
int ds_prepare(struct request *rq, const char *dir, int progress, json_t **written,
               double *seconds, char *err, size_t errlen);

/* ---- dataset_list.c ---- */

/* Lists the *.jpg files of both splits of dir into d->train and d->val (appended; on failure
 * what was listed stays there for dataset_free). */
int ds_list_all(const char *dir, const struct request *rq, struct dataset *d, char *err,
                size_t errlen);
/* Frees a split's paths and labels and zeroes it. */
void ds_split_free(struct dataset_split *s);

#endif
