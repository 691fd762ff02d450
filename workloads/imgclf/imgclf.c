/* imgclf: the image-classification reference workload (docs/workloads.md): JPEG files on disk
 * -> load -> preprocess (decode, random crop with padding, flip, normalise) -> train a small CNN
 * (cnn.h) -> evaluate on val, with the input pipeline's knobs (loader threads, prefetch, batch,
 * threads) that the seed scenario's optimisations are about. Stages, counters and metadata go
 * to mlbench through the marker API. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/device.h"
#include "common/opts.h"
#include "common/cpu.h"
#include "imgclf/cnn.h"
#include "imgclf/cnn_file.h"
#include "imgclf/cnn_gemm.h"
#include "imgclf/data/dataset.h"
#include "imgclf/dist.h"
#include "imgclf/loader.h"
#include "imgclf/train.h"
#include "mlbench/marker.h"
#include "workloads.h"

#define WL "imgclf"

struct imgclf_opts {
    struct dataset_spec data;
    int epochs, batch, threads, loader_threads, prefetch;
    double lr, momentum, weight_decay, target;
    double until;     /* --until-accuracy; -1: a fixed run of --epochs */
    int max_epochs;   /* with --until-accuracy */
    long eval_every;  /* steps between evaluations; 0: at the end of each epoch */
    int cosine;
    int pad; /* -1: the default for the image size */
    struct device dev; /* --device: the CPU, or a GPU through the CUDA backend */
    enum cnn_precision precision; /* --precision: CNN_BF16 on the CPU only */
    uint64_t seed;
    int train_images; /* 0: all of train */
    int input_only, prepare_only, quiet;
    int64_t max_memory; /* --max-memory in bytes; 0: none */
    const char *save_model; /* --save-model FILE; NULL: none */
    int ranks;          /* --ranks: data-parallel over the MPI job's ranks */
    int check_replicas; /* --check-replicas */
    struct dist dist;   /* with ranks: this rank */
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
    "  --until-accuracy X    train until val accuracy reaches X (0 < X <= 1), then stop; the\n"
    "                        clock (time_to_target_s) runs from the first epoch's start to the\n"
    "                        end of that evaluation, evaluations included; exit 4 when\n"
    "                        --max-epochs pass without it. Not with --epochs or\n"
    "                        --target-accuracy\n"
    "  --max-epochs N        with --until-accuracy: at most N epochs (default 20); the cosine\n"
    "                        schedule decays over all N\n"
    "  --eval-every STEPS    evaluate every STEPS training steps, and after the last one\n"
    "                        (default: at the end of each epoch)\n"
    "  --batch N             images per step (default 32)\n"
    "  --lr X                learning rate (default 0.02 x batch/32, at most 0.1)\n"
    "  --lr-schedule cosine|constant   cosine: decays to 0 over the run (default; with\n"
    "                        --until-accuracy over --max-epochs); both start with a linear\n"
    "                        warm-up over the first 5 % of the steps\n"
    "  --momentum X          SGD momentum (default 0.9)\n"
    "  --pad N               random crops from the image padded by N pixels; 0 = no crop\n"
    "                        (default 2, or width/16 from 64 pixels up)\n"
    "  --weight-decay X      L2 weight decay (default 0)\n"
    "  --threads N           compute threads for training (default: all CPUs)\n"
    "  --loader-threads N    threads that load and preprocess; 0 = serial in the training\n"
    "                        thread, the baseline (default 0)\n"
    "  --prefetch K          batches prepared ahead of training (needs --loader-threads >= 1)\n"
    "  --seed N              seed of weights, order and augmentation (default 1)\n"
    "  --target-accuracy X   report the time to reach this val accuracy, without stopping\n"
    "                        (default 0.9)\n"
    "  --device cpu|cuda     cuda: train on the GPU through the CUDA backend (fp32)\n"
    "  --precision fp32|bf16  bf16: mixed precision on the CPU (AVX512_BF16): GEMM operands in\n"
    "                        bf16, sums, master weights and update in fp32 (default fp32)\n"
    "  --input-only          load and preprocess the epochs without training\n"
    "  --prepare-only        prepare the dataset and exit\n"
    "  --quiet               no per-epoch lines\n"
    "  --max-memory SIZE     fail as out of memory (exit 3) when the buffers the batch needs\n"
    "                        (model, batches, GPU buffers) exceed SIZE, e.g. 64MiB\n"
    "  --save-model FILE     after training, write the model to FILE (atomically), for\n"
    "                        `mlbench-workload serve --model FILE`\n"
    "  --ranks               train data-parallel over the ranks of an MPI job (run under\n"
    "                        mpirun -n N): each rank takes an equal shard of every --batch\n"
    "                        images, gradients summed by MPI_Allreduce (stage allreduce);\n"
    "                        --threads defaults to the CPUs over the ranks on the host\n"
    "  --check-replicas      with --ranks: check after every step that all ranks hold the\n"
    "                        same weights (always checked once at the end)\n";

