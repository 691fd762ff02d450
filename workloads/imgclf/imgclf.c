/* imgclf: the image-classification reference workload (docs/workloads.md): JPEG files on disk
 * -> load -> preprocess (decode, random crop with padding, flip, normalise) -> train a small CNN
 * (cnn.h) -> evaluate on val, with the input pipeline's knobs (loader threads, prefetch, batch,
 * threads) that the seed scenario's optimisations are about. Stages, counters and metadata go
 * to mlbench through the marker API. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/opts.h"
#include "common/cpu.h"
#include "imgclf/cnn.h"
#include "imgclf/cnn_gemm.h"
#include "imgclf/data/dataset.h"
#include "imgclf/loader.h"
#include "mlbench/marker.h"
#include "workloads.h"

#define WL "imgclf"

struct imgclf_opts {
    struct dataset_spec data;
    int epochs, batch, threads, loader_threads, prefetch;
    double lr, momentum, weight_decay, target;
    int cosine;
    int pad; /* -1: the default for the image size */
    struct device dev; /* --device: the CPU, or a GPU through the CUDA backend */
    enum cnn_precision precision; /* --precision: CNN_BF16 on the CPU only */
    uint64_t seed;
    int train_images; /* 0: all of train */
    int input_only, prepare_only, quiet;
    int64_t max_memory; /* --max-memory in bytes; 0: none */
};

static const char usage_text[] =
    "usage: mlbench-workload imgclf [options]\n"
    "  --dataset fashion-mnist|synthetic   data source (default fashion-mnist)\n"
    "  --data-dir DIR        where the JPEG files are kept (default ~/.cache/mlbench/datasets/...)\n"
    "  --image-size N        synthetic: width = height in pixels (default 32; divisible by 4)\n"
    "  --train-images N      train on N images (synthetic: generate N; fashion-mnist: an even\n"
    "                        subset of the 60 000; default all)\n"
    "  --val-images N        synthetic: images in val (default 2000)\n"
    "  --epochs N            passes over the training images (default 3)\n"
    "  --batch N             images per step (default 32)\n"
    "  --lr X                learning rate (default 0.02 x batch/32, at most 0.1)\n"
    "  --lr-schedule cosine|constant   cosine: decays to 0 over the run (default); both\n"
    "                        start with a linear warm-up over the first 5 % of the steps\n"
    "  --momentum X          SGD momentum (default 0.9)\n"
    "  --pad N               random crops from the image padded by N pixels; 0 = no crop\n"
    "                        (default 2, or width/16 from 64 pixels up)\n"
    "  --weight-decay X      L2 weight decay (default 0)\n"
    "  --threads N           compute threads for training (default: all CPUs)\n"
    "  --loader-threads N    threads that load and preprocess; 0 = serial in the training\n"
    "                        thread, the baseline (default 0)\n"
    "  --prefetch K          batches prepared ahead of training (needs --loader-threads >= 1)\n"
    "  --seed N              seed of weights, order and augmentation (default 1)\n"
    "  --target-accuracy X   report the time to reach this val accuracy (default 0.9)\n"
    "  --device cpu|cuda     cuda: train on the GPU through the CUDA backend (fp32)\n"
    "  --precision fp32|bf16  bf16: mixed precision on the CPU (AVX512_BF16): GEMM operands in\n"
    "                        bf16, sums, master weights and update in fp32 (default fp32)\n"
    "  --input-only          load and preprocess the epochs without training\n"
    "  --prepare-only        prepare the dataset and exit\n"
    "  --quiet               no per-epoch lines\n"
    "  --max-memory SIZE     fail as out of memory (exit 3) when the buffers the batch needs\n"
    "                        (model, batches, GPU buffers) exceed SIZE, e.g. 64MiB\n";

