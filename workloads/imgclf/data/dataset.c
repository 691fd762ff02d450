/* dataset: prepares the image datasets of imgclf as folders of JPEG files and lists them (see
 * dataset.h and docs/datasets.md, which describes the layout, the MANIFEST and the rules for
 * reusing or redoing a directory).
 *
 * Outline of dataset_open: check the request; refuse a directory holding files we did not write
 * (before writing anything into it); take an flock on <dir>/.mlbench-lock; reuse the files when
 * the MANIFEST matches the request and the files listed match its counts, else (re)write them
 * with one thread per CPU and write the MANIFEST last (temporary file + rename); list. */
#include "imgclf/data/dataset.h"

#include "common/opts.h"
#include "common/rng.h"
#include "imgclf/data/idx.h"
#include "imgclf/data/jpeg.h"
#include "imgclf/data/synth.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static const char *const split_names[2] = {"train", "val"};

static const char *const fmnist_classes[NCLASSES] = {
    "0-tshirt-top", "1-trouser", "2-pullover", "3-dress",   "4-coat",
    "5-sandal",     "6-shirt",   "7-sneaker",  "8-bag",     "9-ankle-boot"};

static const char *const synth_classes[NCLASSES] = {
    "0-class0", "1-class1", "2-class2", "3-class3", "4-class4",
    "5-class5", "6-class6", "7-class7", "8-class8", "9-class9"};

/* The IDX files, in the order train images, train labels, test images, test labels. */
static const char *const fmnist_files[4] = {
    "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz"};
#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define FMNIST_INSTALL_HINT \
    "install the Debian package dataset-fashion-mnist or set MLBENCH_FASHION_MNIST_DIR"

static void ds_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void ds_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *ds_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* printf into a new string; NULL when out of memory. */
static char *ds_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

char *dataset_default_dir(const struct dataset_spec *spec)
{
    char name[64];
    if (spec->source == DATASET_FASHION_MNIST)
        snprintf(name, sizeof name, "fashion-mnist");
    else
        snprintf(name, sizeof name, "synthetic-%d-s%" PRIu64, spec->image_size, spec->seed);
    const char *base = env_nonempty("MLBENCH_DATA_DIR");
    if (base)
        return ds_asprintf("%s/%s", base, name);
    base = env_nonempty("XDG_CACHE_HOME");
    if (base)
        return ds_asprintf("%s/mlbench/datasets/%s", base, name);
    const char *home = env_nonempty("HOME");
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (!home && getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found &&
        found->pw_dir && *found->pw_dir)
        home = found->pw_dir;
    if (home)
        return ds_asprintf("%s/.cache/mlbench/datasets/%s", home, name);
    return ds_asprintf("/tmp/mlbench-%u/datasets/%s", (unsigned)getuid(), name);
}

/* ---- files and directories ---- */

/* mkdir -p. 0, or -1 with errno set and path cut after the component that could not be
 * created (*failed = path, for the message). */
static int mkdir_p(char *path, const char **failed)
{
    *failed = path;
    size_t len = strlen(path);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        if (path[i - 1] == '/')
            continue;
        char saved = path[i];
        path[i] = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        if (rc != 0 && e == EEXIST) {
            struct stat st;
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                rc = 0;
            else
                e = ENOTDIR;
        }
        if (rc != 0) {
            errno = e;
            return -1; /* path stays cut at the failing component */
        }
        path[i] = saved;
    }
    return 0;
}

/* Removes name (relative to dirfd) and everything under it, without following symbolic
 * links. A missing name is not an error. 0, or -1 with errno set. */
static int rm_tree_at(int dirfd, const char *name)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (rm_tree_at(fd, de->d_name) < 0) {
            rc = -1;
            break;
        }
        errno = 0;
    }
    int e = errno; /* of the failed removal, or of readdir */
    closedir(d);
    if (rc < 0 || e) {
        errno = e;
        return -1;
    }
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Writes a whole file (no fsync: the MANIFEST, written last after a syncfs, vouches for all).
 * 0, or -1 with errno set. */
static int write_file(const char *path, const unsigned char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (wl_write_all(fd, data, len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

int dataset_read_file(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        goto fail;
    }
    size_t cap = (size_t)st.st_size;
    unsigned char *buf = malloc(cap ? cap : 1);
    if (!buf)
        goto fail;
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break; /* the file shrank since fstat: return what is there */
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = got;
    return 0;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* ---- the request ---- */

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

static int request_init(const struct dataset_spec *spec, struct request *rq, char *err,
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
                       split_names[s], rq->counts[s], MAX_SYNTH_COUNT);
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
    const char *d = env_nonempty("MLBENCH_FASHION_MNIST_DIR");
    rq->idx_dir = strdup(d ? d : FMNIST_DEFAULT_DIR);
    rq->idx_files = json_array();
    if (!rq->idx_dir || !rq->idx_files) {
        ds_err(err, errlen, "out of memory");
        return DATASET_IO_ERROR;
    }
    for (int i = 0; i < 4; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", rq->idx_dir, fmnist_files[i]);
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
                                  json_pack("{s:s, s:I, s:I}", "name", fmnist_files[i], "size",
                                            (json_int_t)st.st_size, "mtime_ns", mtime_ns)) < 0) {
            ds_err(err, errlen, "out of memory");
            return DATASET_IO_ERROR;
        }
    }
    return DATASET_OK;
}

static void request_free(struct request *rq)
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
static json_t *manifest_want(const struct request *rq)
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
static const char *manifest_differs(const json_t *want, const json_t *have)
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
static json_t *manifest_load(const char *dir)
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

