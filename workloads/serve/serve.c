/* serve: the reference inference server (docs/workloads.md, "serve"): imgclf's CNN, loaded from
 * a model file (imgclf --save-model) or with seeded random weights, served over HTTP with the
 * KServe v2 / Triton JSON protocol (v2.c, http.c) and dynamic batching (batcher.c), until
 * SIGTERM or SIGINT. The target of `mlbench load`. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpu.h"
#include "common/opts.h"
#include "imgclf/cnn.h"
#include "imgclf/cnn_file.h"
#include "imgclf/cnn_gemm.h"
#include "mlbench/marker.h"
#include "serve/batcher.h"
#include "serve/http.h"
#include "serve/v2.h"
#include "workloads.h"

#define WL "serve"

#ifndef SERVE_VERSION
#define SERVE_VERSION "0"
#endif

/* --random-weights' model: Fashion-MNIST's images and classes. */
static const struct cnn_shape random_shape = {28, 28, 1, 10};

struct serve_opts {
    const char *model;    /* --model FILE; NULL: random weights */
    int random_weights;
    const char *listen;
    int max_batch, threads, bf16;
    long max_queue_delay_us;
    int64_t max_body;
    uint64_t seed;
    int seed_given;
};

static const char usage_text[] =
    "usage: mlbench-workload serve [options]\n"
    "  --model FILE            serve the model imgclf --save-model FILE wrote\n"
    "  --random-weights        serve a Fashion-MNIST-shaped model (1x28x28, 10 classes) with\n"
    "                          weights drawn from --seed, for speed tests (default without\n"
    "                          --model)\n"
    "  --listen HOST:PORT      address to serve on (default " HTTP_DEFAULT_LISTEN "; port 0:\n"
    "                          any free port); prints \"listening on http://HOST:PORT\" once\n"
    "                          ready\n"
    "  --max-batch N           images per forward pass, at most; also the largest request\n"
    "                          (default 8)\n"
    "  --max-queue-delay-us U  how long the oldest queued request waits for more to fill the\n"
    "                          batch before a partial batch runs (default 500; 0: never waits)\n"
    "  --threads T             compute threads of the CNN (default: all CPUs)\n"
    "  --precision fp32|bf16   bf16: GEMM operands in bf16 (AVX512_BF16) (default fp32)\n"
    "  --max-body BYTES        largest inference request body, e.g. 64MiB (default 64MiB)\n"
    "  --seed N                seed of --random-weights (default 1)\n"
    "Runs until SIGTERM or SIGINT, then answers the requests already queued and exits 0.\n"
    "Endpoints: GET /v2/health/ready, /v2/health/live, /v2/models/cnn; POST\n"
    "/v2/models/cnn/infer (KServe v2 JSON; docs/workloads.md).\n";

/* Parses argv into *o. 0, 1 after --help, -1 on bad input (message printed). */
static int parse(int argc, char **argv, struct serve_opts *o)
{
    static const char *const precisions[] = {"fp32", "bf16", NULL};
    const uint64_t no_seed = 0x5eed5eed5eed5eedULL; /* a sentinel: was --seed given? */
    int precision = 0;
    memset(o, 0, sizeof *o);
    o->listen = HTTP_DEFAULT_LISTEN;
    o->max_batch = 8;
    o->max_queue_delay_us = 500;
    o->threads = wl_online_cpus();
    o->max_body = 64 << 20;
    o->seed = no_seed;
    const struct wl_opt table[] = {
        WL_STRING("model", &o->model),
        WL_FLAG("random-weights", &o->random_weights),
        WL_STRING("listen", &o->listen),
        WL_INT("max-batch", &o->max_batch, 1, 4096),
        WL_LONG("max-queue-delay-us", &o->max_queue_delay_us, 0, 10000000),
        WL_INT("threads", &o->threads, 1, 1024),
        WL_CHOICE("precision", &precision, precisions),
        WL_SIZE("max-body", &o->max_body),
        WL_U64("seed", &o->seed),
    };
    int rc = opts_parse(WL, argc, argv, table, (int)(sizeof table / sizeof table[0]),
                        usage_text);
    if (rc)
        return rc;
    o->seed_given = o->seed != no_seed;
    if (!o->seed_given)
        o->seed = 1;
    if (o->model && o->random_weights) {
        wl_error(WL, "--model %s and --random-weights: give one (the weights come from the file "
                     "or from --seed)", o->model);
        return -1;
    }
    if (o->model && o->seed_given) {
        wl_error(WL, "--seed is for --random-weights: the weights of --model %s are the file's",
                 o->model);
        return -1;
    }
    o->bf16 = precision == 1;
    if (o->bf16 && !cnn_gemm_bf16_available()) {
        wl_error(WL, "--precision bf16: this CPU has no AVX512_BF16%s (see `mlbench env`): use "
                     "--precision fp32",
                 wl_cpu_disabled(WL_CPU_AVX512_BF16) ? " (MLBENCH_CPU_DISABLE removed it)" : "");
        return -1;
    }
    return 0;
}

