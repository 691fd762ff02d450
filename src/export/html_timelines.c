/* html_timelines.c: the timelines of the HTML report (docs/reports.md#html-charts): the samples
 * of one run of a result (the median run, or --run N), CPU cores busy, memory, storage I/O and
 * GPU utilisation, with the run's top-level stages shaded in their colours; and a load result's
 * server CPU with its scenario runs shaded (html_figure_load_cpu). */
#include "export/html.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* Lines are darker than the stage colours they are drawn over. */
static const char *const line_colours[] = {"#111827", "#1d4ed8", "#b91c1c", "#047857",
                                           "#7c3aed", "#b45309"};
#define N_LINE_COLOURS (sizeof line_colours / sizeof line_colours[0])

/* nice_ceil in binary units, so that byte axes read 256 KiB rather than 244.1 KiB. */
static double nice_ceil_bytes(double v)
{
    double p = 1;
    for (int i = 0; i < 8 && v / p >= 1024; i++) /* up to EiB; an infinite v stops too */
        p *= 1024;
    return html_nice_ceil(v / p) * p;
}

/* ---- figure: timelines of one run ----------------------------------------------------- */

struct interval {
    double start, end;
};

static int by_start(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Shades the top-level spans of run, one colour per stage, merging intervals closer than one
 * pixel so that 20 000 spans stay a light drawing. */
static void shade_stages(FILE *out, const struct export_request *req,
                         const struct doc_run *run, double span_ns, double y_top,
                         double y_bottom)
{
    size_t n = doc_run_n_spans(run);
    if (!n)
        return;
    const char **names = xcalloc(n, sizeof *names);
    size_t nn = 0;
    for (size_t i = 0; i < n; i++) {
        struct doc_span sp;
        doc_run_span(run, i, &sp);
        if (!sp.name || sp.depth != 0)
            continue;
        bool known = false;
        for (size_t k = 0; k < nn && !known; k++)
            known = !strcmp(names[k], sp.name);
        if (!known)
            names[nn++] = sp.name;
    }
    double px_ns = span_ns / (PLOT_X1 - PLOT_X0);
    struct interval *iv = xcalloc(n, sizeof *iv);
    for (size_t k = 0; k < nn; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            struct doc_span sp;
            doc_run_span(run, i, &sp);
            if (!sp.name || strcmp(sp.name, names[k]) || sp.depth != 0)
                continue;
            double s = sp.start_ns, e = sp.end_ns;
            if (isfinite(s) && isfinite(e) && e >= s)
                iv[m++] = (struct interval){s < 0 ? 0 : s, e};
        }
        qsort(iv, m, sizeof *iv, by_start);
        const char *colour = html_stage_colour(req, names[k]);
        for (size_t i = 0; i < m;) {
            double s = iv[i].start, e = iv[i].end;
            for (i++; i < m && iv[i].start <= e + px_ns; i++)
                if (iv[i].end > e)
                    e = iv[i].end;
            double x0 = PLOT_X0 + (PLOT_X1 - PLOT_X0) * s / span_ns;
            double w = (PLOT_X1 - PLOT_X0) * (e - s) / span_ns;
            if (w < 0.5)
                w = 0.5;
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                    "fill-opacity=\"0.13\"/><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                    "height=\"5\" fill=\"%s\"><title>", x0, y_top, w, y_bottom - y_top, colour,
                    x0, y_top - 7, w, colour);
            html_text(out, names[k]);
            fputs("</title></rect>\n", out);
        }
    }
    free(iv);
    free(names);
}

/* One line of a timeline: values at the sample times, or for a counter its rate drawn as a
 * step over windows of consecutive intervals (see segments). NULL values and negative rates
 * break the line. */
struct line {
    struct doc_series series;
    const char *name;
    const char *colour;
    bool rate;
    double scale;
};

/* A piece of a line: a value at t0 (= t1) for gauges, a rate over [t0, t1] for counters;
 * v NAN: a break. delta and seconds are the window's, for joining a short one. */
struct seg {
    double t0, t1, v, delta, seconds;
};

#define RATE_WINDOW_NS 95e6 /* as attrib.c's ATTRIB_RATE_WINDOW_NS: a rate over 10 ms of CPU
                             * time in 10 ms ticks is 0, 1, 2... cores, over ~100 ms it is fair */

static double seg_rate(const struct line *l, double delta, double seconds)
{
    double max = l->series.max_rate, v = delta / seconds;
    if (max > 0 && v > max) /* the counter's granularity, not the workload (metrics.md) */
        v = max;
    return v * l->scale;
}

/* Closes window w into out[n]: a window shorter than RATE_WINDOW_NS right after the previous
 * segment joins it. Returns the new count. */