/* Parses argv into *o. Returns 0, 1 after --help, or -1 on bad input (message printed). */
static int parse(int argc, char **argv, struct imgclf_opts *o)
{
    static const char *const datasets[] = {"fashion-mnist", "synthetic", NULL};
    static const char *const devices[] = {"cpu", "cuda", NULL};
    static const char *const schedules[] = {"cosine", "constant", NULL};
    int dataset = 0, device = 0, precision = 0, schedule = 0, image_size = 0;
    memset(o, 0, sizeof *o);
    o->epochs = 3;
    o->batch = 32;
    o->momentum = 0.9;
    o->threads = wl_online_cpus();
    o->seed = 1;
    o->target = 0.9;
    o->pad = -1;
    const struct wl_opt table[] = {
        WL_CHOICE("dataset", &dataset, datasets),
        WL_STRING("data-dir", &o->data.dir),
        WL_INT("image-size", &image_size, 8, 1024),
        WL_INT("train-images", &o->train_images, 1, 10000000),
        WL_INT("val-images", &o->data.val_count, 1, 10000000),
        WL_INT("epochs", &o->epochs, 1, 100000),
        WL_INT("batch", &o->batch, 1, 65536),
        WL_DOUBLE("lr", &o->lr, 1e-9, 10),
        WL_CHOICE("lr-schedule", &schedule, schedules),
        WL_DOUBLE("momentum", &o->momentum, 0, 0.999),
        WL_INT("pad", &o->pad, 0, 256),
        WL_DOUBLE("weight-decay", &o->weight_decay, 0, 1),
        WL_INT("threads", &o->threads, 1, 1024),
        WL_INT("loader-threads", &o->loader_threads, 0, 1024),
        WL_INT("prefetch", &o->prefetch, 0, 64),
        WL_U64("seed", &o->seed),
        WL_DOUBLE("target-accuracy", &o->target, 0, 1),
        WL_CHOICE("device", &device, devices),
        WL_CHOICE("precision", &precision, precision_names),
        WL_FLAG("input-only", &o->input_only),
        WL_FLAG("prepare-only", &o->prepare_only),
        WL_FLAG("quiet", &o->quiet),
        WL_SIZE("max-memory", &o->max_memory),
    };
    int rc = opts_parse(WL, argc, argv, table, (int)(sizeof table / sizeof table[0]),
                        usage_text);
    if (rc)
        return rc;
    o->data.source = dataset == 0 ? DATASET_FASHION_MNIST : DATASET_SYNTHETIC;
    o->data.image_size = image_size ? image_size : 32;
    o->cosine = schedule == 0;
    const int bf16 = precision_names[precision] && !strcmp(precision_names[precision], "bf16");
    if (device == 0 && bf16 && !cnn_gemm_bf16_available()) {
        wl_error(WL, "--precision bf16: this CPU has no AVX512_BF16%s (see `mlbench env`): use "
                     "--precision fp32",
                 wl_cpu_disabled(WL_CPU_AVX512_BF16) ? " (MLBENCH_CPU_DISABLE removed it)" : "");
        return -1;
    }
    if (device == 0 && precision != 0 && !bf16) {
        wl_error(WL, "--precision %s: the CPU backend trains in fp32 or bf16",
                 precision_names[precision]);
        return -1;
    }
    o->precision = bf16 ? CNN_BF16 : CNN_FP32;
    if (device != 0 && precision != 0) {
        wl_error(WL, "--precision %s: the CUDA backend trains in fp32 so far (mixed precision "
                     "is still to come); use --precision fp32",
                 precision_names[precision]);
        return -1;
    }
    if (device_choose(WL, device == 1 ? DEVICE_CUDA : DEVICE_CPU, &o->dev))
        return -1;
    if (image_size % 4) {
        wl_error(WL, "--image-size '%d' must be divisible by 4 (the CNN pools twice)",
                 image_size);
        return -1;
    }
    if (o->prefetch > 0 && o->loader_threads == 0) {
        wl_error(WL, "--prefetch %d needs --loader-threads 1 or more: with 0 the training "
                     "thread loads each batch itself",
                 o->prefetch);
        return -1;
    }
    if (o->data.source == DATASET_FASHION_MNIST && image_size) {
        wl_error(WL, "--image-size is for --dataset synthetic; Fashion-MNIST images are 28x28");
        return -1;
    }
    if (o->data.source == DATASET_FASHION_MNIST && o->data.val_count) {
        wl_error(WL, "--val-images is for --dataset synthetic; Fashion-MNIST's val set is its "
                     "10 000 test images");
        return -1;
    }
    if (o->data.source == DATASET_SYNTHETIC)
        o->data.train_count = o->train_images;
    if (o->lr == 0) /* not given: linear scaling with the batch */
        o->lr = fmin(0.1, 0.02 * o->batch / 32.0);
    o->data.seed = o->seed;
    o->data.progress = 1;
    return 0;
}

