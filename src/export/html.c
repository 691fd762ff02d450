/* html.c: the HTML report (--format html): one self-contained page (no script, no network, no
 * external font; a Content-Security-Policy forbids any load) with the outline of outline.c and
 * inline SVG charts: the stage breakdown of every result as stacked bars, and the figures of
 * html.h (timelines, training curves, latency histograms, sweeps, load runs), one file each,
 * which the table of figures below lists. The answer a report opens with is a
 * <section id="answer">, the environment a folded <details>. Every text from the result is
 * escaped. */
#include "export/html.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* ---- outline primitives --------------------------------------------------------------- */

struct page {
    FILE *out;
    int headings;    /* for unique anchors */
    int breakdowns;  /* stage charts written, for their ids */
    int answers;     /* answer sections written, for their ids */
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

/* ---- figure: stage breakdown ---------------------------------------------------------- */

#define BAR_X0 200.0 /* the breakdown leaves room for result names */
#define OUTSIDE_COLOUR "#d4d4d8"

struct segment {
    const char *name;
    double ns;
    const char *colour;
};

/* The bar of one result: its top-level stages, then the time outside stages. */
static size_t breakdown_segments(const struct export_request *req, const struct doc_result *r,
                                 struct segment **out)
{
    const struct doc_summary *s = &r->summary;
    struct segment *seg = xcalloc(s->n_stages + 2, sizeof *seg);
    size_t n = 0;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        double ns = st->active.median;
        if (!st->name || st->depth != 0 || !(ns > 0))
            continue;
        seg[n++] = (struct segment){st->name, ns, html_stage_colour(req, st->name)};
    }
    double outside = s->outside_ns;
    if (n == 0) {
        double wall = s->wall.median;
        if (wall > 0)
            seg[n++] = (struct segment){"total (no stages)", wall, OUTSIDE_COLOUR};
    } else if (outside > 0) {
        seg[n++] = (struct segment){"(outside stages)", outside, OUTSIDE_COLOUR};
    }
    *out = seg;
    return n;
}

/* Whether a top-level stage of r was open, in the median over the runs, while another
 * top-level stage was open too (summary.stages[].overlap_ns_median). */
static bool stages_overlap(const struct doc_result *r)
{
    for (size_t i = 0; i < r->summary.n_stages; i++) {
        const struct doc_stage *st = &r->summary.stages[i];
        if (st->depth == 0 && st->overlap_ns_median > 0)
            return true;
    }
    return false;
}