static size_t close_window(const struct line *l, struct seg *out, size_t n, const struct seg *w)
{
    if (!(w->seconds > 0))
        return n;
    struct seg *prev = n ? &out[n - 1] : NULL;
    if (w->seconds * 1e9 < RATE_WINDOW_NS && prev && isfinite(prev->v) && prev->t1 == w->t0) {
        prev->delta += w->delta;
        prev->seconds += w->seconds;
        prev->t1 = w->t1;
        prev->v = seg_rate(l, prev->delta, prev->seconds);
        return n;
    }
    out[n] = *w;
    out[n].v = seg_rate(l, w->delta, w->seconds);
    return n + 1;
}

/* The pieces of line l over the sample times of run, into out (room for one per sample). */
static size_t segments(const struct line *l, const struct doc_run *run, struct seg *out)
{
    size_t n = 0, samples = doc_run_n_samples(run);
    struct seg w = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < samples; i++) {
        double v = doc_series_value(&l->series, i);
        double t1 = doc_run_sample_t(run, i);
        if (!l->rate) {
            out[n++] = (struct seg){t1, t1, isfinite(t1) ? v * l->scale : NAN, 0, 0};
            continue;
        }
        if (i == 0)
            continue;
        double prev = doc_series_value(&l->series, i - 1);
        double t0 = doc_run_sample_t(run, i - 1);
        if (!(t1 > t0) || !(v >= prev)) { /* a break: the window so far, then a gap */
            n = close_window(l, out, n, &w);
            w.seconds = 0;
            out[n++] = (struct seg){t0, t1, NAN, 0, 0};
            continue;
        }
        if (!(w.seconds > 0))
            w = (struct seg){t0, t0, 0, 0, 0};
        w.delta += v - prev;
        w.seconds += (t1 - t0) / 1e9;
        w.t1 = t1;
        if (w.seconds * 1e9 >= RATE_WINDOW_NS) {
            n = close_window(l, out, n, &w);
            w.seconds = 0;
        }
    }
    return close_window(l, out, n, &w);
}

/* Draws line l from its n pieces sg (segments()). */
static void draw_line(FILE *out, const struct line *l, const struct seg *sg, size_t n,
                      double span_ns, double y_max, double y_top, double y_bottom)
{
    bool open = false;
    size_t points = 0;
    double last_x = 0, last_y = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || !isfinite(sg[i].v)) {
            if (open)
                fputs("\"/>\n", out);
            if (open && points == 1)
                fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2\" fill=\"%s\"/>\n", last_x,
                        last_y, l->colour);
            open = false;
            continue;
        }
        double y = y_bottom - (y_bottom - y_top) * (sg[i].v / y_max);
        const double xs[2] = {sg[i].t0 < 0 ? 0 : sg[i].t0, sg[i].t1 < 0 ? 0 : sg[i].t1};
        if (!open) {
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                    "stroke-linejoin=\"round\" points=\"", l->colour);
            open = true;
            points = 0;
        }
        for (int k = l->rate ? 0 : 1; k < 2; k++) {
            last_x = PLOT_X0 + (PLOT_X1 - PLOT_X0) * xs[k] / span_ns;
            last_y = y;
            fprintf(out, "%.2f,%.2f ", last_x, last_y);
            points++;
        }
    }
}

/* The largest value of n pieces (0 when none). */
static double line_max(const struct seg *sg, size_t n)
{
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (sg[i].v > max)
            max = sg[i].v;
    return max;
}

enum y_unit { Y_PLAIN, Y_BYTES, Y_PERCENT };

static void y_label(double v, enum y_unit unit, char *buf, size_t len)
{
    if (unit == Y_BYTES)
        units_bytes(v, buf, len);
    else if (unit == Y_PERCENT)
        snprintf(buf, len, "%.0f %%", 100 * v);
    else
        snprintf(buf, len, "%.3g", v);
}

/* One timeline chart: title, lines, the run's stages shaded. */
/* Shades the scenario runs of a load section (load.scenarios[].start_offset_s, duration_s):
 * the runs that count in blue, find-peak's probes in grey, each with its name. */
static void shade_load(FILE *out, const struct doc_load *load, double span_ns, double y_top,
                       double y_bottom)
{
    for (size_t i = 0; i < load->n_runs; i++) {
        const struct doc_load_run *r = &load->runs[i];
        double s = r->start_offset_s * 1e9, d = r->duration_s * 1e9;
        if (!isfinite(s) || !(d > 0) || s >= span_ns)
            continue;
        const char *colour = doc_load_counts(load, i) ? "#1d4ed8" : "#9ca3af";
        double x0 = PLOT_X0 + (PLOT_X1 - PLOT_X0) * fmax(s, 0) / span_ns;
        double w = fmax((PLOT_X1 - PLOT_X0) * (fmin(s + d, span_ns) - fmax(s, 0)) / span_ns, 0.5);
        char name[96];
        doc_load_run_name(r, name, sizeof name);
        fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                "fill-opacity=\"0.13\"/><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                "height=\"5\" fill=\"%s\"><title>", x0, y_top, w, y_bottom - y_top, colour, x0,
                y_top - 7, w, colour);
        html_text(out, name);
        fputs("</title></rect>\n", out);
    }
}

