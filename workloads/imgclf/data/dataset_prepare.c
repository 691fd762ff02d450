/* dataset_prepare: writes a dataset's JPEG files, synthetic (synth.h) or Fashion-MNIST's (read
 * from its IDX files, idx.h), with one worker thread per CPU encoding and writing images, then
 * flushes them and writes the MANIFEST last (dataset_private.h: ds_prepare). */
#include "imgclf/data/dataset_private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/opts.h"
#include "imgclf/data/idx.h"
#include "imgclf/data/jpeg.h"
#include "imgclf/data/synth.h"

struct prep {
    const struct request *rq;
    const char *dir;
    int name_width[2];           /* digits of the file numbers of each split */
    const unsigned char *images[2], *labels[2]; /* fashion-mnist */
    int total;
    int progress;
    atomic_int next, done, failed;
    pthread_mutex_t lock;        /* guards err and last_print */
    char err[512];
    int threads;
    double start, last_print;
};

static void prep_fail(struct prep *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first error (with its context) and stops the other workers. */
static void prep_fail(struct prep *p, const char *fmt, ...)
{
    pthread_mutex_lock(&p->lock);
    if (!atomic_load(&p->failed)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, sizeof p->err, fmt, ap);
        va_end(ap);
        atomic_store(&p->failed, 1);
    }
    pthread_mutex_unlock(&p->lock);
}

static void prep_report(struct prep *p, int force)
{
    double now = wl_now();
    pthread_mutex_lock(&p->lock);
    if (force || now - p->last_print >= 1.0) {
        p->last_print = now;
        int done = atomic_load(&p->done);
        fprintf(stderr, "mlbench-workload: preparing %s in %s: %d/%d images (%d %%)\n",
                p->rq->source_name, p->dir, done, p->total,
                (int)((long long)done * 100 / p->total));
    }
    pthread_mutex_unlock(&p->lock);
}

static void prep_work(struct prep *p, int worker)
{
    const struct request *rq = p->rq;
    size_t npix = (size_t)rq->width * rq->height * rq->channels;
    size_t path_cap = strlen(p->dir) + 64;
    struct jpeg *j = jpeg_new();
    unsigned char *pixels = rq->source == DATASET_SYNTHETIC ? malloc(npix) : NULL;
    char *path = malloc(path_cap);
    if (!j || !path || (rq->source == DATASET_SYNTHETIC && !pixels)) {
        prep_fail(p, "out of memory starting a preparation thread");
        goto done;
    }
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->total || atomic_load(&p->failed))
            break;
        int split = i < rq->counts[0] ? 0 : 1;
        int n = split ? i - rq->counts[0] : i;
        int label;
        const unsigned char *img;
        if (rq->source == DATASET_SYNTHETIC) {
            label = synth_image(rq->seed, split, n, rq->width, pixels);
            img = pixels;
        } else {
            label = p->labels[split][n];
            img = p->images[split] + (size_t)n * npix;
        }
        unsigned char *jpg;
        size_t len;
        if (jpeg_encode(j, img, rq->width, rq->height, rq->channels, rq->quality, &jpg, &len) <
            0) {
            prep_fail(p, "cannot encode %s image %d: %s", ds_split_names[split], n, jpeg_error(j));
            break;
        }
        snprintf(path, path_cap, "%s/%s/%s/%0*d.jpg", p->dir, ds_split_names[split],
                 rq->class_names[label], p->name_width[split], n);
        int rc = ds_write_file(path, jpg, len);
        int e = errno;
        free(jpg);
        if (rc < 0) {
            prep_fail(p, "cannot write '%s': %s", path, strerror(e));
            break;
        }
        atomic_fetch_add(&p->done, 1);
        if (worker == 0 && p->progress)
            prep_report(p, 0);
    }
done:
    jpeg_free(j);
    free(pixels);
    free(path);
}

struct prep_thread {
    struct prep *p;
    int worker;
};

static void *prep_thread_main(void *arg)
{
    struct prep_thread *t = arg;
    prep_work(t->p, t->worker);
    return NULL;
}