/* For --train-images on Fashion-MNIST: an evenly strided subset (the list is sorted by class, so
 * a stride keeps the classes balanced). Returns a split that borrows the dataset's strings. */
static int subset(const struct dataset_split *all, int n, struct dataset_split *out)
{
    *out = *all;
    if (n <= 0 || n >= all->count)
        return 0;
    out->count = n;
    out->paths = malloc((size_t)n * sizeof *out->paths);
    out->labels = malloc((size_t)n * sizeof *out->labels);
    if (!out->paths || !out->labels)
        return -1;
    for (int i = 0; i < n; i++) {
        int j = (int)((long long)i * all->count / n);
        out->paths[i] = all->paths[j];
        out->labels[i] = all->labels[j];
    }
    return 1;
}

static void announce(const struct imgclf_opts *o, const struct dataset *d,
                     const struct cnn *net)
{
    char buf[64];
    mlb_meta("model", "small-cnn");
    mlb_meta("dataset", d->source);
    snprintf(buf, sizeof buf, "%dx%dx%d", d->height, d->width, d->channels);
    mlb_meta("image_shape", buf);
    snprintf(buf, sizeof buf, "%d", o->batch);
    mlb_meta("batch_size", buf);
    mlb_meta("precision", o->precision == CNN_BF16 ? "bf16" : "fp32");
    if (net && !o->dev.cuda)
        mlb_meta("cpu_kernel", cnn_kernel(net));
    mlb_meta("device", o->dev.cuda ? "cuda" : "cpu");
    mlb_meta("device_name", o->dev.name);
    snprintf(buf, sizeof buf, "%d", o->threads);
    mlb_meta("threads", buf);
    snprintf(buf, sizeof buf, "%d", o->loader_threads);
    mlb_meta("loader_threads", buf);
    snprintf(buf, sizeof buf, "%d", o->prefetch);
    mlb_meta("prefetch", buf);
    snprintf(buf, sizeof buf, "%d", o->epochs);
    mlb_meta("epochs", buf);
    snprintf(buf, sizeof buf, "%g", o->lr);
    mlb_meta("lr", buf);
    mlb_meta("lr_schedule", o->cosine ? "cosine" : "constant");
}

/* The model being trained: the CPU backend, or the CUDA one (started from the CPU net's
 * weights, so that both start alike for a seed). */
struct model {
    struct cnn *cpu;
    const struct cuda_backend *cuda;
    struct cuda_cnn *gpu;
};

static double model_step(struct model *m, const struct batch *b, double lr,
                         const struct imgclf_opts *o)
{
    if (m->gpu)
        return m->cuda->cnn_train_step(m->gpu, b->x, b->labels, b->n, (float)lr,
                                       (float)o->momentum, (float)o->weight_decay);
    return cnn_train_step(m->cpu, b->x, b->labels, b->n, (float)lr, (float)o->momentum,
                          (float)o->weight_decay);
}

/* Images of b predicted right; -1 on a GPU error (model_error says which). */
static int model_predict(struct model *m, const struct batch *b, int *pred)
{
    if (m->gpu)
        return m->cuda->cnn_predict(m->gpu, b->x, b->labels, b->n, pred);
    return cnn_predict(m->cpu, b->x, b->labels, b->n, pred);
}

static const char *model_error(const struct model *m)
{
    return m->gpu ? m->cuda->cnn_error(m->gpu) : "";
}

/* The loader of the evaluation: val, read and decoded with the same loader settings (no
 * augmentation, no stage markers of its own: it is all `evaluate`). */
static struct loader_config eval_config(const struct imgclf_opts *o, const struct dataset *d)
{
    return (struct loader_config){
        .split = &d->val, .width = d->width, .height = d->height, .channels = d->channels,
        .batch = o->batch < 256 ? 256 : o->batch, .threads = o->loader_threads,
        .prefetch = o->loader_threads ? 1 : 0, .seed = o->seed,
    };
}