/* One timeline chart; load non-NULL: its scenario runs are shaded instead of the stages. */
static void timeline(FILE *out, const struct export_request *req, const struct doc_run *run,
                     const char *title, const struct line *lines, size_t nl, enum y_unit unit,
                     double fixed_max, const struct doc_load *load)
{
    size_t samples = doc_run_n_samples(run);
    double span_ns = run->wall_ns;
    double last_t = doc_run_sample_t(run, samples - 1);
    if (!(span_ns > 0) || last_t > span_ns)
        span_ns = last_t;
    if (!(span_ns > 0))
        return;
    /* each line's pieces, once: for the axis, then to draw */
    struct seg **sg = xcalloc(nl + 1, sizeof *sg);
    size_t *n_sg = xcalloc(nl + 1, sizeof *n_sg);
    double max = 0;
    for (size_t k = 0; k < nl; k++) {
        sg[k] = xcalloc(samples + 1, sizeof **sg);
        n_sg[k] = segments(&lines[k], run, sg[k]);
        max = fmax(max, line_max(sg[k], n_sg[k]));
    }
    if (!(max > 0)) {
        fputs("<p class=\"note\">", out);
        html_text(out, title);
        fputs(": zero throughout this run.</p>\n", out);
        goto done;
    }
    double y_max = fixed_max > 0 ? fixed_max
                   : unit == Y_BYTES ? nice_ceil_bytes(max * 1.05) : html_nice_ceil(max * 1.05);
    /* Lines that cannot exceed a bound (CPU cores: the CPUs online) end the axis there: a
     * 2-CPU machine's axis went to 2.5 cores. */
    double cap = 0;
    for (size_t k = 0; k < nl; k++) {
        double m = lines[k].series.max_rate * lines[k].scale;
        cap = lines[k].rate && m > 0 ? fmax(cap, m) : INFINITY;
    }
    if (fixed_max <= 0 && isfinite(cap) && cap >= max && y_max > cap)
        y_max = cap;
    const double top = 14, bottom = 134, height = 158;
    fputs("<figure class=\"timeline\">\n<figcaption>", out);
    html_text(out, title);
    for (size_t k = 0; k < nl && *lines[k].name; k++) {
        fprintf(out, " <span class=\"key\"><i style=\"background:%s\"></i>", lines[k].colour);
        html_text(out, lines[k].name);
        fputs("</span>", out);
    }
    fprintf(out, "</figcaption>\n<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
            "height=\"%.0f\" role=\"img\" aria-label=\"", CHART_W, height, CHART_W, height);
    html_text(out, title);
    fputs("\" xmlns=\"http://www.w3.org/2000/svg\">\n", out);
    if (load)
        shade_load(out, load, span_ns, top, bottom);
    else
        shade_stages(out, req, run, span_ns, top, bottom);
    html_time_axis(out, PLOT_X0, span_ns, top, bottom);
    char a[32];
    for (int k = 0; k <= 2; k++) {
        double v = y_max * k / 2, y = bottom - (bottom - top) * k / 2;
        y_label(v, unit, a, sizeof a);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, a);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            PLOT_X0, bottom, PLOT_X1, bottom);
    for (size_t k = 0; k < nl; k++)
        draw_line(out, &lines[k], sg[k], n_sg[k], span_ns, y_max, top, bottom);
    fputs("</svg>\n</figure>\n", out);
done:
    for (size_t k = 0; k < nl; k++)
        free(sg[k]);
    free(sg);
    free(n_sg);
}

/* Whether a series has at least one value that is not null. */
static bool has_values(const struct doc_series *series)
{
    for (size_t i = 0; i < json_array_size(series->values); i++)
        if (!isnan(doc_series_value(series, i)))
            return true;
    return false;
}

/* The series of run with this metric and labels (a series of nothing when there is none). */
static struct doc_series series_of(const struct doc_run *run, const char *metric,
                                   const char *labels)
{
    struct doc_series s;
    doc_series_read(doc_run_series(run, metric, labels), &s);
    return s;
}

/* One chart of a GPU ratio (metric), one line per GPU the analysis shows, or per GPU with
 * values; nothing when no GPU has a value (no GPU, or no GPM for its activities). */
