/* sampler: the sampling thread that runs the metric sources (see sampler.h). */
#include "measure/sampler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sources/facts.h"
#include "sources/sources.h"
#include "util/xalloc.h"
#include "util/clock.h"

struct active_source {
    const struct metric_source *ops;
    void *state;
};

struct sampler {
    struct sampler_config cfg;
    struct series_registry reg;
    struct active_source *src;
    size_t n_src;
    const char **active_names;
    char **skipped;
    size_t n_skipped;
    struct sample_ctx ctx;
    char proc_root[256];

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool running, stop;
    pid_t leader;              /* guarded by mu */
    struct sample_table *tab;  /* written by the thread while running */
    uint64_t errors;           /* guarded by mu */
    int64_t cpu_ns;            /* CPU time the sampling thread used, all runs; guarded by mu */
    sampler_listener listener;
    void *listener_arg;
    size_t keep_rows;          /* 0: all */
};

/* The context sources open with: this machine's facts, /proc or $MLBENCH_PROC_ROOT (copied
 * into proc_root, which ctx then points to). */
static void ctx_init(struct sample_ctx *ctx, char *proc_root, size_t len, bool all_gpus)
{
    const char *root = getenv("MLBENCH_PROC_ROOT");
    snprintf(proc_root, len, "%s", root && *root ? root : "/proc");
    ctx->proc_root = proc_root;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->ncpu = n > 0 ? (int)n : 1;
    ctx->ticks_per_s = sysconf(_SC_CLK_TCK);
    ctx->page_size = sysconf(_SC_PAGESIZE);
    ctx->all_gpus = all_gpus;
}

struct sampler *sampler_open(const struct sampler_config *cfg)
{
    struct sampler *s = xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    ctx_init(&s->ctx, s->proc_root, sizeof s->proc_root, cfg->all_gpus);

    for (const struct metric_source *const *m = metric_sources; *m; m++) {
        char err[512] = "";
        void *state = NULL;
        if ((*m)->open(&s->reg, &s->ctx, &state, err, sizeof err) == 0) {
            s->src = xreallocarray(s->src, s->n_src + 1, sizeof *s->src);
            s->src[s->n_src++] = (struct active_source){*m, state};
            s->active_names = xreallocarray(s->active_names, s->n_src, sizeof *s->active_names);
            s->active_names[s->n_src - 1] = (*m)->name;
        } else {
            s->skipped = xreallocarray(s->skipped, s->n_skipped + 1, sizeof *s->skipped);
            s->skipped[s->n_skipped++] = xasprintf("%s: %s", (*m)->name, err[0] ? err : "unavailable");
        }
    }
    return s;
}

void sampler_facts(const struct sampler *s, struct source_facts *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < s->n_src; i++)
        if (s->src[i].ops->facts)
            s->src[i].ops->facts(s->src[i].state, out);
}

int sampler_source_facts(const char *name, struct source_facts *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct metric_source *m = NULL;
    for (const struct metric_source *const *p = metric_sources; *p && !m; p++)
        if (!strcmp((*p)->name, name))
            m = *p;
    snprintf(err, errlen, "%s", m ? "" : "not a metric source");
    if (!m)
        return -1;
    struct series_registry reg = {.defs = NULL, .n = 0, .cap = 0};
    struct sample_ctx ctx = {.proc_root = NULL};
    char proc_root[256];
    ctx_init(&ctx, proc_root, sizeof proc_root, false);
    void *state = NULL;
    int rc = -1;
    if (m->open(&reg, &ctx, &state, err, errlen) != 0) {
        if (!err[0])
            snprintf(err, errlen, "%s could not be opened", name);
    } else {
        if (m->facts) {
            m->facts(state, out);
            rc = 0;
        } else {
            snprintf(err, errlen, "%s has no static facts", name);
        }
        if (m->close)
            m->close(state);
    }
    series_registry_free(&reg);
    return rc;
}

size_t sampler_skipped(const struct sampler *s, const char *const **reasons)
{
    *reasons = (const char *const *)s->skipped;
    return s->n_skipped;
}

size_t sampler_active(const struct sampler *s, const char *const **names)
{
    *names = s->active_names;
    return s->n_src;
}

uint64_t sampler_errors(const struct sampler *s)
{
    struct sampler *m = (struct sampler *)s; /* the lock is not part of the value */
    pthread_mutex_lock(&m->mu);
    uint64_t n = s->errors;
    pthread_mutex_unlock(&m->mu);
    return n;
}