/* The model to serve: --model's file, or random weights. NULL with the message printed; *status
 * gets the exit status (2: a bad file, WL_EXIT_OOM, 1). */
static struct cnn *make_model(const struct serve_opts *o, int *status)
{
    char err[512];
    struct cnn_shape shape = random_shape;
    float *params = NULL;
    size_t nparam = 0;
    if (o->model && cnn_file_load(o->model, &shape, &params, &nparam, err, sizeof err) != 0) {
        wl_error(WL, "--model: %s", err);
        *status = errno == ENOMEM ? WL_EXIT_OOM : 2;
        return NULL;
    }
    errno = 0;
    struct cnn *net = cnn_create(&shape, o->seed, o->threads, err, sizeof err);
    if (!net) {
        *status = errno == ENOMEM ? wl_out_of_memory(WL, "%s", err) : 1;
        if (*status == 1)
            wl_error(WL, "%s", err);
        free(params);
        return NULL;
    }
    if (params) {
        memcpy(cnn_params(net), params, nparam * sizeof *params);
        free(params);
    }
    errno = 0;
    if (cnn_set_precision(net, o->bf16 ? CNN_BF16 : CNN_FP32, err, sizeof err) != 0) {
        *status = errno == ENOMEM ? wl_out_of_memory(WL, "%s", err) : 1;
        if (*status == 1)
            wl_error(WL, "%s", err);
        cnn_free(net);
        return NULL;
    }
    return net;
}

static void announce(const struct serve_opts *o, const struct cnn *net, const char *address)
{
    char buf[64];
    const struct cnn_shape s = cnn_shape_of(net);
    mlb_meta("model", "small-cnn");
    mlb_meta("weights", o->model ? o->model : "random");
    snprintf(buf, sizeof buf, "%dx%dx%d", s.height, s.width, s.channels);
    mlb_meta("image_shape", buf);
    mlb_meta("precision", o->bf16 ? "bf16" : "fp32");
    mlb_meta("cpu_kernel", cnn_kernel(net));
    mlb_meta("device", "cpu");
    snprintf(buf, sizeof buf, "%d", o->threads);
    mlb_meta("threads", buf);
    snprintf(buf, sizeof buf, "%d", o->max_batch);
    mlb_meta("max_batch", buf);
    snprintf(buf, sizeof buf, "%ld", o->max_queue_delay_us);
    mlb_meta("max_queue_delay_us", buf);
    mlb_meta("listen", address);
}

/* Serves until SIGTERM or SIGINT. The signals are blocked in every thread (all are started
 * after this) and taken here with sigwait: no handler, nothing to be async-signal-safe. */
static int serve(const struct serve_opts *o, const sigset_t *stop_signals)
{
    char err[512];
    int status = 1;
    struct cnn *net = make_model(o, &status);
    if (!net)
        return status;
    const struct cnn_shape s = cnn_shape_of(net);
    const struct v2_model model = {.name = "cnn", .channels = s.channels, .height = s.height,
                                   .width = s.width, .classes = s.classes,
                                   .max_batch = o->max_batch};
    const struct batcher_config bc = {.net = net, .max_batch = o->max_batch,
                                      .max_queue_delay_us = o->max_queue_delay_us};
    struct batcher *b = batcher_start(&bc, err, sizeof err);
    if (!b) {
        wl_error(WL, "%s", err);
        cnn_free(net);
        return 1;
    }
    const struct http_config hc = {.listen = o->listen, .max_body = o->max_body,
                                   .model = &model, .batcher = b, .version = SERVE_VERSION};
    int bad_address = 0;
    struct http *h = http_start(&hc, &bad_address, err, sizeof err);
    if (!h) {
        wl_error(WL, "%s", err);
        batcher_stop(b);
        batcher_free(b);
        cnn_free(net);
        return bad_address ? 2 : 1;
    }
    announce(o, net, http_address(h));
    printf("listening on http://%s\n", http_address(h));
    fflush(stdout);

    int sig = 0;
    while (sigwait(stop_signals, &sig) != 0) /* only EINVAL, which cannot be */
        ;
    /* New connections are refused and readiness says 503; the queued requests are answered;
     * then the connections close. */
    http_quiesce(h);
    batcher_stop(b);
    http_stop(h);
    struct batcher_totals t = batcher_totals(b);
    batcher_free(b);
    cnn_free(net);
    printf("serve: %s: %ld requests, %ld images in %ld batches (%.2f images a batch), mean "
           "queue wait %.3f ms\n", strsignal(sig), t.requests, t.images, t.batches,
           t.batches ? (double)t.images / (double)t.batches : 0.0,
           t.requests ? 1e3 * t.queue_wait_s / (double)t.requests : 0.0);
    return 0;
}

int serve_main(int argc, char **argv)
{
    struct serve_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error return, not a death */
    return serve(&o, &stop);
}