/* Encodes and writes all images with one worker per CPU (the caller is worker 0). */
static void prep_run(struct prep *p)
{
    int n = wl_online_cpus();
    if (n > p->total)
        n = p->total;
    pthread_t tids[256];
    struct prep_thread args[256];
    if (n > 256)
        n = 256;
    int started = 0;
    for (int w = 1; w < n; w++) {
        args[w] = (struct prep_thread){p, w};
        if (pthread_create(&tids[w], NULL, prep_thread_main, &args[w]) != 0)
            break; /* fewer threads: slower, not wrong */
        started++;
    }
    p->threads = started + 1;
    prep_work(p, 0);
    for (int w = 1; w <= started; w++)
        pthread_join(tids[w], NULL);
}

static int digits(int n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Reads and checks the four IDX files into images/labels; sets rq->counts. */
static int fmnist_load(struct request *rq, struct idx images[2], struct idx labels[2], char *err,
                       size_t errlen)
{
    for (int s = 0; s < 2; s++) {
        char path[PATH_MAX];
        char e[512];
        snprintf(path, sizeof path, "%s/%s", rq->idx_dir, ds_fmnist_files[2 * s]);
        int rc = idx_read(path, 0x803, (size_t)FMNIST_MAX_IMAGES * FMNIST_SIDE * FMNIST_SIDE,
                          &images[s], e, sizeof e);
        if (rc == IDX_OK) {
            snprintf(path, sizeof path, "%s/%s", rq->idx_dir, ds_fmnist_files[2 * s + 1]);
            rc = idx_read(path, 0x801, FMNIST_MAX_IMAGES, &labels[s], e, sizeof e);
        }
        if (rc == IDX_MISSING) {
            ds_err(err, errlen, "%s: " FMNIST_INSTALL_HINT, e);
            return DATASET_BAD_INPUT;
        }
        if (rc != IDX_OK) {
            ds_err(err, errlen,
                   "%s; reinstall dataset-fashion-mnist or point MLBENCH_FASHION_MNIST_DIR at "
                   "intact files",
                   e);
            return DATASET_BAD_INPUT;
        }
        if (images[s].dims[1] != FMNIST_SIDE || images[s].dims[2] != FMNIST_SIDE) {
            ds_err(err, errlen, "'%s/%s' holds %ux%u images, expected %dx%d", rq->idx_dir,
                   ds_fmnist_files[2 * s], images[s].dims[1], images[s].dims[2], FMNIST_SIDE,
                   FMNIST_SIDE);
            return DATASET_BAD_INPUT;
        }
        if (images[s].dims[0] != labels[s].dims[0]) {
            ds_err(err, errlen, "'%s/%s' holds %u images but '%s' %u labels", rq->idx_dir,
                   ds_fmnist_files[2 * s], images[s].dims[0], ds_fmnist_files[2 * s + 1],
                   labels[s].dims[0]);
            return DATASET_BAD_INPUT;
        }
        for (size_t i = 0; i < labels[s].size; i++)
            if (labels[s].data[i] >= NCLASSES) {
                ds_err(err, errlen, "'%s/%s' is corrupt: label %d of image %zu is not 0..9",
                       rq->idx_dir, ds_fmnist_files[2 * s + 1], labels[s].data[i], i);
                return DATASET_BAD_INPUT;
            }
        rq->counts[s] = (int)images[s].dims[0];
    }
    return DATASET_OK;
}

/* Removes what a preparation writes (MANIFEST first: without it the rest is incomplete). */
static int prep_clear(const char *dir, char *err, size_t errlen)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        ds_err(err, errlen, "cannot open '%s': %s", dir, strerror(errno));
        return DATASET_IO_ERROR;
    }
    static const char *const ours[] = {MANIFEST_NAME, MANIFEST_TMP_NAME, "train", "val"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (ds_rm_tree_at(dfd, ours[i]) < 0) {
            ds_err(err, errlen, "cannot remove '%s/%s': %s", dir, ours[i], strerror(errno));
            close(dfd);
            return DATASET_IO_ERROR;
        }
    close(dfd);
    return DATASET_OK;
}

