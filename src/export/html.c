/* html.c: the HTML report (--format html): one self-contained page (no script, no network, no
 * external font; a Content-Security-Policy forbids any load) with the outline of outline.c and
 * inline SVG charts: the stage breakdown of every result as stacked bars, and timelines of the
 * representative run of each result (CPU cores, memory, storage I/O, GPU utilisation) with its
 * stages shaded. Every text from the result is escaped. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* Tableau 10: distinct, readable on white, kind to colour-blind readers. */
static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define N_PALETTE (sizeof palette / sizeof palette[0])
#define OUTSIDE_COLOUR "#d4d4d8"

/* Lines are darker than the stage colours they are drawn over. */
static const char *const line_colours[] = {"#111827", "#1d4ed8", "#b91c1c", "#047857",
                                           "#7c3aed", "#b45309"};
#define N_LINE_COLOURS (sizeof line_colours / sizeof line_colours[0])

static const char *stage_colour(const struct export_request *req, const char *name)
{
    return palette[export_stage_colour(req, name) % N_PALETTE];
}

/* s escaped for HTML text and attributes, cleaned of terminal controls (export_clean) too:
 * a browser ignores them, `cat report.html` would not. */
static void html_text(FILE *out, const char *raw)
{
    char *s = export_clean(raw);
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*p, out);
        }
    }
    free(s);
}

/* ---- outline primitives --------------------------------------------------------------- */

struct page {
    FILE *out;
    int headings;  /* for unique anchors */
};

/* id="<words of the heading>-<n>": a link can point at any section. */
static void anchor(FILE *out, const char *text, int n)
{
    int dash = 0, written = 0;
    for (const char *p = text; *p && written < 40; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && written)
                fputc('-', out);
            fputc(c, out);
            dash = 0;
            written++;
        } else if (c >= 'A' && c <= 'Z') {
            if (dash && written)
                fputc('-', out);
            fputc(c - 'A' + 'a', out);
            dash = 0;
            written++;
        } else {
            dash = 1;
        }
    }
    fprintf(out, "%s%d", written ? "-" : "s", n);
}

static void h_heading(void *ctx, int level, const char *text)
{
    struct page *pg = ctx;
    FILE *out = pg->out;
    fprintf(out, "<h%d id=\"", level);
    anchor(out, text, ++pg->headings);
    fputs("\">", out);
    html_text(out, text);
    fprintf(out, "</h%d>\n", level);
}

static void h_paragraph(void *ctx, const char *text)
{
    FILE *out = ((struct page *)ctx)->out;
    fputs("<p>", out);
    html_text(out, text);
    fputs("</p>\n", out);
}

