/* train: imgclf's training loop (see train.h): SGD steps over the epochs' batches, evaluations
 * on their schedule, the time to the target accuracy and the stop at --until-accuracy. */
#include "imgclf/train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/opts.h"
#include "mlbench/marker.h"

#define WL "imgclf"

/* checkpoint's status when the run reached --until-accuracy and stops: not an exit status. */
#define REACHED (-1)

/* Whether this process sends the run's counters: with ranks, rank 0 only (global figures). */
static int g_counters = 1;

static void count(const char *name, double value)
{
    if (g_counters)
        mlb_counter(name, value);
}

static double model_step(struct model *m, const struct batch *b, double lr,
                         const struct train_config *c)
{
    if (m->gpu)
        return m->cuda->cnn_train_step(m->gpu, b->x, b->labels, b->n, (float)lr,
                                       (float)c->momentum, (float)c->weight_decay);
    return cnn_train_step(m->cpu, b->x, b->labels, b->n, (float)lr, (float)c->momentum,
                          (float)c->weight_decay);
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

/* Val accuracy of the model over lc's images. -1 on failure, -2 out of memory (err says
 * what). */
static double evaluate(struct model *net, const struct loader_config *lc, const struct dist *dist,
                       long *skipped, char *err, size_t errlen)
{
    struct loader *l = loader_start(lc, 0, err, errlen);
    if (!l)
        return errno == ENOMEM ? -2 : -1;
    int *pred = malloc((size_t)lc->batch * sizeof *pred);
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
        snprintf(err, errlen, "cannot allocate the predictions of %d images", lc->batch);
        return -2;
    }
    if (dist) { /* each rank evaluated its shard of val */
        double sums[3] = {(double)correct, (double)seen, (double)*skipped};
        dist_sum_doubles(sums, 3);
        correct = (long)sums[0];
        seen = (long)sums[1];
        *skipped = (long)sums[2];
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

/* The learning rate of the step: --lr, cosine-decayed over total_steps when asked, with a
 * linear warm-up over the first warmup_steps (Goyal et al., 2017: the linearly scaled rate of a
 * large batch can kill the ReLUs in the first steps otherwise). */
static double step_lr(const struct train_config *c, long step, long total_steps,
                      long warmup_steps)
{
    double lr = c->cosine ? 0.5 * c->lr * (1 + cos(M_PI * (double)step / total_steps)) : c->lr;
    if (step < warmup_steps) /* large batches' large rates need a gentle start */
        lr *= (double)(step + 1) / (double)warmup_steps;
    return lr;
}

/* A run between two steps: its schedule and what the next evaluation's line needs. */
struct loop {
    struct model *net;
    const struct train_config *c;
    struct run_totals *t;
    double t0;                      /* the clock's start */
    long total_steps, warmup_steps; /* of the learning-rate schedule */
    int epoch;                      /* the one being trained, from 0 */
    long evaluated_step;            /* t->step at the last evaluation; -1: none yet */
    double epoch_loss, since_loss;  /* sums of the losses of the epoch, since the evaluation */
    long epoch_steps, since_steps;
    double since_t;                 /* end of the last evaluation (or t0) */
    float *sums;                    /* with dist: what the ranks sum at each step (ranks_step) */
};

/* FNV-1a over the model's weights: equal on every rank after each step, or they diverged. */
static uint64_t weights_hash(struct cnn *net)
{
    const unsigned char *p = (const unsigned char *)cnn_params(net);
    size_t n = cnn_param_count(net) * sizeof(float);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* One data-parallel step on this rank's shard b (c->dist): the shard's gradient times its
 * images, its loss times its images and its images are summed over the ranks, so that every
 * rank applies the gradient of the global batch's mean loss (as one process with the whole
 * batch would, up to the order of the float sums). Returns the global batch's mean loss and
 * its images in *images (NaN and 0 when every shard was empty or a label was bad). */
static double ranks_step(struct loop *s, const struct batch *b, double lr, long *images)
{
    struct cnn *net = s->net->cpu;
    struct run_totals *t = s->t;
    size_t np = cnn_param_count(net);
    float *sums = s->sums;
    double t0 = wl_now();
    mlb_stage_begin("train");
    double loss = b->n > 0 ? cnn_loss_grad(net, b->x, b->labels, b->n) : 0;
    if (b->n > 0 && isfinite(loss)) {
        const float *g = cnn_grads(net);
        for (size_t i = 0; i < np; i++)
            sums[i] = g[i] * (float)b->n;
    } else {
        memset(sums, 0, np * sizeof *sums);
    }
    sums[np] = (float)(loss * b->n); /* NaN from a bad label reaches every rank: all stop */
    sums[np + 1] = (float)b->n;
    mlb_stage_end("train");
    double t1 = wl_now();
    mlb_stage_begin("barrier");
    dist_barrier();
    mlb_stage_end("barrier");
    double t2 = wl_now();
    mlb_stage_begin("allreduce");
    dist_sum_floats(sums, np + 2);
    mlb_stage_end("allreduce");
    double t3 = wl_now();
    *images = (long)sums[np + 1];
    if (*images > 0) {
        mlb_stage_begin("update");
        cnn_sgd_update(net, sums, 1.0f / sums[np + 1], (float)lr, (float)s->c->momentum,
                       (float)s->c->weight_decay);
        mlb_stage_end("update");
    }
    double t4 = wl_now();
    t->compute_s += t1 - t0;
    t->barrier_s += t2 - t1;
    t->allreduce_s += t3 - t2;
    t->update_s += t4 - t3;
    t->allreduce_bytes += (double)(np + 2) * sizeof(float);
    return *images > 0 ? sums[np] / sums[np + 1] : NAN;
}

/* With dist: whether every rank holds the same weights; the message printed when not. */
static int replicas_agree(struct loop *s)
{
    if (dist_same(weights_hash(s->net->cpu)))
        return 1;
    wl_error(WL, "rank %d: the weights differ between the ranks after step %ld (the "
                 "allreduce gave the ranks different sums)", s->c->dist->rank, s->t->step);
    return 0;
}

/* Images trained so far over the training set's size: 1.5 is halfway through epoch 2. */
static double epochs_done(const struct loop *s)
{
    int n = s->c->train->split->count;
    return n > 0 ? (double)s->t->images / n : 0;
}

/* One evaluation on val as the stage `evaluate`, its counters and its line. Returns 0 to go on,
 * REACHED when the run is to stop there (--until-accuracy reached), or 1 or WL_EXIT_OOM with the
 * message printed. */
static int checkpoint(struct loop *s)
{
    char err[256];
    struct run_totals *t = s->t;
    const struct train_config *c = s->c;
    mlb_stage_begin("evaluate");
    double acc = evaluate(s->net, c->eval, c->dist, &t->val_skipped, err, sizeof err);
    mlb_stage_end("evaluate");
    if (acc == -2)
        return wl_out_of_memory(WL, "evaluate: %s", err);
    if (acc < 0) {
        wl_error(WL, "evaluate: %s", err);
        return 1;
    }
    t->acc = acc;
    s->evaluated_step = t->step;
    count("accuracy", acc);
    if (acc > t->best_acc) {
        t->best_acc = acc;
        t->best_epoch = s->epoch + 1;
        t->best_step = t->step;
    }
    int reached = t->reached_s < 0 && acc >= c->target;
    if (reached) {
        /* The clock stops here: after the evaluation that reached the target, as MLPerf's. */
        t->reached_s = wl_now() - s->t0;
        t->reached_step = t->step;
        t->reached_epoch = s->epoch + 1;
        t->reached_epochs = epochs_done(s);
        count("time_to_target_s", t->reached_s);
        count("steps_to_target", (double)t->reached_step);
        count("epochs_to_target", t->reached_epochs);
    }
    if (!c->quiet) {
        char step[32] = "";
        if (c->eval_every) /* evaluations within an epoch: say where */
            snprintf(step, sizeof step, ", step %ld", t->step);
        printf("epoch %d/%d%s: train loss %.4f, val accuracy %.4f, %.1f s\n", s->epoch + 1,
               c->epochs, step, s->since_steps ? s->since_loss / s->since_steps : 0, acc,
               wl_now() - s->since_t);
    }
    s->since_loss = 0;
    s->since_steps = 0;
    s->since_t = wl_now();
    return reached && c->until ? REACHED : 0;
}

/* The batches of one epoch from l: one training step each (none with --input-only), with the
 * evaluations of --eval-every between them. Adds to s->t's images, step, train_s and sets its
 * loss (the epoch's mean so far). 0; REACHED; or 1 (message printed) when the model fails or the
 * loss diverges, WL_EXIT_OOM when the GPU's memory ran out. */
static int train_epoch(struct loop *s, struct loader *l)
{
    const struct train_config *c = s->c;
    struct run_totals *t = s->t;
    const struct batch *b;
    s->epoch_loss = 0;
    s->epoch_steps = 0;
    while ((b = loader_next(l))) {
        if (b->n == 0 && !c->dist) /* with ranks, an empty shard still takes part */
            continue;
        long images = b->n;
        double step_loss, lr = step_lr(c, t->step, s->total_steps, s->warmup_steps);
        if (c->input_only) {
            t->images += images;
            continue;
        }
        double ts = wl_now();
        if (c->dist) {
            step_loss = ranks_step(s, b, lr, &images);
        } else {
            mlb_stage_begin("train");
            step_loss = model_step(s->net, b, lr, c);
            mlb_stage_end("train");
        }
        t->train_s += wl_now() - ts;
        if (images == 0)
            continue;
        t->images += images;
        count("images", (double)images);
        if (t->step++ % 10 == 0)
            count("loss", step_loss);
        s->epoch_loss += step_loss;
        s->epoch_steps++;
        s->since_loss += step_loss;
        s->since_steps++;
        t->loss = s->epoch_loss / s->epoch_steps;
        if (!isfinite(step_loss) && device_error_is_oom(model_error(s->net)))
            return wl_out_of_memory(WL, "step %ld: %s", t->step, model_error(s->net));
        if (!isfinite(step_loss) && *model_error(s->net)) {
            wl_error(WL, "step %ld: %s", t->step, model_error(s->net));
            return 1;
        }
        if (!isfinite(step_loss)) {
            wl_error(WL, "the loss diverged (%g) at step %ld: lower --lr (now %g)", step_loss,
                     t->step, c->lr);
            return 1;
        }
        if (c->dist && c->check_replicas && !replicas_agree(s))
            return 1;
        if (c->eval_every && t->step % c->eval_every == 0) {
            int rc = checkpoint(s);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int train_run(struct model *net, const struct train_config *c, double t0, struct run_totals *t)
{
    char err[256];
    memset(t, 0, sizeof *t);
    t->reached_s = t->acc = t->best_acc = -1;
    /* Steps of the whole run, for the cosine schedule (an upper bound when files are skipped):
     * with --until-accuracy, of --max-epochs, whether or not the run stops earlier. */
    long global = (long)c->train->batch * (c->train->shards > 1 ? c->train->shards : 1);
    long per_epoch = (c->train->split->count + global - 1) / global;
    struct loop s = {.net = net, .c = c, .t = t, .t0 = t0, .evaluated_step = -1, .since_t = t0};
    s.total_steps = (long)c->epochs * per_epoch;
    s.warmup_steps = s.total_steps / 20 > 1 ? s.total_steps / 20 : 1; /* 5 % of the steps */
    int status = 0;
    g_counters = !c->dist || c->dist->rank == 0;
    if (c->dist && !c->input_only &&
        !(s.sums = malloc((cnn_param_count(net->cpu) + 2) * sizeof *s.sums)))
        return wl_out_of_memory(WL, "cannot allocate the allreduce buffer");
    for (; s.epoch < c->epochs && status == 0; s.epoch++) {
        struct loader *l = loader_start(c->train, s.epoch, err, sizeof err);
        if (!l) {
            free(s.sums);
            if (errno == ENOMEM)
                return wl_out_of_memory(WL, "%s", err);
            wl_error(WL, "%s", err);
            return 1;
        }
        status = train_epoch(&s, l);
        report_skips(l, &t->skipped);
        loader_free(l); /* also in the middle of an epoch: it stops its threads */
        t->epochs_run = epochs_done(&s);
        if (status || c->input_only)
            continue;
        /* At the end of every epoch by default; with --eval-every, once more at the end of the
         * run so that the final weights are measured. */
        if (!c->eval_every || (s.epoch == c->epochs - 1 && s.evaluated_step != t->step))
            status = checkpoint(&s);
    }
    if (s.sums && (status == 0 || status == REACHED) && !replicas_agree(&s))
        status = 1;
    free(s.sums);
    if (status == REACHED)
        return 0;
    if (status || !c->until || c->input_only)
        return status;
    char where[32] = "";
    if (c->eval_every)
        snprintf(where, sizeof where, ", step %ld", t->best_step);
    wl_error(WL, "did not reach val accuracy %g in %d epoch%s (best %.4f at epoch %d%s): raise "
                 "--max-epochs or lower --until-accuracy",
             c->target, c->epochs, c->epochs == 1 ? "" : "s", t->best_acc, t->best_epoch, where);
    return WL_EXIT_TARGET_MISSED;
}

/* With ranks: rank 0's step split into its parts, and the allreduce's bandwidth as nccl-tests
 * report it: algbw = bytes / time, busbw = algbw x 2(n-1)/n (what each link carries in a ring
 * allreduce, comparable across rank counts). */
static void summarise_ranks(int n, const struct run_totals *t, long images)
{
    double algbw = t->allreduce_s > 0 ? t->allreduce_bytes / t->allreduce_s / 1e9 : NAN;
    double busbw = algbw * 2.0 * (n - 1) / n;
    double steps = t->step > 0 ? (double)t->step : 1;
    count("ranks", n);
    count("train_images_per_s_per_rank", images / t->train_s / n);
    count("allreduce_share", t->allreduce_s / t->train_s);
    count("barrier_share", t->barrier_s / t->train_s);
    if (n > 1 && isfinite(algbw)) { /* one rank sums nothing: no bandwidth to speak of */
        count("allreduce_algbw_GBps", algbw);
        count("allreduce_busbw_GBps", busbw);
    }
    char bw[64] = "";
    if (n > 1 && isfinite(algbw))
        snprintf(bw, sizeof bw, " (algbw %.2f GB/s, busbw %.2f GB/s)", algbw, busbw);
    printf("ranks %d: %.0f images/s per rank; a step: compute %.2f ms, barrier %.2f ms, "
           "allreduce of %.2f MB %.2f ms%s, update %.2f ms; allreduce %.1f %% of the step\n",
           n, images / t->train_s / n, 1e3 * t->compute_s / steps, 1e3 * t->barrier_s / steps,
           t->allreduce_bytes / steps / 1e6, 1e3 * t->allreduce_s / steps, bw,
           1e3 * t->update_s / steps, 100 * t->allreduce_s / t->train_s);
}

void train_summarise(const struct train_config *c, const struct run_totals *t, int status,
                     double total_s, double flops_step)
{
    long images = t->images, skipped = t->skipped + t->val_skipped;
    if (skipped)
        count("skipped_images", (double)skipped);
    if (status == 0 && c->input_only) {
        count("input_images_per_s", images / total_s);
        printf("input only: %ld images in %.2f s, %.0f images/s, %d loader thread(s)\n", images,
               total_s, images / total_s, c->train->threads);
    } else if (status == 0 || status == WL_EXIT_TARGET_MISSED) {
        /* Per image and per second inside the steps: right for a partial last epoch too. */
        double ips = t->train_s > 0 ? images / t->train_s : 0;
        count("train_images_per_s", ips);
        count("train_gflops", ips * flops_step * 1e-9);
        char epochs[48];
        if (c->until)
            snprintf(epochs, sizeof epochs, "%.2f epoch(s) (at most %d)", t->epochs_run,
                     c->epochs);
        else
            snprintf(epochs, sizeof epochs, "%d epoch(s)", c->epochs);
        printf("imgclf: %ld images in %s, %.1f s; train %.0f images/s (%.1f GFLOP/s); "
               "last epoch's train loss %.6f; val accuracy %.4f",
               images, epochs, total_s, ips, ips * flops_step * 1e-9, t->loss, t->acc);
        if (t->reached_s >= 0)
            printf("; %g %% reached after %.1f s (epoch %d, step %ld)\n", 100 * c->target,
                   t->reached_s, t->reached_epoch, t->reached_step);
        else
            printf("; %g %% not reached\n", 100 * c->target);
    }
    if (c->dist && status == 0 && t->train_s > 0)
        summarise_ranks(c->dist->size, t, images);
    if (skipped)
        printf("skipped %ld unreadable or corrupt image(s)\n", skipped);
}