static void iso_time_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Prepares the files of rq in dir; on success *written is the MANIFEST written. On failure
 * nothing of ours is left in dir but the lock file. */
int ds_prepare(struct request *rq, const char *dir, int progress, json_t **written,
               double *seconds, char *err, size_t errlen)
{
    double start = wl_now();
    struct idx images[2] = {{0}}, labels[2] = {{0}};
    json_t *m = NULL;
    struct prep p = {.rq = rq, .dir = dir, .progress = progress};
    int rc = prep_clear(dir, err, errlen);
    if (rc != DATASET_OK)
        return rc;
    if (rq->source == DATASET_FASHION_MNIST) {
        rc = fmnist_load(rq, images, labels, err, errlen);
        if (rc != DATASET_OK)
            goto done;
        for (int s = 0; s < 2; s++) {
            p.images[s] = images[s].data;
            p.labels[s] = labels[s].data;
        }
    }
    for (int s = 0; s < 2; s++) {
        p.name_width[s] = digits(rq->counts[s] - 1);
        if (p.name_width[s] < 5)
            p.name_width[s] = 5;
        for (int c = -1; c < NCLASSES; c++) {
            char path[PATH_MAX];
            if (c < 0)
                snprintf(path, sizeof path, "%s/%s", dir, ds_split_names[s]);
            else
                snprintf(path, sizeof path, "%s/%s/%s", dir, ds_split_names[s], rq->class_names[c]);
            if (mkdir(path, 0755) < 0) {
                ds_err(err, errlen, "cannot create '%s': %s", path, strerror(errno));
                rc = DATASET_IO_ERROR;
                goto done;
            }
        }
    }
    p.total = rq->counts[0] + rq->counts[1];
    pthread_mutex_init(&p.lock, NULL);
    p.start = p.last_print = wl_now();
    if (progress)
        prep_report(&p, 1);
    prep_run(&p);
    pthread_mutex_destroy(&p.lock);
    if (atomic_load(&p.failed)) {
        ds_err(err, errlen, "%s", p.err);
        rc = DATASET_IO_ERROR;
        goto done;
    }
    m = ds_manifest_want(rq);
    char created[32];
    iso_time_now(created, sizeof created);
    if (!m || json_object_set_new(m, "created", json_string(created)) ||
        json_object_set_new(m, "prepare_threads", json_integer(p.threads)) ||
        (rq->source == DATASET_FASHION_MNIST &&
         (json_object_set_new(m, "counts", json_pack("{s:i, s:i}", "train", rq->counts[0],
                                                     "val", rq->counts[1])) ||
          json_object_set_new(m, "idx_dir", json_string(rq->idx_dir))))) {
        ds_err(err, errlen, "out of memory building the MANIFEST");
        rc = DATASET_IO_ERROR;
        goto done;
    }
    /* Flush the images before the MANIFEST vouches for them (part of the preparation time). */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || syncfs(dfd) < 0) {
        ds_err(err, errlen, "cannot flush the images in '%s' to disk: %s", dir, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        rc = DATASET_IO_ERROR;
        goto done;
    }
    close(dfd);
    *seconds = wl_now() - start;
    json_object_set_new(m, "prepare_seconds", json_real(round(*seconds * 1000) / 1000));
    rc = ds_manifest_write(dir, m, err, errlen);
    if (rc == DATASET_OK && progress)
        fprintf(stderr, "mlbench-workload: prepared %s in %s: %d images in %.1f s (%d threads)\n",
                rq->source_name, dir, p.total, *seconds, p.threads);
done:
    for (int s = 0; s < 2; s++) {
        idx_free(&images[s]);
        idx_free(&labels[s]);
    }
    if (rc != DATASET_OK) {
        json_decref(m);
        char ignored[16];
        prep_clear(dir, ignored, sizeof ignored);
        return rc;
    }
    *written = m;
    return DATASET_OK;
}