/* Val accuracy of the model. -1 on failure, -2 out of memory (err says what). */
static double evaluate(struct model *net, const struct imgclf_opts *o, const struct dataset *d,
                       long *skipped, char *err, size_t errlen)
{
    struct loader_config lc = eval_config(o, d);
    struct loader *l = loader_start(&lc, 0, err, errlen);
    if (!l)
        return errno == ENOMEM ? -2 : -1;
    int *pred = malloc((size_t)lc.batch * sizeof *pred);
    long correct = 0, seen = 0;
    const struct batch *b;
    int failed = 0;
    while (pred && !failed && (b = loader_next(l))) {
        int right = model_predict(net, b, pred);
        failed = right < 0;
        correct += right;
        seen += b->n;
    }
    if (failed) {
        snprintf(err, errlen, "%s", model_error(net));
        free(pred);
        loader_free(l);
        return device_error_is_oom(err) ? -2 : -1;
    }
    *skipped = loader_skipped(l, NULL, NULL);
    free(pred);
    loader_free(l);
    if (!pred) {
        snprintf(err, errlen, "cannot allocate the predictions of %d images", lc.batch);
        return -2;
    }
    if (seen == 0) {
        snprintf(err, errlen, "no readable val image");
        return -1;
    }
    return (double)correct / (double)seen;
}

static void report_skips(struct loader *l, long *total)
{
    const char *path, *reason;
    long n = loader_skipped(l, &path, &reason);
    if (n > 0 && *total == 0)
        wl_error(WL, "skipped %s: %s (unreadable or corrupt images are skipped and counted)",
                 path, reason);
    *total += n;
}

/* What a run has measured so far, for the summary. */
struct run_totals {
    long images, skipped, val_skipped, step;
    double train_s;   /* inside the "train" stages */
    double reached_s; /* when val accuracy first reached --target-accuracy; -1: not yet */
    double acc, loss; /* the last epoch's val accuracy (-1: none) and mean train loss */
};

/* The learning rate of the step: --lr, cosine-decayed over total_steps when asked, with a
 * linear warm-up over the first warmup_steps (Goyal et al., 2017: the linearly scaled rate of a
 * large batch can kill the ReLUs in the first steps otherwise). */
static double step_lr(const struct imgclf_opts *o, long step, long total_steps, long warmup_steps)
{
    double lr = o->cosine ? 0.5 * o->lr * (1 + cos(M_PI * (double)step / total_steps)) : o->lr;
    if (step < warmup_steps) /* large batches' large rates need a gentle start */
        lr *= (double)(step + 1) / (double)warmup_steps;
    return lr;
}

/* The batches of one epoch from l: one training step each (none with --input-only). Adds to
 * t->images, t->step and t->train_s; *loss: the epoch's mean loss. 0, or 1 (message printed)
 * when the model fails or the loss diverges, WL_EXIT_OOM when the GPU's memory ran out. */
static int train_epoch(struct model *net, struct loader *l, const struct imgclf_opts *o,
                       long total_steps, long warmup_steps, struct run_totals *t, double *loss)
{
    const struct batch *b;
    long epoch_steps = 0;
    double epoch_loss = 0;
    int status = 0;
    while ((b = loader_next(l))) {
        if (b->n == 0)
            continue;
        t->images += b->n;
        if (o->input_only)
            continue;
        mlb_stage_begin("train");
        double ts = wl_now();
        double step_loss = model_step(net, b, step_lr(o, t->step, total_steps, warmup_steps), o);
        t->train_s += wl_now() - ts;
        mlb_stage_end("train");
        mlb_counter("images", b->n);
        if (t->step++ % 10 == 0)
            mlb_counter("loss", step_loss);
        epoch_loss += step_loss;
        epoch_steps++;
        if (!isfinite(step_loss) && device_error_is_oom(model_error(net))) {
            status = wl_out_of_memory(WL, "step %ld: %s", t->step, model_error(net));
            break;
        }
        if (!isfinite(step_loss) && *model_error(net)) {
            wl_error(WL, "step %ld: %s", t->step, model_error(net));
            status = 1;
            break;
        }
        if (!isfinite(step_loss)) {
            wl_error(WL, "the loss diverged (%g) at step %ld: lower --lr (now %g)", step_loss,
                     t->step, o->lr);
            status = 1;
            break;
        }
    }
    *loss = epoch_steps ? epoch_loss / epoch_steps : 0;
    return status;
}

/* The epochs: train on lc's batches, then evaluate on val, with the per-epoch line. t0: the
 * run's start, for the time to the target. 0, or 1 or WL_EXIT_OOM with the message printed. */
