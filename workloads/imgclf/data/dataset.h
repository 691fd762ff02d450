/* dataset: the image datasets of imgclf, as folders of JPEG files the way image datasets usually
 * sit on disk: <dir>/{train,val}/<class>/<n>.jpg, one file per image, so that loading and
 * decoding are per-file work as in any ImageFolder-style pipeline (docs/workloads.md).
 *
 * Two sources:
 *  - fashion-mnist: the real Fashion-MNIST (60 000 train, 10 000 test = val; 28x28 grey, 10
 *    classes) from the gzip'd IDX files of Debian's dataset-fashion-mnist
 *    (/usr/share/datasets/fashion-mnist, or $MLBENCH_FASHION_MNIST_DIR).
 *  - synthetic: deterministic class-structured RGB images of any size (10 classes).
 *
 * Prepared once and reused: <dir>/MANIFEST (JSON) records the source (and the IDX files' sizes
 * and mtimes), generator version, seed, size, counts and JPEG quality; it is written last, so a
 * dataset without one is incomplete. A directory whose MANIFEST differs from what is asked is
 * ours and is redone (its train/ and val/ removed first); so is one holding our lock file
 * (.mlbench-lock) without a MANIFEST (an interrupted preparation); any other non-empty directory
 * holds foreign files and is refused. */
#ifndef MLBENCH_WL_DATASET_H
#define MLBENCH_WL_DATASET_H

#include <stddef.h>
#include <stdint.h>

enum dataset_source { DATASET_FASHION_MNIST, DATASET_SYNTHETIC };

struct dataset_spec {
    enum dataset_source source;
    const char *dir;     /* NULL: dataset_default_dir */
    int image_size;      /* synthetic: width = height (8..1024); ignored for fashion-mnist */
    int train_count;     /* synthetic: images in train (default 10 000 when 0) */
    int val_count;       /* synthetic: images in val (default 2 000 when 0) */
    uint64_t seed;       /* synthetic generator seed */
    int progress;        /* print progress to stderr while preparing (>= 1 s apart) */
};

struct dataset_split {
    int count;
    char **paths;  /* count absolute paths, in a fixed order (class, then number) */
    int *labels;   /* count labels in [0, classes) */
};

struct dataset {
    char *dir;
    char *source;               /* "fashion-mnist" or "synthetic" */
    int width, height, channels; /* of every image */
    int classes;
    char **class_names;         /* classes names (the class folder names) */
    struct dataset_split train, val;
    int prepared_now;           /* 1 when this call wrote the files */
    double prepare_seconds;     /* time spent writing them */
};

/* Error kinds of dataset_open: a bad request (the caller exits 2) or an I/O failure (exits 1). */
enum { DATASET_OK = 0, DATASET_BAD_INPUT = -1, DATASET_IO_ERROR = -2 };

/* The default folder for spec: $MLBENCH_DATA_DIR/<name>, else $XDG_CACHE_HOME/mlbench/datasets/
 * <name>, else ~/.cache/mlbench/datasets/<name>, where name is "fashion-mnist" or
 * "synthetic-<size>-s<seed>". Returns a malloc'd string. */
char *dataset_default_dir(const struct dataset_spec *spec);

/* Prepares the dataset if needed and lists its files into *out. Returns DATASET_OK, or an
 * error kind with a message in err naming the bad path/value and what to do (unwritable
 * directory, foreign files, IDX files missing: "install dataset-fashion-mnist", corrupt IDX).
 * *out is zeroed on error. */
int dataset_open(const struct dataset_spec *spec, struct dataset *out, char *err, size_t errlen);
void dataset_free(struct dataset *d);

/* Reads a whole file into *data (malloc'd, caller frees). 0, or -1 with errno set. */
int dataset_read_file(const char *path, unsigned char **data, size_t *len);

#endif