static void h_list(void *ctx, const char *const *items, size_t n)
{
    FILE *out = ((struct page *)ctx)->out;
    fputs("<ul>\n", out);
    for (size_t i = 0; i < n; i++) {
        fputs("<li>", out);
        html_text(out, items[i]);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
}

static void h_table(void *ctx, const struct export_table *t)
{
    FILE *out = ((struct page *)ctx)->out;
    fputs("<div class=\"scroll\"><table>\n<thead><tr>", out);
    for (size_t c = 0; c < t->ncols; c++) {
        fputs(t->numeric & (1u << c) ? "<th class=\"num\">" : "<th>", out);
        html_text(out, t->header[c]);
        fputs("</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    static const char *const tone_class[] = {"", "faster", "slower", "unreliable", "differs"};
    for (size_t r = 0; r < t->nrows; r++) {
        fputs("<tr>", out);
        for (size_t c = 0; c < t->ncols; c++) {
            enum export_tone tone = export_table_cell_tone(t, r, c);
            const char *num = t->numeric & (1u << c) ? "num" : "";
            const char *tc = tone < sizeof tone_class / sizeof *tone_class ? tone_class[tone] : "";
            fputs("<td", out);
            if (*num || *tc)
                fprintf(out, " class=\"%s%s%s\"", num, *num && *tc ? " " : "", tc);
            if (c == 0 && t->indent[r] > 0)
                fprintf(out, " style=\"padding-left:%.1fem\"", 0.4 + 1.2 * t->indent[r]);
            fputc('>', out);
            html_text(out, export_table_cell(t, r, c));
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table></div>\n", out);
}

static void h_code(void *ctx, const char *text)
{
    FILE *out = ((struct page *)ctx)->out;
    fputs("<pre><code>", out);
    html_text(out, text);
    fputs("</code></pre>\n", out);
}

/* ---- chart helpers -------------------------------------------------------------------- */

/* The smallest 1, 2, 2.5 or 5 times a power of ten that is >= v (v > 0). */
static double nice_ceil(double v)
{
    double p = pow(10, floor(log10(v)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v * (1 - 1e-12))
            return steps[i] * p;
    return 10 * p;
}

#define CHART_W 860.0
#define PLOT_X0 78.0
#define PLOT_X1 840.0
#define BAR_X0 200.0 /* the breakdown leaves room for result names */

/* Text cut to at most max characters (UTF-8 aware), with an ellipsis when cut. */
static void label_text(FILE *out, const char *s, size_t max)
{
    size_t chars = 0, cut = 0;
    for (const char *p = s; *p; p++)
        if (((unsigned char)*p & 0xC0) != 0x80 && chars++ == max - 1)
            cut = (size_t)(p - s);
    if (chars <= max) {
        html_text(out, s);
        return;
    }
    char *head = xstrndup(s, cut);
    html_text(out, head);
    fputs("\u2026", out);
    free(head);
}

/* nice_ceil in binary units, so that byte axes read 256 KiB rather than 244.1 KiB. */
static double nice_ceil_bytes(double v)
{
    double p = 1;
    for (int i = 0; i < 8 && v / p >= 1024; i++) /* up to EiB; an infinite v stops too */
        p *= 1024;
    return nice_ceil(v / p) * p;
}

/* Ticks along the time axis of a plot spanning [0, span_ns], with grid lines. */
static void time_axis(FILE *out, double x0, double span_ns, double y_top, double y_bottom)
{
    double step = nice_ceil(span_ns / 6);
    char buf[32];
    /* A span from a file may be anything (1e308 ns made step infinite and this loop endless,
     * filling the disk): no axis unless both are finite, and never more than a dozen ticks. */
    if (!isfinite(span_ns) || !(span_ns > 0) || !isfinite(step) || !(step > 0))
        return;
    for (int i = 0; i <= 12; i++) {
        double t = i * step;
        if (t > span_ns * (1 + 1e-9))
            break;
        double x = x0 + (PLOT_X1 - x0) * t / span_ns;
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                x, y_top, x, y_bottom);
        fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s"
                "</text>\n", x, y_bottom + 14, t == 0 ? "0" : units_duration(t, buf, sizeof buf));
    }
}

/* ---- figure: stage breakdown ---------------------------------------------------------- */

struct segment {
    const char *name;
    double ns;
    const char *colour;
};

/* The bar of one result: its top-level stages, then the time outside stages. */
static size_t breakdown_segments(const struct export_request *req, const json_t *r,
                                 struct segment **out)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *stages = json_object_get(s, "stages");
    struct segment *seg = xcalloc(json_array_size(stages) + 2, sizeof *seg);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        const char *name = jsonx_str(st, "name");
        double ns = jsonx_num(json_object_get(st, "active_ns"), "median");
        if (!name || jsonx_int(st, "depth", 0) != 0 || !(ns > 0))
            continue;
        seg[n++] = (struct segment){name, ns, stage_colour(req, name)};
    }
    double outside = jsonx_num(s, "outside_ns");
    if (n == 0) {
        double wall = jsonx_num(json_object_get(s, "wall_ns"), "median");
        if (wall > 0)
            seg[n++] = (struct segment){"total (no stages)", wall, OUTSIDE_COLOUR};
    } else if (outside > 0) {
        seg[n++] = (struct segment){"(outside stages)", outside, OUTSIDE_COLOUR};
    }
    *out = seg;
    return n;
}

static void figure_breakdown(FILE *out, const struct export_request *req)
{
    const double row_h = 26, gap = 12, top = 8;
    double max_ns = 0;
    for (size_t i = 0; i < req->n; i++) {
        struct segment *seg;
        size_t n = breakdown_segments(req, req->results[i], &seg);
        double sum = 0;
        for (size_t k = 0; k < n; k++)
            sum += seg[k].ns;
        double wall = jsonx_num(json_object_get(json_object_get(req->results[i], "summary"),
                                                     "wall_ns"), "median");
        if (sum > max_ns)
            max_ns = sum;
        if (wall > max_ns)
            max_ns = wall;
        free(seg);
    }
    fputs("<figure>\n<figcaption>Stage breakdown: median active time of each top-level stage"
          "</figcaption>\n", out);
    if (!(max_ns > 0)) {
        fputs("<p>No run completed: nothing to draw.</p>\n</figure>\n", out);
        return;
    }
    if (!isfinite(max_ns * 1.12) || max_ns > 1e18) { /* over 31 years: not a measurement */
        fputs("<p>The medians are out of any measurable range: nothing to draw.</p>\n"
              "</figure>\n", out);
        return;
    }
    double span = max_ns * 1.12; /* room for the total after the longest bar */
    double bottom = top + req->n * (row_h + gap);
    double height = bottom + 24;
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"stage breakdown\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            CHART_W, height, CHART_W, height);
    time_axis(out, BAR_X0, span, top, bottom);
    bool overlap = false;
    for (size_t i = 0; i < req->n; i++) {
        const json_t *r = req->results[i];
        struct segment *seg;
        size_t n = breakdown_segments(req, r, &seg);
        double y = top + gap / 2 + i * (row_h + gap);
        fprintf(out, "<text class=\"rowlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                BAR_X0 - 6, y + row_h / 2 + 4);
        label_text(out, export_result_name(r), 30);
        fputs("</text>\n", out);
        double at = BAR_X0, total = 0;
        for (size_t k = 0; k < n; k++) {
            double w = (PLOT_X1 - BAR_X0) * seg[k].ns / span;
            char d[32];
            fprintf(out, "<g><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                    "fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"><title>", at, y, w, row_h,
                    seg[k].colour);
            html_text(out, seg[k].name);
            fprintf(out, ": %s</title></rect>", units_duration(seg[k].ns, d, sizeof d));
            /* a label only where it fits: about 6.5 px a character at this size */
            if (w > 6.5 * (double)strlen(seg[k].name) + 8) {
                fprintf(out, "<text class=\"seglabel\" x=\"%.2f\" y=\"%.1f\">", at + 4,
                        y + row_h / 2 + 4);
                html_text(out, seg[k].name);
                fputs("</text>", out);
            }
            fputs("</g>\n", out);
            at += w;
            total += seg[k].ns;
        }
        char d[32];
        double wall = jsonx_num(json_object_get(json_object_get(r, "summary"), "wall_ns"),
                                     "median");
        double end = at;
        if (isfinite(wall) && total > wall * 1.02) {
            /* stages overlapped (several threads): mark where the run really ended */
            double xw = BAR_X0 + (PLOT_X1 - BAR_X0) * wall / span;
            fprintf(out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                    "stroke=\"#111827\" stroke-width=\"2\"><title>end of the run</title></line>\n",
                    xw, y - 3, xw, y + row_h + 3);
            overlap = true;
        }
        fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.1f\">%s</text>\n", end + 5,
                y + row_h / 2 + 4, units_duration(isfinite(wall) ? wall : total, d, sizeof d));
        free(seg);
    }
    fputs("</svg>\n<div class=\"legend\">", out);
    /* one entry per name, in order of first appearance */
    const char **seen = NULL;
    size_t nseen = 0;
    for (size_t i = 0; i < req->n; i++) {
        struct segment *seg;
        size_t n = breakdown_segments(req, req->results[i], &seg);
        seen = xreallocarray(seen, nseen + n + 1, sizeof *seen);
        for (size_t k = 0; k < n; k++) {
            bool earlier = false;
            for (size_t a = 0; a < nseen && !earlier; a++)
                earlier = !strcmp(seen[a], seg[k].name);
            if (earlier)
                continue;
            seen[nseen++] = seg[k].name;
            fprintf(out, "<span><i style=\"background:%s\"></i>", seg[k].colour);
            html_text(out, seg[k].name);
            fputs("</span>", out);
        }
        free(seg);
    }
    free(seen);
    fputs("</div>\n<p class=\"note\">Active time: wall time with the stage open on any thread; "
          "the figure after a bar is the total (median wall time). Bars share one time scale; "
          "hover a segment for its time.", out);
    if (overlap)
        fputs(" Some top-level stages ran at the same time on different threads, so their bars "
              "add up to more than the run: the black mark is where the run ended.", out);
    fputs("</p>\n</figure>\n", out);
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
static void shade_stages(FILE *out, const struct export_request *req, const json_t *run,
                         double span_ns, double y_top, double y_bottom)
{
    const json_t *spans = json_object_get(run, "spans");
    size_t n = json_array_size(spans);
    if (!n)
        return;
    const char **names = xcalloc(n, sizeof *names);
    size_t nn = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *sp = json_array_get(spans, i);
        const char *name = jsonx_str(sp, "name");
        if (!name || jsonx_int(sp, "depth", 0) != 0)
            continue;
        bool known = false;
        for (size_t k = 0; k < nn && !known; k++)
            known = !strcmp(names[k], name);
        if (!known)
            names[nn++] = name;
    }
    double px_ns = span_ns / (PLOT_X1 - PLOT_X0);
    struct interval *iv = xcalloc(n, sizeof *iv);
    for (size_t k = 0; k < nn; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *sp = json_array_get(spans, i);
            const char *name = jsonx_str(sp, "name");
            if (!name || strcmp(name, names[k]) || jsonx_int(sp, "depth", 0) != 0)
                continue;
            double s = jsonx_num(sp, "start_ns"), e = jsonx_num(sp, "end_ns");
            if (isfinite(s) && isfinite(e) && e >= s)
                iv[m++] = (struct interval){s < 0 ? 0 : s, e};
        }
        qsort(iv, m, sizeof *iv, by_start);
        const char *colour = stage_colour(req, names[k]);
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

/* One line of a timeline: values at the sample times, or for a counter the rate over each
 * interval drawn as a step. NULL values and negative rates break the line. */
struct line {
    const json_t *series;
    const char *name;
    const char *colour;
    bool rate;
    double scale;
};

static double line_value(const struct line *l, const json_t *t, size_t i, double *t0, double *t1)
{
    const json_t *values = json_object_get(l->series, "values");
    double v = jsonx_number(json_array_get(values, i));
    *t1 = jsonx_number(json_array_get(t, i));
    *t0 = *t1;
    if (!l->rate)
        return v * l->scale;
    if (i == 0)
        return NAN;
    double prev = jsonx_number(json_array_get(values, i - 1));
    *t0 = jsonx_number(json_array_get(t, i - 1));
    if (!(*t1 > *t0) || !(v >= prev))
        return NAN;
    return (v - prev) / ((*t1 - *t0) / 1e9) * l->scale;
}

static void draw_line(FILE *out, const struct line *l, const json_t *t, double span_ns,
                      double y_max, double y_top, double y_bottom)
{
    size_t n = json_array_size(t);
    bool open = false;
    size_t points = 0;
    double last_x = 0, last_y = 0;
    for (size_t i = 0; i < n; i++) {
        double t0, t1;
        double v = line_value(l, t, i, &t0, &t1);
        if (!isfinite(v) || !isfinite(t1)) {
            if (open)
                fputs("\"/>\n", out);
            if (open && points == 1)
                fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2\" fill=\"%s\"/>\n", last_x,
                        last_y, l->colour);
            open = false;
            continue;
        }
        double y = y_bottom - (y_bottom - y_top) * (v / y_max);
        const double xs[2] = {t0 < 0 ? 0 : t0, t1 < 0 ? 0 : t1};
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
    if (open) {
        fputs("\"/>\n", out);
        if (points == 1)
            fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2\" fill=\"%s\"/>\n", last_x, last_y,
                    l->colour);
    }
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
static void timeline(FILE *out, const struct export_request *req, const json_t *run,
                     const char *title, const struct line *lines, size_t nl, enum y_unit unit,
                     double fixed_max)
{
    const json_t *t = json_object_get(json_object_get(run, "samples"), "t_ns");
    double span_ns = jsonx_num(run, "wall_ns");
    double last_t = jsonx_number(json_array_get(t, json_array_size(t) - 1));
    if (!(span_ns > 0) || last_t > span_ns)
        span_ns = last_t;
    if (!(span_ns > 0))
        return;
    double max = 0;
    for (size_t k = 0; k < nl; k++)
        for (size_t i = 0; i < json_array_size(t); i++) {
            double t0, t1, v = line_value(&lines[k], t, i, &t0, &t1);
            if (v > max)
                max = v;
        }
    if (!(max > 0)) {
        fputs("<p class=\"note\">", out);
        html_text(out, title);
        fputs(": zero throughout this run.</p>\n", out);
        return;
    }
    double y_max = fixed_max > 0 ? fixed_max
                   : unit == Y_BYTES ? nice_ceil_bytes(max * 1.05) : nice_ceil(max * 1.05);
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
    shade_stages(out, req, run, span_ns, top, bottom);
    time_axis(out, PLOT_X0, span_ns, top, bottom);
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
        draw_line(out, &lines[k], t, span_ns, y_max, top, bottom);
    fputs("</svg>\n</figure>\n", out);
}

/* Whether a series has at least one value that is not null. */
static bool has_values(const json_t *series)
{
    const json_t *v = json_object_get(series, "values");
    for (size_t i = 0; i < json_array_size(v); i++)
        if (json_is_number(json_array_get(v, i)))
            return true;
    return false;
}

static void figure_timelines(FILE *out, const struct export_request *req, size_t index)
{
    const json_t *r = req->results[index];
    int k = export_chosen_run(req, r);
    const json_t *run = json_array_get(json_object_get(r, "runs"), k < 0 ? 0 : (size_t)k);
    const json_t *t = json_object_get(json_object_get(run, "samples"), "t_ns");
    char d[32];
    if (!run)
        return;
    if (json_array_size(t) < 2) {
        fprintf(out, "<p>Run %d has %s resource sample: no timeline to draw.</p>\n", k,
                json_array_size(t) ? "only one" : "no");
        return;
    }
    fprintf(out, "<p>Timelines of run %d (%s, %s, %s); top-level stages shaded.</p>\n", k,
            req->run >= 0 ? "chosen with --run" : "the run with the median wall time",
            json_is_true(json_object_get(run, "warmup")) ? "a warm-up run" : "a measured run",
            export_fmt_duration(jsonx_num(run, "wall_ns"), d, sizeof d));

    struct line one = {export_series_find(run, "process_cpu_seconds_total", ""), "",
                       line_colours[0], true, 1};
    if (has_values(one.series))
        timeline(out, req, run, "CPU cores busy (rate of process CPU time)", &one, 1, Y_PLAIN, 0);
    one = (struct line){export_series_find(run, "process_resident_bytes", ""), "",
                        line_colours[0], false, 1};
    if (has_values(one.series))
        timeline(out, req, run, "Memory of the process tree (PSS, else RSS)", &one, 1, Y_BYTES,
                 0);
    struct line io[2] = {
        {export_series_find(run, "process_read_bytes_total", ""), "read", line_colours[1], true,
         1},
        {export_series_find(run, "process_written_bytes_total", ""), "written", line_colours[2],
         true, 1},
    };
    if (has_values(io[0].series) || has_values(io[1].series))
        timeline(out, req, run, "Storage I/O of the process tree, bytes/s", io, 2, Y_BYTES, 0);

    /* one line per GPU the analysis shows, or per GPU with values */
    const json_t *series = json_object_get(json_object_get(run, "samples"), "series");
    const json_t *gpus = json_object_get(json_object_get(r, "analysis"), "gpus");
    struct line *g = xcalloc(json_array_size(series) + 1, sizeof *g);
    char (*names)[48] = xcalloc(json_array_size(series) + 1, sizeof *names);
    size_t ng = 0;
    for (size_t i = 0; i < json_array_size(series); i++) {
        const json_t *s = json_array_get(series, i);
        const char *m = jsonx_str(s, "metric"), *labels = jsonx_str(s, "labels");
        if (!m || strcmp(m, "gpu_utilization_ratio") || !has_values(s))
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
        timeline(out, req, run, "GPU utilisation (time a kernel was running)", g, ng, Y_PERCENT,
                 1.0);
    free(g);
    free(names);

    /* the stage colours used by the shading */
    const json_t *stages = json_object_get(run, "stages");
    fputs("<div class=\"legend\">", out);
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        const char *name = jsonx_str(st, "name");
        if (!name || jsonx_int(st, "depth", 0) != 0)
            continue;
        fprintf(out, "<span><i style=\"background:%s\"></i>", stage_colour(req, name));
        html_text(out, name);
        fputs("</span>", out);
    }
    fputs("</div>\n", out);
}

static void h_figure(void *ctx, enum export_figure fig, const struct export_request *req,
                     size_t result)
{
    FILE *out = ((struct page *)ctx)->out;
    if (fig == EXPORT_FIGURE_BREAKDOWN)
        figure_breakdown(out, req);
    else
        figure_timelines(out, req, result);
}

/* ---- the page ------------------------------------------------------------------------- */

static const char style[] =
    "body{margin:0;background:#fafafa;color:#1f2937;font:15px/1.5 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
    "main{max-width:940px;margin:0 auto;padding:24px 28px 48px;background:#fff;"
    "box-shadow:0 0 0 1px #e5e7eb}\n"
    "h1{font-size:1.6em;margin:.2em 0 .6em}h2{font-size:1.3em;margin-top:1.8em;"
    "border-bottom:1px solid #e5e7eb;padding-bottom:.2em}h3{font-size:1.1em;margin-top:1.4em}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}\n"
    "th,td{padding:.25em .7em;border-bottom:1px solid #e5e7eb;text-align:left;"
    "vertical-align:top}th{background:#f3f4f6;font-weight:600}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "td.faster{color:#15803d;font-weight:600}td.slower{color:#b91c1c;font-weight:600}"
    "td.unreliable{color:#6b7280;font-style:italic}td.differs{background:#fef9c3}\n"
    "pre{background:#f3f4f6;padding:.7em 1em;overflow-x:auto;border-radius:4px}"
    "code{font:13px/1.4 ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace}\n"
    "figure{margin:1em 0}figcaption{font-weight:600;font-size:.9em;margin-bottom:.2em}\n"
    "svg.chart{max-width:100%;height:auto;font:11px system-ui,sans-serif}\n"
    "svg .grid{stroke:#eceef1}svg .axis{stroke:#9ca3af}svg .tick{fill:#6b7280}"
    "svg .rowlabel{fill:#1f2937;font-size:12px}svg .seglabel{fill:#fff;font-size:11px;"
    "font-weight:600;pointer-events:none}\n"
    ".legend span,.key{display:inline-block;margin:0 1em .3em 0;font-size:.85em;"
    "font-weight:400}.legend i,.key i{display:inline-block;width:.9em;height:.9em;"
    "margin-right:.35em;vertical-align:-.1em;border-radius:2px}\n"
    ".note,footer{color:#6b7280;font-size:.85em}\n";

static int html_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    static const struct export_outline_ops ops = {
        .heading = h_heading,
        .paragraph = h_paragraph,
        .list = h_list,
        .table = h_table,
        .code = h_code,
        .figure = h_figure,
    };
    int rc = export_check_run(req, err, errlen);
    if (rc != EXPORT_OK)
        return rc;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"mlbench " MLBENCH_VERSION "\">\n<title>", out);
    fputs(req->n > 1 ? "mlbench comparison: " : "mlbench report: ", out);
    for (size_t i = 1; i < req->n; i++) {
        html_text(out, export_result_name(req->results[i]));
        fputs(i + 1 < req->n ? ", " : " against ", out);
    }
    html_text(out, export_result_name(req->results[0]));
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", style);
    struct page pg = {out, 0};
    export_outline(req, &ops, &pg);
    fputs("<footer>Written by mlbench " MLBENCH_VERSION " (mlbench report --format html); "
          "docs/reports.md explains each part.</footer>\n</main>\n</body>\n</html>\n", out);
    return export_finish(out, "the HTML report", err, errlen);
}

const struct exporter export_html = {
    .name = "html",
    .alias = NULL,
    .extension = "html",
    .description = "one self-contained HTML page with SVG charts (stages, resources over time)",
    .uses = EXPORT_USES_RUN,
    .write = html_write,
};