static int train_epochs(struct model *net, const struct imgclf_opts *o, const struct dataset *d,
                        const struct loader_config *lc, double t0, struct run_totals *t)
{
    char err[256];
    /* Steps of the whole run, for the cosine schedule (an upper bound when files are skipped). */
    long total_steps = (long)o->epochs * ((lc->split->count + o->batch - 1) / o->batch);
    long warmup_steps = total_steps / 20 > 1 ? total_steps / 20 : 1; /* 5 % of the steps */
    for (int epoch = 0; epoch < o->epochs; epoch++) {
        double te = wl_now();
        struct loader *l = loader_start(lc, epoch, err, sizeof err);
        if (!l && errno == ENOMEM)
            return wl_out_of_memory(WL, "%s", err);
        if (!l) {
            wl_error(WL, "%s", err);
            return 1;
        }
        double loss;
        int status = train_epoch(net, l, o, total_steps, warmup_steps, t, &loss);
        report_skips(l, &t->skipped);
        loader_free(l);
        if (status)
            return status;
        if (o->input_only)
            continue;
        t->loss = loss;
        mlb_stage_begin("evaluate");
        t->acc = evaluate(net, o, d, &t->val_skipped, err, sizeof err);
        mlb_stage_end("evaluate");
        if (t->acc == -2)
            return wl_out_of_memory(WL, "evaluate: %s", err);
        if (t->acc < 0) {
            wl_error(WL, "evaluate: %s", err);
            return 1;
        }
        mlb_counter("accuracy", t->acc);
        if (t->reached_s < 0 && t->acc >= o->target) {
            t->reached_s = wl_now() - t0;
            mlb_counter("time_to_target_s", t->reached_s);
        }
        if (!o->quiet)
            printf("epoch %d/%d: train loss %.4f, val accuracy %.4f, %.1f s\n", epoch + 1,
                   o->epochs, t->loss, t->acc, wl_now() - te);
    }
    return 0;
}

/* The run's counters and summary line (status 0), and the skipped images (any status). */
static void summarise(const struct imgclf_opts *o, const struct run_totals *t, int status,
                      double total_s, double flops_step)
{
    long images = t->images, skipped = t->skipped + t->val_skipped;
    if (skipped)
        mlb_counter("skipped_images", (double)skipped);
    if (status == 0 && o->input_only) {
        mlb_counter("input_images_per_s", images / total_s);
        printf("input only: %ld images in %.2f s, %.0f images/s, %d loader thread(s)\n", images,
               total_s, images / total_s, o->loader_threads);
    } else if (status == 0) {
        double ips = t->train_s > 0 ? images / t->train_s : 0;
        mlb_counter("train_images_per_s", ips);
        mlb_counter("train_gflops", ips * flops_step * 1e-9);
        printf("imgclf: %ld images in %d epoch(s), %.1f s; train %.0f images/s (%.1f GFLOP/s); "
               "last epoch's train loss %.6f; val accuracy %.4f",
               images, o->epochs, total_s, ips, ips * flops_step * 1e-9, t->loss, t->acc);
        if (t->reached_s >= 0)
            printf("; %.0f %% reached after %.1f s\n", 100 * o->target, t->reached_s);
        else
            printf("; %.0f %% not reached\n", 100 * o->target);
    }
    if (skipped)
        printf("skipped %ld unreadable or corrupt image(s)\n", skipped);
}

/* --max-memory: what the run allocates whose size it knows, at its peak: the model
 * (cnn_memory_bytes; none with --input-only), with --device cuda the GPU's buffers for the batch
 * (cnn_cuda_memory_bytes), and the larger of the training loader's and the evaluation loader's
 * buffers (loader_memory_bytes; one exists at a time). Linear in the batch (the evaluation
 * reads at least 256 images at a time, so below 256 its part is flat). Over the limit: the
 * out-of-memory message, and WL_EXIT_OOM; else 0. */