/* id: "stage-chart", then "stage-chart-2"... (n: breakdowns written before). */
static void figure_breakdown(FILE *out, const struct export_request *req, int n_before)
{
    const double row_h = 26, gap = 12, top = 8;
    double max_ns = 0;
    for (size_t i = 0; i < req->n; i++) {
        struct segment *seg;
        size_t n = breakdown_segments(req, req->docs[i], &seg);
        double sum = 0;
        for (size_t k = 0; k < n; k++)
            sum += seg[k].ns;
        double wall = req->docs[i]->summary.wall.median;
        if (sum > max_ns)
            max_ns = sum;
        if (wall > max_ns)
            max_ns = wall;
        free(seg);
    }
    if (n_before)
        fprintf(out, "<figure id=\"stage-chart-%d\" class=\"stages\">\n", n_before + 1);
    else
        fputs("<figure id=\"stage-chart\" class=\"stages\">\n", out);
    fputs("<figcaption>Stage breakdown: median active time of each top-level stage"
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
    html_time_axis(out, BAR_X0, span, top, bottom);
    bool overlap = false, medians = false; /* why some bar runs past its total */
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_result *r = req->docs[i];
        struct segment *seg;
        size_t n = breakdown_segments(req, r, &seg);
        double y = top + gap / 2 + i * (row_h + gap);
        fprintf(out, "<text class=\"rowlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                BAR_X0 - 6, y + row_h / 2 + 4);
        html_short_text(out, doc_result_name(r), 30);
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
        double wall = r->summary.wall.median;
        double end = at;
        if (isfinite(wall) && total > wall * 1.02) {
            /* the parts add up to more than the total: mark where the total ends */
            double xw = BAR_X0 + (PLOT_X1 - BAR_X0) * wall / span;
            fprintf(out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                    "stroke=\"#111827\" stroke-width=\"2\"><title>the median total"
                    "</title></line>\n", xw, y - 3, xw, y + row_h + 3);
            if (stages_overlap(r))
                overlap = true;
            else
                medians = true;
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
        size_t n = breakdown_segments(req, req->docs[i], &seg);
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
              "add up to more than the run: the black mark is the median total.", out);
    if (medians)
        fputs(" No top-level stages overlapped, but the medians of the stages do not add up to "
              "the median total (each is the median of its own figure over the runs), so a bar "
              "can run past it: the black mark is the median total.", out);
    fputs("</p>\n</figure>\n", out);
}

/* The figures of the page but its own stage breakdown, drawn where the outline places them
 * (export.h): a figure is the rows of its kind, in this order. */
static const struct {
    enum export_figure fig;
    void (*draw)(FILE *out, const struct export_request *req, size_t result);
} figures[] = {
    {EXPORT_FIGURE_TIMELINES, html_figure_timelines},
    {EXPORT_FIGURE_LATENCY, html_figure_latency},
    {EXPORT_FIGURE_CURVES, html_figure_curves},
    {EXPORT_FIGURE_SWEEP, html_figure_sweep},
    {EXPORT_FIGURE_FIND_MAX, html_figure_find_max},
    {EXPORT_FIGURE_LOAD, html_figure_load},
    {EXPORT_FIGURE_LOAD, html_figure_load_cpu}, /* after the runs' charts and their note */
};

static void h_figure(void *ctx, enum export_figure fig, const struct export_request *req,
                     size_t result)
{
    struct page *pg = ctx;
    if (fig == EXPORT_FIGURE_BREAKDOWN) {
        figure_breakdown(pg->out, req, pg->breakdowns++);
        return;
    }
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (figures[i].fig == fig)
            figures[i].draw(pg->out, req, result);
}

/* The answer: <section id="answer"> ("answer-2"...); a folded section: <details> with its
 * heading as the summary. */
static void h_group_begin(void *ctx, enum export_group g, int level, const char *title)
{
    struct page *pg = ctx;
    if (g == EXPORT_GROUP_ANSWER) {
        if (pg->answers++)
            fprintf(pg->out, "<section class=\"answer\" id=\"answer-%d\">\n", pg->answers);
        else
            fputs("<section class=\"answer\" id=\"answer\">\n", pg->out);
        return;
    }
    fputs("<details class=\"folded\">\n<summary>", pg->out);
    h_heading(ctx, level, title);
    fputs("</summary>\n", pg->out);
}

static void h_group_end(void *ctx, enum export_group g)
{
    fputs(g == EXPORT_GROUP_ANSWER ? "</section>\n" : "</details>\n", ((struct page *)ctx)->out);
}

/* ---- the page ------------------------------------------------------------------------- */

static int html_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    static const struct export_outline_ops ops = {
        .heading = h_heading,
        .paragraph = h_paragraph,
        .list = h_list,
        .table = h_table,
        .code = h_code,
        .figure = h_figure,
        .group_begin = h_group_begin,
        .group_end = h_group_end,
    };
    int rc = export_check_run(req, err, errlen);
    if (rc != EXPORT_OK)
        return rc;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"mlbench " MLBENCH_VERSION "\">\n<title>", out);
    if (req->sweep) {
        fputs("mlbench sweep: ", out);
        html_text(out, jsonx_str(req->sweep, "id") ? jsonx_str(req->sweep, "id") : "(no id)");
    } else if (req->n) {
        fputs(req->n > 1 ? "mlbench comparison: " : "mlbench report: ", out);
        for (size_t i = 1; i < req->n; i++) {
            html_text(out, doc_result_name(req->docs[i]));
            fputs(i + 1 < req->n ? ", " : " against ", out);
        }
        html_text(out, doc_result_name(req->docs[0]));
    }
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", html_style);
    struct page pg = {out, 0, 0, 0};
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