/* Checks --until-accuracy, --max-epochs and --eval-every against each other and the rest, and
 * fills in the defaults of --epochs, --max-epochs and --target-accuracy. 0, or -1 with the
 * message printed. */
static int until_options(struct imgclf_opts *o)
{
    int until = o->until >= 0;
    if (until && o->until == 0) {
        wl_error(WL, "--until-accuracy '0' must be above 0 and at most 1 (a fraction: 0.9 is "
                     "90 %%)");
        return -1;
    }
    if (until && o->epochs) {
        wl_error(WL, "--epochs %d and --until-accuracy: a run to a target has no fixed length; "
                     "give its limit as --max-epochs %d instead", o->epochs, o->epochs);
        return -1;
    }
    if (until && o->target >= 0) {
        wl_error(WL, "--target-accuracy %g and --until-accuracy %g: --until-accuracy is the "
                     "target (its time is time_to_target_s); drop --target-accuracy",
                 o->target, o->until);
        return -1;
    }
    if (!until && o->max_epochs) {
        wl_error(WL, "--max-epochs %d is the limit of --until-accuracy; a fixed run takes "
                     "--epochs %d", o->max_epochs, o->max_epochs);
        return -1;
    }
    if (o->input_only && (until || o->eval_every)) {
        wl_error(WL, "--input-only trains and evaluates nothing: drop %s", until ?
                 "--until-accuracy" : "--eval-every");
        return -1;
    }
    if (!o->epochs)
        o->epochs = 3;
    if (!o->max_epochs) /* the cap on a missed target's cost and the schedule's length */
        o->max_epochs = 20;
    if (until)
        o->target = o->until;
    else if (o->target < 0)
        o->target = 0.9;
    return 0;
}

/* --save-model FILE, before the training rather than after it: a model trained but not
 * writable would be lost. 0, or -1 with the message printed. */
static int save_model_check(const struct imgclf_opts *o)
{
    if (o->input_only || o->prepare_only) {
        wl_error(WL, "--save-model %s: %s trains no model; drop one of them", o->save_model,
                 o->input_only ? "--input-only" : "--prepare-only");
        return -1;
    }
    char *copy = strdup(o->save_model);
    if (!copy) {
        wl_error(WL, "out of memory");
        return -1;
    }
    const char *dir = dirname(copy);
    int ok = access(dir, W_OK | X_OK) == 0;
    int e = errno;
    if (!ok)
        wl_error(WL, "--save-model %s: cannot write into the directory '%s' (%s): choose a "
                     "writable place", o->save_model, dir, strerror(e));
    free(copy);
    return ok ? 0 : -1;
}

/* Writes the trained model to --save-model's file (from the GPU first with --device cuda).
 * 0, or 1 with the message printed. */
static int save_model(const struct imgclf_opts *o, struct model *net,
                      const struct cnn_shape *shape)
{
    char err[512];
    if (net->gpu && net->cuda->cnn_get_params(net->gpu, cnn_params(net->cpu)) != 0) {
        wl_error(WL, "--save-model %s: cannot copy the weights from the GPU: %s", o->save_model,
                 net->cuda->cnn_error(net->gpu));
        return 1;
    }
    if (cnn_file_save(o->save_model, shape, cnn_params(net->cpu), cnn_param_count(net->cpu),
                      err, sizeof err) != 0) {
        wl_error(WL, "--save-model: %s", err);
        return 1;
    }
    printf("imgclf: saved the model (%dx%dx%d, %d classes, %zu parameters) to %s\n",
           shape->height, shape->width, shape->channels, shape->classes,
           cnn_param_count(net->cpu), o->save_model);
    return 0;
}