static void gpu_timeline(FILE *out, const struct export_request *req, const struct doc_result *r,
                         const struct doc_run *run, const char *metric, const char *title)
{
    const json_t *gpus = r->analysis.gpus;
    size_t n = doc_run_n_series(run);
    struct line *g = xcalloc(n + 1, sizeof *g);
    char (*names)[48] = xcalloc(n + 1, sizeof *names);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        struct doc_series s;
        doc_run_series_at(run, i, &s);
        const char *labels = s.labels;
        if (!s.metric || strcmp(s.metric, metric) || !has_values(&s))
            continue;
        bool shown = json_array_size(gpus) == 0;
        for (size_t j = 0; j < json_array_size(gpus) && !shown; j++) {
            char want[32];
            snprintf(want, sizeof want, "gpu=\"%lld\"",
                     (long long)json_integer_value(json_array_get(gpus, j)));
            shown = labels && !strcmp(labels, want);
        }
        if (!shown)
            continue;
        int gpu;
        if (labels && sscanf(labels, "gpu=\"%d\"", &gpu) == 1)
            snprintf(names[ng], sizeof names[ng], "GPU %d", gpu);
        else
            snprintf(names[ng], sizeof names[ng], "%s", labels && *labels ? labels : "GPU");
        g[ng] = (struct line){s, names[ng], line_colours[ng % N_LINE_COLOURS], false, 1};
        ng++;
    }
    if (ng)
        timeline(out, req, run, title, g, ng, Y_PERCENT, 1.0, NULL);
    free(g);
    free(names);
}

void html_figure_timelines(FILE *out, const struct export_request *req, size_t index)
{
    const struct doc_result *r = req->docs[index];
    int k = export_chosen_run(req, r);
    size_t at = k < 0 ? 0 : (size_t)k;
    if (at >= r->n_runs)
        return;
    const struct doc_run *run = &r->runs[at];
    size_t samples = doc_run_n_samples(run);
    char d[32];
    if (samples < 2) {
        fprintf(out, "<p>Run %d has %s resource sample: no timeline to draw.</p>\n", k,
                samples ? "only one" : "no");
        return;
    }
    fprintf(out, "<p>Timelines of run %d (%s, %s, %s); top-level stages shaded.</p>\n", k,
            req->run >= 0 ? "chosen with --run" : "the run with the median wall time",
            run->warmup ? "a warm-up run" : "a measured run",
            export_fmt_duration(run->wall_ns, d, sizeof d));

    struct line one = {series_of(run, "process_cpu_seconds_total", ""), "", line_colours[0],
                       true, 1};
    if (has_values(&one.series))
        timeline(out, req, run, "CPU cores busy (rate of process CPU time)", &one, 1, Y_PLAIN, 0, NULL);
    one = (struct line){series_of(run, "process_resident_bytes", ""), "", line_colours[0], false,
                        1};
    if (has_values(&one.series))
        timeline(out, req, run, "Memory of the process tree (PSS, else RSS)", &one, 1, Y_BYTES,
                 0, NULL);
    struct line io[2] = {
        {series_of(run, "process_read_bytes_total", ""), "read", line_colours[1], true, 1},
        {series_of(run, "process_written_bytes_total", ""), "written", line_colours[2], true, 1},
    };
    if (has_values(&io[0].series) || has_values(&io[1].series))
        timeline(out, req, run, "Storage I/O of the process tree, bytes/s", io, 2, Y_BYTES, 0,
                 NULL);

    gpu_timeline(out, req, r, run, "gpu_utilization_ratio",
                 "GPU utilisation (time a kernel was running)");
    gpu_timeline(out, req, r, run, "gpu_sm_active_ratio",
                 "GPU SM active (share of the SMs with work, NVML GPM)");
    gpu_timeline(out, req, r, run, "gpu_tensor_active_ratio",
                 "GPU tensor pipes active (NVML GPM)");

    /* the stage colours used by the shading */
    fputs("<div class=\"legend\">", out);
    for (size_t i = 0; i < run->n_stages; i++) {
        const struct doc_run_stage *st = &run->stages[i];
        if (!st->name || st->depth != 0)
            continue;
        fprintf(out, "<span><i style=\"background:%s\"></i>", html_stage_colour(req, st->name));
        html_text(out, st->name);
        fputs("</span>", out);
    }
    fputs("</div>\n", out);
}

void html_figure_load_cpu(FILE *out, const struct export_request *req, size_t index)
{
    const struct doc_result *r = req->docs[index];
    const struct doc_load *load = req->loads[index];
    if (!load->server_cmd || !r->n_runs)
        return;
    const struct doc_run *run = &r->runs[0];
    struct line one = {series_of(run, "process_cpu_seconds_total", ""), "", line_colours[0],
                       true, 1};
    if (!has_values(&one.series))
        return;
    timeline(out, req, run, "The server's CPU cores busy (rate of its process tree's CPU time); "
             "scenario runs shaded (the runs that count in blue, probes in grey)", &one, 1,
             Y_PLAIN, 0, load);
}
