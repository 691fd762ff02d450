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
static double evaluate(struct model *net, const struct loader_config *lc, long *skipped,
                       char *err, size_t errlen)
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
};

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
    double acc = evaluate(s->net, c->eval, &t->val_skipped, err, sizeof err);
    mlb_stage_end("evaluate");
    if (acc == -2)
        return wl_out_of_memory(WL, "evaluate: %s", err);
    if (acc < 0) {
        wl_error(WL, "evaluate: %s", err);
        return 1;
    }
    t->acc = acc;
    s->evaluated_step = t->step;
    mlb_counter("accuracy", acc);
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
        mlb_counter("time_to_target_s", t->reached_s);
        mlb_counter("steps_to_target", (double)t->reached_step);
        mlb_counter("epochs_to_target", t->reached_epochs);
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
        if (b->n == 0)
            continue;
        t->images += b->n;
        if (c->input_only)
            continue;
        mlb_stage_begin("train");
        double ts = wl_now();
        double lr = step_lr(c, t->step, s->total_steps, s->warmup_steps);
        double step_loss = model_step(s->net, b, lr, c);
        t->train_s += wl_now() - ts;
        mlb_stage_end("train");
        mlb_counter("images", b->n);
        if (t->step++ % 10 == 0)
            mlb_counter("loss", step_loss);
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
    long per_epoch = (c->train->split->count + c->train->batch - 1) / c->train->batch;
    struct loop s = {.net = net, .c = c, .t = t, .t0 = t0, .evaluated_step = -1, .since_t = t0};
    s.total_steps = (long)c->epochs * per_epoch;
    s.warmup_steps = s.total_steps / 20 > 1 ? s.total_steps / 20 : 1; /* 5 % of the steps */
    int status = 0;
    for (; s.epoch < c->epochs && status == 0; s.epoch++) {
        struct loader *l = loader_start(c->train, s.epoch, err, sizeof err);
        if (!l && errno == ENOMEM)
            return wl_out_of_memory(WL, "%s", err);
        if (!l) {
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

void train_summarise(const struct train_config *c, const struct run_totals *t, int status,
                     double total_s, double flops_step)
{
    long images = t->images, skipped = t->skipped + t->val_skipped;
    if (skipped)
        mlb_counter("skipped_images", (double)skipped);
    if (status == 0 && c->input_only) {
        mlb_counter("input_images_per_s", images / total_s);
        printf("input only: %ld images in %.2f s, %.0f images/s, %d loader thread(s)\n", images,
               total_s, images / total_s, c->train->threads);
    } else if (status == 0 || status == WL_EXIT_TARGET_MISSED) {
        /* Per image and per second inside the steps: right for a partial last epoch too. */
        double ips = t->train_s > 0 ? images / t->train_s : 0;
        mlb_counter("train_images_per_s", ips);
        mlb_counter("train_gflops", ips * flops_step * 1e-9);
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
    if (skipped)
        printf("skipped %ld unreadable or corrupt image(s)\n", skipped);
}
