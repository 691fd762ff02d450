/* live_render: the Prometheus exposition of a live aggregate (live_render, see live.h;
 * docs/monitoring.md lists the families). */
#include "live/live.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "live/live_state.h"
#include "live/prometheus.h"
#include "util/clock.h"
#include "util/strbuf.h"

/* The reason labels of mlbench_markers_dropped_total, in enum drop_reason's order. */
static const char *const drop_names[N_DROP] = {
    "stage_limit", "counter_limit", "instant_limit", "metadata_limit",
    "long_name",   "depth_limit",   "thread_limit",
};

/* --- exposition ------------------------------------------------------------------------- */

static void render_samples(const struct live_metrics *m, struct strbuf *b)
{
    const char *family = NULL;
    for (size_t k = 0; k < m->n_series && m->order[k] != SIZE_MAX; k++) {
        const struct live_series *s = &m->series[m->order[k]];
        if (isnan(s->value))
            continue; /* not measured at this tick: absent, never 0 */
        if (!family || strcmp(family, s->name)) {
            prom_family(b, s->name, s->type, s->help);
            family = s->name;
        }
        prom_sample(b, s->name, s->labels, s->value);
    }
}

/* One label list per name of a table, in lb (reset first). */
static const char *name_label(struct strbuf *lb, const char *key, const char *value)
{
    strbuf_reset(lb);
    prom_labels_add(lb, key, value);
    return lb->s;
}

/* mlbench load's queries, once one has ended. */
static void render_queries(const struct live_metrics *m, struct strbuf *b, struct strbuf *lb)
{
    if (!m->queries_seen)
        return;
    prom_family(b, "mlbench_load_latency_seconds", PROM_HISTOGRAM,
                "Latency of each successful query of mlbench load, from the time it was due "
                "(not when it was sent) to the end of its response.");
    prom_histogram(b, "mlbench_load_latency_seconds", "", live_stage_bounds, LIVE_STAGE_BUCKETS,
                   m->query_latency.buckets, m->query_latency.sum_s);
    prom_family(b, "mlbench_load_queries_total", PROM_COUNTER,
                "Queries of mlbench load that ended, by result (ok, failed).");
    prom_sample_u64(b, "mlbench_load_queries_total", name_label(lb, "result", "ok"), m->queries_ok);
    prom_sample_u64(b, "mlbench_load_queries_total", name_label(lb, "result", "failed"),
                    m->queries_failed);
}