void sampler_set_listener(struct sampler *s, sampler_listener fn, void *arg)
{
    s->listener = fn;
    s->listener_arg = arg;
}

void sampler_keep_rows(struct sampler *s, size_t n)
{
    s->keep_rows = n;
}

int64_t sampler_cpu_ns(const struct sampler *s)
{
    return s->cpu_ns;
}

/* One tick: a new row, every source in table order. Called on the sampler thread. */
static void sample_once(struct sampler *s)
{
    pthread_mutex_lock(&s->mu);
    s->ctx.leader = s->leader;
    pthread_mutex_unlock(&s->mu);
    s->ctx.n_tree = 0;
    uint64_t errors = 0;
    struct sample_table *tab = s->tab;
    if (s->keep_rows && tab->n >= 2 * s->keep_rows) { /* drop the oldest half: bounded memory */
        size_t drop = tab->n - s->keep_rows;
        memmove(tab->t_ns, tab->t_ns + drop, s->keep_rows * sizeof *tab->t_ns);
        for (size_t i = 0; i < tab->n_series; i++)
            memmove(tab->v[i], tab->v[i] + drop, s->keep_rows * sizeof **tab->v);
        tab->n = s->keep_rows;
    }
    size_t row = sample_table_add_row(tab, mono_ns());
    for (size_t i = 0; i < s->n_src; i++)
        s->src[i].ops->sample(s->src[i].state, &s->ctx, tab, row, &errors);
    if (s->listener)
        s->listener(s->listener_arg, tab, row);
    pthread_mutex_lock(&s->mu);
    s->errors += errors;
    pthread_mutex_unlock(&s->mu);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The time to the next tick, elapsed_ns after the first (sampler.h, SAMPLER_ADAPT_SAMPLES). */
static int64_t tick_step(const struct sampler_config *cfg, int64_t elapsed_ns)
{
    if (!cfg->adaptive)
        return cfg->interval_ns;
    int64_t step = elapsed_ns / SAMPLER_ADAPT_SAMPLES;
    if (step < SAMPLER_MIN_INTERVAL_NS)
        step = SAMPLER_MIN_INTERVAL_NS;
    return step < cfg->interval_ns ? step : cfg->interval_ns;
}

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    int64_t start = mono_ns(), next = start, cpu0 = thread_cpu_ns();
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        pthread_mutex_unlock(&s->mu);
        sample_once(s);
        /* Fixed-rate schedule: a slow tick does not shift the ones after it. */
        int64_t now = mono_ns(), step = tick_step(&s->cfg, now - start);
        next += step;
        if (next < now)
            next = now + step / 2;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until); /* condvars wait on CLOCK_REALTIME by default */
        int64_t wake = (int64_t)until.tv_sec * 1000000000 + until.tv_nsec + (next - now);
        until.tv_sec = wake / 1000000000;
        until.tv_nsec = wake % 1000000000;
        pthread_mutex_lock(&s->mu);
        while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&s->mu);
    sample_once(s); /* the state at the end of the run */
    pthread_mutex_lock(&s->mu);
    s->cpu_ns += thread_cpu_ns() - cpu0;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int sampler_start(struct sampler *s, struct sample_table *tab)
{
    sample_table_init(tab, &s->reg);
    s->tab = tab;
    s->leader = 0;
    s->stop = false;
    for (size_t i = 0; i < s->n_src; i++)
        if (s->src[i].ops->run_start)
            s->src[i].ops->run_start(s->src[i].state);
    if (pthread_create(&s->thread, NULL, sampler_main, s) != 0)
        return -1;
    s->running = true;
    return 0;
}

void sampler_set_leader(struct sampler *s, pid_t leader)
{
    pthread_mutex_lock(&s->mu);
    s->leader = leader;
    pthread_mutex_unlock(&s->mu);
}

void sampler_stop(struct sampler *s)
{
    if (!s->running)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    s->running = false;
    s->tab = NULL;
}

void sampler_close(struct sampler *s)
{
    if (!s)
        return;
    sampler_stop(s);
    for (size_t i = 0; i < s->n_src; i++)
        if (s->src[i].ops->close)
            s->src[i].ops->close(s->src[i].state);
    series_registry_free(&s->reg);
    for (size_t i = 0; i < s->n_skipped; i++)
        free(s->skipped[i]);
    free(s->src);
    free(s->active_names);
    free(s->skipped);
    free(s->ctx.tree);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