static int manifest_count(const json_t *m, int split)
{
    json_int_t n = json_integer_value(json_object_get(json_object_get(m, "counts"),
                                                      split_names[split]));
    return n >= 0 && n <= INT_MAX ? (int)n : -1;
}

/* ---- preparation ---- */

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
            prep_fail(p, "cannot encode %s image %d: %s", split_names[split], n, jpeg_error(j));
            break;
        }
        snprintf(path, path_cap, "%s/%s/%s/%0*d.jpg", p->dir, split_names[split],
                 rq->class_names[label], p->name_width[split], n);
        int rc = write_file(path, jpg, len);
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
        snprintf(path, sizeof path, "%s/%s", rq->idx_dir, fmnist_files[2 * s]);
        int rc = idx_read(path, 0x803, (size_t)FMNIST_MAX_IMAGES * FMNIST_SIDE * FMNIST_SIDE,
                          &images[s], e, sizeof e);
        if (rc == IDX_OK) {
            snprintf(path, sizeof path, "%s/%s", rq->idx_dir, fmnist_files[2 * s + 1]);
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
                   fmnist_files[2 * s], images[s].dims[1], images[s].dims[2], FMNIST_SIDE,
                   FMNIST_SIDE);
            return DATASET_BAD_INPUT;
        }
        if (images[s].dims[0] != labels[s].dims[0]) {
            ds_err(err, errlen, "'%s/%s' holds %u images but '%s' %u labels", rq->idx_dir,
                   fmnist_files[2 * s], images[s].dims[0], fmnist_files[2 * s + 1],
                   labels[s].dims[0]);
            return DATASET_BAD_INPUT;
        }
        for (size_t i = 0; i < labels[s].size; i++)
            if (labels[s].data[i] >= NCLASSES) {
                ds_err(err, errlen, "'%s/%s' is corrupt: label %d of image %zu is not 0..9",
                       rq->idx_dir, fmnist_files[2 * s + 1], labels[s].data[i], i);
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
        if (rm_tree_at(dfd, ours[i]) < 0) {
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

/* Writes MANIFEST through a temporary file (fsync'd) and a rename: a MANIFEST is never
 * partial. The caller has flushed the images first (syncfs). */
static int manifest_write(const char *dir, const json_t *m, char *err, size_t errlen)
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
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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

/* Prepares the files of rq in dir; on success *written is the MANIFEST written. On failure
 * nothing of ours is left in dir but the lock file. */
static int prepare(struct request *rq, const char *dir, int progress, json_t **written,
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
                snprintf(path, sizeof path, "%s/%s", dir, split_names[s]);
            else
                snprintf(path, sizeof path, "%s/%s/%s", dir, split_names[s], rq->class_names[c]);
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
    m = manifest_want(rq);
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
    rc = manifest_write(dir, m, err, errlen);
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

/* ---- listing ---- */

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
    snprintf(path, sizeof path, "%s/%s/%s", dir, split_names[split], cls);
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

static void split_free(struct dataset_split *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->paths[i]);
    free(s->paths);
    free(s->labels);
    memset(s, 0, sizeof *s);
}

static int list_all(const char *dir, const struct request *rq, struct dataset *d, char *err,
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

/* ---- dataset_open ---- */

/* Whether dir may be used: 0 when it is empty or ours (holds our lock file or MANIFEST), 1 when
 * it holds other files (*example: the first name in sort order, malloc'd), -1 when it cannot
 * be read (errno). A missing dir is empty. */
static int dir_check_foreign(const char *dir, char **example)
{
    *example = NULL;
    DIR *d = opendir(dir);
    if (!d) /* missing or not a directory: mkdir_p will create it or say why it cannot */
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
        json_t *m = manifest_load(dir);
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
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
    json_t *want = manifest_want(rq);
    json_t *have = manifest_load(absdir);
    int rc = DATASET_OK;
    if (!want) {
        ds_err(err, errlen, "out of memory");
        rc = DATASET_IO_ERROR;
        goto done;
    }
    char why[256] = "";
    const char *diff = have ? manifest_differs(want, have) : "MANIFEST";
    if (!diff) {
        rc = list_all(absdir, rq, out, err, errlen);
        if (rc != DATASET_OK)
            goto done;
        int want_n[2] = {manifest_count(have, 0), manifest_count(have, 1)};
        if (out->train.count == want_n[0] && out->val.count == want_n[1])
            goto done; /* reused */
        snprintf(why, sizeof why, "it holds %d train and %d val images where its MANIFEST says %d and %d",
                 out->train.count, out->val.count, want_n[0], want_n[1]);
        split_free(&out->train);
        split_free(&out->val);
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
    rc = prepare(rq, absdir, spec->progress, &written, &out->prepare_seconds, err, errlen);
    if (rc != DATASET_OK)
        goto done;
    out->prepared_now = 1;
    rc = list_all(absdir, rq, out, err, errlen);
    if (rc == DATASET_OK &&
        (out->train.count != manifest_count(written, 0) || out->val.count != manifest_count(written, 1))) {
        ds_err(err, errlen,
               "'%s' holds %d train and %d val images just after writing %d and %d: is another "
               "program changing it?",
               absdir, out->train.count, out->val.count, manifest_count(written, 0),
               manifest_count(written, 1));
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
    int rc = request_init(spec, &rq, err, errlen);
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
        json_t *m = manifest_load(dir);
        json_decref(m);
        if (!m) {
            ds_err(err, errlen, "%s", rq.idx_error);
            rc = DATASET_BAD_INPUT;
            goto done;
        }
    }
    const char *failed;
    if (mkdir_p(dir, &failed) < 0) {
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
    request_free(&rq);
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
    split_free(&d->train);
    split_free(&d->val);
    memset(d, 0, sizeof *d);
}