static void render_markers(const struct live_metrics *m, struct strbuf *b, struct strbuf *lb)
{
    const struct name_table *sn = &m->stage_names, *cn = &m->counter_names;
    if (sn->n) {
        prom_family(b, "mlbench_stage_duration_seconds", PROM_HISTOGRAM,
                    "Duration of each completed span of a stage, from its begin marker to its "
                    "end marker on the same thread.");
        for (size_t i = 0; i < sn->n; i++)
            prom_histogram(b, "mlbench_stage_duration_seconds",
                           name_label(lb, "stage", sn->names[i]), live_stage_bounds,
                           LIVE_STAGE_BUCKETS, m->stages[i].buckets, m->stages[i].sum_s);
        prom_family(b, "mlbench_stage_active", PROM_GAUGE,
                    "Spans of each stage open now, over all threads and processes.");
        for (size_t i = 0; i < sn->n; i++)
            prom_sample_u64(b, "mlbench_stage_active", name_label(lb, "stage", sn->names[i]),
                            m->stages[i].active);
    }
    if (cn->n) {
        prom_family(b, "mlbench_marker_value", PROM_GAUGE,
                    "Last value of each counter marker (C events: loss, accuracy, images...).");
        for (size_t i = 0; i < cn->n; i++)
            prom_sample(b, "mlbench_marker_value", name_label(lb, "name", cn->names[i]),
                        m->counters[i].last);
        prom_family(b, "mlbench_marker_samples_total", PROM_COUNTER,
                    "Counter marker events received, per counter name.");
        for (size_t i = 0; i < cn->n; i++)
            prom_sample_u64(b, "mlbench_marker_samples_total",
                            name_label(lb, "name", cn->names[i]), m->counters[i].samples);
        bool any = false;
        for (size_t i = 0; i < cn->n; i++) {
            if (!m->counters[i].count_like)
                continue;
            if (!any)
                prom_family(b, "mlbench_marker_sum_total", PROM_COUNTER,
                            "Sum of the values of each count-like counter marker (every value "
                            "a whole number >= 0: images, tokens); its rate is items per second.");
            any = true;
            prom_sample(b, "mlbench_marker_sum_total", name_label(lb, "name", cn->names[i]),
                        m->counters[i].sum);
        }
    }
    if (m->instant_names.n) {
        prom_family(b, "mlbench_marker_instants_total", PROM_COUNTER,
                    "Instant marker events (I) received, per name.");
        for (size_t i = 0; i < m->instant_names.n; i++)
            prom_sample_u64(b, "mlbench_marker_instants_total",
                            name_label(lb, "name", m->instant_names.names[i]), m->instants[i]);
    }
    if (m->meta_keys.n) {
        prom_family(b, "mlbench_metadata_info", PROM_GAUGE,
                    "Last value of each metadata marker (M events) as the label value; always 1.");
        for (size_t i = 0; i < m->meta_keys.n; i++) {
            strbuf_reset(lb);
            prom_labels_add(lb, "key", m->meta_keys.names[i]);
            prom_labels_add(lb, "value", m->meta_values[i]);
            prom_sample(b, "mlbench_metadata_info", lb->s, 1);
        }
    }
    if (!m->markers_on)
        return;
    prom_family(b, "mlbench_markers_received_total", PROM_COUNTER,
                "Well-formed marker events received.");
    prom_sample_u64(b, "mlbench_markers_received_total", NULL, m->received);
    prom_family(b, "mlbench_markers_malformed_total", PROM_COUNTER,
                "Marker datagrams that did not parse (docs/markers.md).");
    prom_sample_u64(b, "mlbench_markers_malformed_total", NULL,
                    m->malformed > m->malformed_floor ? m->malformed : m->malformed_floor);
    prom_family(b, "mlbench_markers_foreign_total", PROM_COUNTER,
                "Marker datagrams from processes outside the measured process tree, ignored "
                "(docs/security.md).");
    prom_sample_u64(b, "mlbench_markers_foreign_total", NULL, m->foreign);
    prom_family(b, "mlbench_markers_unbalanced_total", PROM_COUNTER,
                "End markers with no matching open stage on their thread, and stages closed "
                "by the end of an enclosing stage.");
    prom_sample_u64(b, "mlbench_markers_unbalanced_total", NULL, m->unbalanced);
    prom_family(b, "mlbench_markers_dropped_total", PROM_COUNTER,
                "Marker events not aggregated because a memory bound was reached, by reason; "
                "thread_limit counts open spans forgotten when too many threads had stages open.");
    for (int r = 0; r < N_DROP; r++)
        prom_sample_u64(b, "mlbench_markers_dropped_total", name_label(lb, "reason", drop_names[r]),
                        m->dropped[r]);
}

char *live_render(struct live_metrics *m, size_t *len)
{
    struct strbuf b = STRBUF_INIT, lb = {0};
    pthread_mutex_lock(&m->mu);
    strbuf_reserve(&b, m->last_render + 1024); /* one allocation in the usual case */
    prom_family(&b, "mlbench_build_info", PROM_GAUGE,
                "Version and commit of the mlbench serving these metrics; always 1.");
    prom_labels_add(&lb, "version", MLBENCH_VERSION);
    prom_labels_add(&lb, "commit", MLBENCH_GIT_COMMIT);
    prom_sample(&b, "mlbench_build_info", lb.s, 1);

    /* Up while rows keep coming: within three sampling intervals, and at least 1 s. */
    int64_t window = 3 * (m->row_gap_ns ? m->row_gap_ns : 1000000000);
    if (window < 1000000000)
        window = 1000000000;
    bool up = m->rows && mono_ns() - m->last_row_ns <= window;
    prom_family(&b, "mlbench_up", PROM_GAUGE,
                "1 while mlbench is sampling (a sample row within the last three sampling "
                "intervals), 0 otherwise.");
    prom_sample(&b, "mlbench_up", NULL, up);
    prom_family(&b, "mlbench_samples_total", PROM_COUNTER, "Sample rows taken by the sampler.");
    prom_sample_u64(&b, "mlbench_samples_total", NULL, m->rows);
    prom_family(&b, "mlbench_sampler_errors_total", PROM_COUNTER,
                "Read failures counted by the metric sources (unreadable files, vanished "
                "processes, NVML errors).");
    prom_sample_u64(&b, "mlbench_sampler_errors_total", NULL, m->sampler_errors);

    render_samples(m, &b);
    render_markers(m, &b, &lb);
    render_queries(m, &b, &lb);
    m->last_render = b.len;
    pthread_mutex_unlock(&m->mu);
    strbuf_free(&lb);
    *len = b.len;
    return strbuf_take(&b);
}