/* Parses argv into *o. Returns 0, 1 after --help, or -1 on bad input (message printed). */
static int parse(int argc, char **argv, struct imgclf_opts *o)
{
    static const char *const datasets[] = {"fashion-mnist", "synthetic", NULL};
    static const char *const devices[] = {"cpu", "cuda", NULL};
    static const char *const schedules[] = {"cosine", "constant", NULL};
    int dataset = 0, device = 0, precision = 0, schedule = 0, image_size = 0;
    memset(o, 0, sizeof *o);
    o->batch = 32;
    o->momentum = 0.9;
    o->seed = 1; /* --threads: 0 until given (resolved in resolve_ranks) */
    o->target = -1; /* -1 here and below: not given */
    o->until = -1;
    o->pad = -1;
    const struct wl_opt table[] = {
        WL_CHOICE("dataset", &dataset, datasets),
        WL_STRING("data-dir", &o->data.dir),
        WL_INT("image-size", &image_size, 8, 1024),
        WL_INT("train-images", &o->train_images, 1, 10000000),
        WL_INT("val-images", &o->data.val_count, 1, 10000000),
        WL_INT("epochs", &o->epochs, 1, 100000),
        WL_DOUBLE("until-accuracy", &o->until, 0, 1),
        WL_INT("max-epochs", &o->max_epochs, 1, 100000),
        WL_LONG("eval-every", &o->eval_every, 1, 1000000000),
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
        WL_STRING("save-model", &o->save_model),
        WL_FLAG("ranks", &o->ranks),
        WL_FLAG("check-replicas", &o->check_replicas),
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
    if (until_options(o))
        return -1;
    if (o->check_replicas && !o->ranks) {
        wl_error(WL, "--check-replicas compares the ranks' weights: it needs --ranks");
        return -1;
    }
    if (o->ranks && (device != 0 || o->input_only)) {
        wl_error(WL, "--ranks trains on the CPU: drop %s", device != 0 ? "--device cuda (the "
                 "CUDA backend trains in one process so far)" : "--input-only (it trains "
                 "nothing to spread over ranks)");
        return -1;
    }
    if (o->save_model && save_model_check(o))
        return -1;
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
    snprintf(buf, sizeof buf, "%d", o->until >= 0 ? o->max_epochs : o->epochs);
    mlb_meta(o->until >= 0 ? "max_epochs" : "epochs", buf);
    if (o->until >= 0) {
        snprintf(buf, sizeof buf, "%g", o->until);
        mlb_meta("until_accuracy", buf);
    }
    snprintf(buf, sizeof buf, "%ld", o->eval_every);
    mlb_meta("eval_every", o->eval_every ? buf : "epoch");
    snprintf(buf, sizeof buf, "%g", o->lr);
    mlb_meta("lr", buf);
    mlb_meta("lr_schedule", o->cosine ? "cosine" : "constant");
    if (o->ranks) {
        snprintf(buf, sizeof buf, "%d", o->dist.size);
        mlb_meta("ranks", buf);
        snprintf(buf, sizeof buf, "%d", o->batch / o->dist.size);
        mlb_meta("batch_per_rank", buf);
    }
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
    const struct dist *dist = o->ranks ? &o->dist : NULL;
    struct loader_config lc = {
        .split = &train, .width = d->width, .height = d->height, .channels = d->channels,
        .batch = dist ? o->batch / dist->size : o->batch, .threads = o->loader_threads,
        .prefetch = o->prefetch, .shuffle = 1, .aug = {.pad = pad, .flip = 1},
        .seed = o->seed, .marks = 1, .shard = dist ? dist->rank : 0,
        .shards = dist ? dist->size : 1,
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
    if (!dist || dist->rank == 0)
        announce(o, d, net.cpu);
    struct loader_config ec = eval_config(o, d);
    struct dataset_split val_shard = d->val; /* with ranks: this rank's even share of val */
    if (dist) {
        int lo = (int)((long long)d->val.count * dist->rank / dist->size);
        int hi = (int)((long long)d->val.count * (dist->rank + 1) / dist->size);
        val_shard.paths += lo;
        val_shard.labels += lo;
        val_shard.count = hi - lo;
        ec.split = &val_shard;
    }
    const struct train_config tc = {
        .dist = dist, .check_replicas = o->check_replicas,
        .train = &lc, .eval = &ec, .until = o->until >= 0, .target = o->target,
        .epochs = o->until >= 0 ? o->max_epochs : o->epochs, .eval_every = o->eval_every,
        .lr = o->lr, .momentum = o->momentum, .weight_decay = o->weight_decay,
        .cosine = o->cosine, .input_only = o->input_only, .quiet = o->quiet,
    };
    struct run_totals totals;
    /* The clock of time_to_target_s starts here: after the dataset's listing and the model's
     * creation, before the first epoch's loader (MLPerf: when the data is first touched). */
    double t0 = wl_now();
    status = train_run(&net, &tc, t0, &totals);
    int lead = !dist || dist->rank == 0; /* the one that reports and saves */
    if (lead)
        train_summarise(&tc, &totals, status, wl_now() - t0, cnn_flops_train(&shape));
    /* A missed target still trained a model: it is saved as well. */
    if (lead && o->save_model && (status == 0 || status == WL_EXIT_TARGET_MISSED) &&
        save_model(o, &net, &shape))
        status = 1;
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

/* --ranks: joins the MPI job and settles what depends on the ranks. 0, or 2 with the message
 * printed (by rank 0 where every rank finds the same fault). */
static int start_ranks(int *argc, char ***argv, struct imgclf_opts *o)
{
    if (dist_init(argc, argv, &o->dist))
        return 2;
    if (o->batch % o->dist.size) {
        if (o->dist.rank == 0)
            wl_error(WL, "--batch %d cannot be shared evenly by %d ranks: give a multiple of %d "
                         "(each rank takes --batch / ranks images of every step)",
                     o->batch, o->dist.size, o->dist.size);
        dist_finalize();
        return 2;
    }
    if (!o->threads) { /* the host's CPUs shared by its ranks */
        o->threads = wl_online_cpus() / o->dist.local_size;
        if (o->threads < 1)
            o->threads = 1;
    }
    o->quiet |= o->dist.rank != 0;
    return 0;
}

/* Ends the run of a rank: a status every rank reached alike (0, a missed target) ends it
 * normally; any other may be this rank's alone while the others wait on it: the job ends. */
static int end_ranks(const struct imgclf_opts *o, int rc)
{
    if (!o->ranks)
        return rc;
    if (rc == 0 || rc == WL_EXIT_TARGET_MISSED) {
        dist_finalize();
        return rc;
    }
    wl_error(WL, "rank %d: exit status %d: stopping the other ranks", o->dist.rank, rc);
    dist_abort(rc);
}

int imgclf_main(int argc, char **argv)
{
    struct imgclf_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.ranks && (rc = start_ranks(&argc, &argv, &o)))
        return rc;
    if (!o.threads)
        o.threads = wl_online_cpus();
    struct dataset d;
    char err[512];
    /* With ranks, rank 0 prepares the dataset (once) before the others read it. */
    if (!o.ranks || o.dist.rank == 0)
        rc = dataset_open(&o.data, &d, err, sizeof err);
    if (o.ranks) {
        dist_barrier();
        if (o.dist.rank != 0)
            rc = dataset_open(&o.data, &d, err, sizeof err);
    }
    if (rc != DATASET_OK) {
        wl_error(WL, "%s", err);
        return end_ranks(&o, rc == DATASET_BAD_INPUT ? 2 : 1);
    }
    if (o.prepare_only) {
        printf("%s: %d train and %d val images of %dx%dx%d in %s%s\n", d.source, d.train.count,
               d.val.count, d.height, d.width, d.channels, d.dir,
               d.prepared_now ? "" : " (already prepared)");
        dataset_free(&d);
        return end_ranks(&o, 0);
    }
    rc = run(&o, &d);
    dataset_free(&d);
    return end_ranks(&o, rc);
}