static int check_memory(const struct imgclf_opts *o, const struct dataset *d,
                        const struct cnn_shape *shape, const struct loader_config *lc)
{
    double model = 0, gpu = 0, train = loader_memory_bytes(lc), eval = 0;
    if (!o->input_only) {
        model = cnn_memory_bytes(shape, o->dev.cuda ? 1 : o->threads, o->precision);
        struct loader_config ec = eval_config(o, d);
        eval = loader_memory_bytes(&ec);
        if (o->dev.cuda)
            gpu = cnn_cuda_memory_bytes(shape, o->batch);
    }
    double total = model + gpu + (train > eval ? train : eval);
    if (total <= (double)o->max_memory)
        return 0;
    char b[6][32], gpu_part[64] = "";
    if (gpu > 0)
        snprintf(gpu_part, sizeof gpu_part, "GPU buffers %s, ",
                 wl_format_bytes(gpu, b[5], sizeof b[5]));
    return wl_out_of_memory(WL, "batch %d needs %s, over --max-memory %s (model %s, %straining "
                                "batches %s, evaluation batches %s: the larger counts)",
                            o->batch, wl_format_bytes(total, b[0], sizeof b[0]),
                            wl_format_bytes((double)o->max_memory, b[1], sizeof b[1]),
                            wl_format_bytes(model, b[2], sizeof b[2]), gpu_part,
                            wl_format_bytes(train, b[3], sizeof b[3]),
                            wl_format_bytes(eval, b[4], sizeof b[4]));
}

static int run(const struct imgclf_opts *o, const struct dataset *d)
{
    char err[256];
    int pad = o->pad >= 0 ? o->pad : d->width < 64 ? 2 : d->width / 16;
    if (pad >= d->width) {
        wl_error(WL, "--pad %d must be smaller than the images' width (%d)", pad, d->width);
        return 2;
    }
    struct dataset_split train;
    int owned = subset(&d->train, o->train_images, &train); /* nonzero: ours to free */
    struct cnn_shape shape = {d->height, d->width, d->channels, d->classes};
    struct model net = {.cuda = o->dev.cuda};
    int status = 0;
    if (owned < 0) {
        wl_error(WL, "out of memory");
        status = 1;
        goto done;
    }
    struct loader_config lc = {
        .split = &train, .width = d->width, .height = d->height, .channels = d->channels,
        .batch = o->batch, .threads = o->loader_threads, .prefetch = o->prefetch,
        .shuffle = 1, .aug = {.pad = pad, .flip = 1},
        .seed = o->seed, .marks = 1,
    };
    if (o->max_memory > 0 && (status = check_memory(o, d, &shape, &lc)))
        goto done;
    /* On the GPU the CPU net only gives the seeded starting weights: one thread is enough. */
    errno = 0;
    if (!o->input_only &&
        (!(net.cpu = cnn_create(&shape, o->seed, net.cuda ? 1 : o->threads, err, sizeof err)) ||
         (net.cuda && !(net.gpu = net.cuda->cnn_create(&shape, cnn_params(net.cpu), o->batch,
                                                       err, sizeof err))))) {
        if ((!net.cpu && errno == ENOMEM) || device_error_is_oom(err))
            status = wl_out_of_memory(WL, "%s%s", net.cpu ? "--device cuda: " : "", err);
        else {
            wl_error(WL, "%s%s", net.cuda && net.cpu ? "--device cuda: " : "", err);
            status = net.cpu ? 1 : 2;
        }
        goto done;
    }
    errno = 0;
    if (net.cpu && !net.cuda && cnn_set_precision(net.cpu, o->precision, err, sizeof err)) {
        status = errno == ENOMEM ? wl_out_of_memory(WL, "%s", err) : 1;
        if (status == 1)
            wl_error(WL, "%s", err);
        goto done;
    }
    announce(o, d, net.cpu);
    struct run_totals totals = {.reached_s = -1, .acc = -1};
    double t0 = wl_now();
    status = train_epochs(&net, o, d, &lc, t0, &totals);
    summarise(o, &totals, status, wl_now() - t0, cnn_flops_train(&shape));
done:
    if (owned) {
        free(train.paths);
        free(train.labels);
    }
    if (net.gpu)
        net.cuda->cnn_free(net.gpu);
    cnn_free(net.cpu);
    return status;
}

int imgclf_main(int argc, char **argv)
{
    struct imgclf_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    struct dataset d;
    char err[512];
    rc = dataset_open(&o.data, &d, err, sizeof err);
    if (rc != DATASET_OK) {
        wl_error(WL, "%s", err);
        return rc == DATASET_BAD_INPUT ? 2 : 1;
    }
    if (o.prepare_only) {
        printf("%s: %d train and %d val images of %dx%dx%d in %s%s\n", d.source, d.train.count,
               d.val.count, d.height, d.width, d.channels, d.dir,
               d.prepared_now ? "" : " (already prepared)");
        dataset_free(&d);
        return 0;
    }
    rc = run(&o, &d);
    dataset_free(&d);
    return rc;
}
