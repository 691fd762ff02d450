/* history_html_chart.c: the charts of the HTML history dashboard (history_html.c), one SVG
 * per series: each result's median over the time it was measured (or in order, when some have
 * no time), the interval of the median shaded, one line per host, and the step changes marked
 * where they start with the levels either side and the commit they start at. */
#include "export/history_html_chart.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/units.h"
#include "util/xalloc.h"

#define TOP 36.0          /* room above the plot for two rows of change labels */
#define BOTTOM 206.0
#define HEIGHT 252.0
#define MAX_NS 1e18       /* a median beyond 31 years is no measurement: not drawn */
#define NAME_CHARS 90     /* of a series name in a caption */
#define SLOWER "#b91c1c"
#define FASTER "#15803d"

struct axes {
    bool by_time;          /* x is the time measured; else the order of the results */
    double x0, x1;         /* x range (seconds since 1970, or index) */
    double y0, y1, ystep;  /* y range and tick step, ns */
    double scale;          /* ns per unit of the y labels */
    const char *unit;
};

static bool drawable(const struct doc_history_point *p)
{
    return isfinite(p->median_ns) && p->median_ns > 0 && p->median_ns <= MAX_NS;
}

/* The interval of a point, when it is one to draw. */
static bool interval(const struct doc_history_point *p, double *lo, double *hi)
{
    *lo = p->ci_low_ns;
    *hi = p->ci_high_ns;
    return isfinite(*lo) && isfinite(*hi) && *lo > 0 && *hi >= *lo && *hi <= MAX_NS;
}

static double x_of(const struct doc_history *d, const struct axes *a,
                   const struct doc_history_series *s, size_t i)
{
    double v = a->by_time ? history_time(d->results[s->points[i].result].created) : (double)i;
    return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (v - a->x0) / (a->x1 - a->x0);
}

static double y_of(const struct axes *a, double ns)
{
    return BOTTOM - (BOTTOM - TOP) * (ns - a->y0) / (a->y1 - a->y0);
}

/* The axes of series s; false when nothing of it can be drawn. */
static bool axes_of(const struct doc_history *d, const struct doc_history_series *s, struct axes *a)
{
    memset(a, 0, sizeof *a);
    double lo = INFINITY, hi = -INFINITY, t0 = INFINITY, t1 = -INFINITY;
    size_t n = 0;
    a->by_time = true;
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_history_point *p = &s->points[i];
        if (!drawable(p))
            continue;
        double l, h, t = history_time(d->results[p->result].created);
        if (!interval(p, &l, &h))
            l = h = p->median_ns;
        lo = fmin(lo, fmin(l, p->median_ns));
        hi = fmax(hi, fmax(h, p->median_ns));
        a->by_time &= isfinite(t);
        t0 = fmin(t0, t);
        t1 = fmax(t1, t);
        n++;
    }
    if (!n)
        return false;
    if (!a->by_time) {
        t0 = 0;
        t1 = (double)(s->n_points - 1);
    }
    double pad = t1 > t0 ? (t1 - t0) * 0.04 : a->by_time ? 30 : 1;
    a->x0 = t0 - pad;
    a->x1 = t1 + pad;
    a->unit = history_unit(hi, &a->scale);
    if (lo >= 0.4 * hi) { /* a band around the data: a few percent must show */
        a->ystep = html_nice_ceil(hi > lo ? (hi - lo) / 4 : hi * 0.02);
        a->y0 = floor(lo / a->ystep) * a->ystep;
        a->y1 = ceil(hi / a->ystep) * a->ystep;
    } else { /* from zero */
        a->ystep = html_nice_ceil(hi / 4);
        a->y1 = ceil(hi / a->ystep) * a->ystep;
    }
    if (!(a->y1 > a->y0))
        a->y1 = a->y0 + a->ystep;
    return isfinite(a->y0) && isfinite(a->y1) && a->ystep > 0 && isfinite(a->x0) &&
           isfinite(a->x1);
}

/* A time tick's text: hundredths or tenths of seconds, seconds, minutes, or the date, as the
 * step calls for. */
static void time_label(double t, double step, bool one_day, char *buf, size_t len)
{
    double cs = round(t * 100); /* in hundredths: a tick at 12.2 s may be 12.19999 */
    time_t tt = (time_t)floor(cs / 100);
    int frac = (int)(cs - 100.0 * (double)tt);
    struct tm tm;
    char hms[16];
    if (!gmtime_r(&tt, &tm) || !strftime(hms, sizeof hms, "%H:%M:%S", &tm)) {
        snprintf(buf, len, "?");
        return;
    }
    if (step < 0.1)
        snprintf(buf, len, "%s.%02d", hms, frac);
    else if (step < 1)
        snprintf(buf, len, "%s.%d", hms, frac / 10);
    else if (step < 60)
        snprintf(buf, len, "%s", hms);
    else if (step < 86400 && one_day)
        strftime(buf, len, "%H:%M", &tm);
    else if (step < 86400)
        strftime(buf, len, "%m-%d %H:%M", &tm);
    else
        strftime(buf, len, "%Y-%m-%d", &tm);
}

static void x_axis(FILE *out, const struct axes *a)
{
    char label[96] = "results, oldest to newest (some have no time recorded)";
    if (!a->by_time) { /* the results' numbers, 1 the oldest */
        double step = html_nice_ceil(fmax(1, (a->x1 - a->x0) / 8));
        for (int k = 0; k <= 12 && k * step <= a->x1; k++) {
            double x = PLOT_X0 + (PLOT_X1 - PLOT_X0) * (k * step - a->x0) / (a->x1 - a->x0);
            fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                    "%.0f</text>\n", x, BOTTOM + 14, k * step + 1);
        }
    } else {
        static const double steps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30,
                                       60, 120, 300, 600, 900, 1800,
                                       3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
                                       1209600, 2592000, 7776000, 31536000};
        double span = a->x1 - a->x0, step = 0;
        for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !step; i++)
            if (span / steps[i] <= 7)
                step = steps[i];
        if (!step)
            step = 31536000 * html_nice_ceil(span / 7 / 31536000);
        char d0[16], d1[16];
        time_t t0 = (time_t)floor(a->x0), t1 = (time_t)floor(a->x1);
        struct tm tm0, tm1;
        bool one_day = gmtime_r(&t0, &tm0) && gmtime_r(&t1, &tm1) &&
                       strftime(d0, sizeof d0, "%Y-%m-%d", &tm0) &&
                       strftime(d1, sizeof d1, "%Y-%m-%d", &tm1) && !strcmp(d0, d1);
        double first = ceil(a->x0 / step) * step;
        for (int k = 0; k <= 12 && isfinite(first) && first + k * step <= a->x1; k++) {
            double t = first + k * step;
            char b[32];
            double x = PLOT_X0 + (PLOT_X1 - PLOT_X0) * (t - a->x0) / (a->x1 - a->x0);
            time_label(t, step, one_day, b, sizeof b);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    x, TOP, x, BOTTOM, x, BOTTOM + 14, b);
        }
        if (one_day)
            snprintf(label, sizeof label, "time measured (UTC), %s", d0);
        else
            snprintf(label, sizeof label, "time measured (UTC)");
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text class=\"axislabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            PLOT_X0, BOTTOM, PLOT_X1, BOTTOM, (PLOT_X0 + PLOT_X1) / 2, HEIGHT - 10, label);
}

static void y_axis(FILE *out, const struct axes *a)
{
    /* as many decimals as the step needs (a step of 0.025 ms: three), the same on every tick */
    double step = a->ystep / a->scale;
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    while (dec < 9 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
        dec++;
    for (int k = 0; k <= 12; k++) {
        double v = a->y0 + k * a->ystep;
        if (v > a->y1 * (1 + 1e-9))
            break;
        double y = y_of(a, v);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, dec, v / a->scale);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text class=\"axislabel\" x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 16 %.1f)\">median time (%s)</text>\n", PLOT_X0, TOP,
            PLOT_X0, BOTTOM, (TOP + BOTTOM) / 2, (TOP + BOTTOM) / 2, a->unit);
}

/* The tooltip of point i of s. */
static void point_title(FILE *out, const struct history_page *pg, const struct doc_history_series *s,
                        size_t i)
{
    const struct doc_history_point *p = &s->points[i];
    const struct doc_history_result *r = &pg->d->results[p->result];
    char when[32], v[32], lo[32], hi[32];
    fputs("<title>", out);
    html_text(out, r->id);
    fputc('\n', out);
    html_text(out, history_created(r->created, when, sizeof when));
    fputs(" UTC\n", out);
    if (r->commit) {
        fputs("commit ", out);
        html_text(out, r->commit);
    } else {
        fputs("no git commit recorded", out);
    }
    fputs("\nhost ", out);
    html_text(out, history_html_host_name(r->host));
    fprintf(out, "\nmedian %s", units_duration(p->median_ns, v, sizeof v));
    double l, h;
    if (interval(p, &l, &h)) {
        fputs("; ", out);
        if (isfinite(p->ci_level))
            fprintf(out, "%.0f %% ", 100 * p->ci_level);
        fprintf(out, "interval %s .. %s", units_duration(l, lo, sizeof lo),
                units_duration(h, hi, sizeof hi));
    }
    if (p->n > 0)
        fprintf(out, "; %ld run%s", p->n, p->n == 1 ? "" : "s");
    for (size_t c = 0; c < s->n_changes; c++)
        if (s->changes[c].point == i) {
            char size[48];
            fprintf(out, "\nstep change starts here: %s",
                    history_change_size(&s->changes[c], size, sizeof size));
        }
    fputs("</title>", out);
}

/* The points of host h in s: band, line, dots. */
static void host_line(FILE *out, const struct history_page *pg, const struct doc_history_series *s,
                      const struct axes *a, size_t h)
{
    size_t *idx = xcalloc(s->n_points + 1, sizeof *idx), n = 0, with_ci = 0;
    for (size_t i = 0; i < s->n_points; i++) {
        double l, hh;
        if (!drawable(&s->points[i]) || pg->host_of[s->points[i].result] != h)
            continue;
        idx[n++] = i;
        with_ci += interval(&s->points[i], &l, &hh);
    }
    if (!n) {
        free(idx);
        return;
    }
    const char *colour = history_html_palette[h % N_PALETTE];
    fprintf(out, "<g class=\"p h%zu\">\n", h);
    if (n >= 2 && with_ci) { /* the band: upper edge forwards, lower edge back */
        fprintf(out, "<polygon class=\"band\" fill=\"%s\" points=\"", colour);
        for (size_t k = 0; k < n; k++) {
            double l, hh;
            if (!interval(&s->points[idx[k]], &l, &hh))
                hh = s->points[idx[k]].median_ns;
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]), y_of(a, hh));
        }
        for (size_t k = n; k-- > 0;) {
            double l, hh;
            if (!interval(&s->points[idx[k]], &l, &hh))
                l = s->points[idx[k]].median_ns;
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]), y_of(a, l));
        }
        fputs("\"/>\n", out);
    }
    if (n >= 2) {
        fprintf(out, "<polyline class=\"ptl\" stroke=\"%s\" points=\"", colour);
        for (size_t k = 0; k < n; k++)
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]),
                    y_of(a, s->points[idx[k]].median_ns));
        fputs("\"/>\n", out);
    }
    for (size_t k = 0; k < n; k++) {
        const struct doc_history_point *p = &s->points[idx[k]];
        double x = x_of(pg->d, a, s, idx[k]), l, hh;
        fputs("<g>", out);
        if (n == 1 && interval(p, &l, &hh))
            fprintf(out, "<path d=\"M%.2f %.2fV%.2fM%.2f %.2fh8M%.2f %.2fh8\" stroke=\"%s\" "
                    "fill=\"none\"/>", x, y_of(a, l), y_of(a, hh), x - 4, y_of(a, l), x - 4,
                    y_of(a, hh), colour);
        fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\">", x,
                y_of(a, p->median_ns), colour);
        point_title(out, pg, s, idx[k]);
        fputs("</circle></g>\n", out);
    }
    fputs("</g>\n", out);
    free(idx);
}

/* The change markers: a dashed line where each starts, the levels either side, and a label
 * "slower by 98.3 % from a1b2c3d4e5f6" on one of two rows above the plot. */
static void change_marks(FILE *out, const struct history_page *pg, const struct doc_history_series *s,
                         const struct axes *a)
{
    for (size_t c = 0; c < s->n_changes; c++) {
        const struct doc_history_change *ch = &s->changes[c];
        if (!drawable(&s->points[ch->point]))
            continue;
        const struct doc_history_result *r = &pg->d->results[s->points[ch->point].result];
        const char *colour = ch->change_pct > 0 ? SLOWER : FASTER;
        double x = x_of(pg->d, a, s, ch->point);
        size_t from = c ? s->changes[c - 1].point : 0;
        size_t to = c + 1 < s->n_changes ? s->changes[c + 1].point : s->n_points - 1;
        double xa = x_of(pg->d, a, s, from), xb = x_of(pg->d, a, s, to);
        xa = isfinite(xa) ? xa : x; /* a point not drawn may have no time */
        xb = isfinite(xb) ? xb : x;
        double yb = y_of(a, ch->before_ns), ya = y_of(a, ch->after_ns);
        char size[48], shortc[13];
        history_change_size(ch, size, sizeof size);
        fputs("<g class=\"change\">", out);
        if (yb >= TOP && yb <= BOTTOM && ya >= TOP && ya <= BOTTOM)
            fprintf(out, "<path class=\"level\" stroke=\"%s\" d=\"M%.2f %.2fH%.2fM%.2f %.2f"
                    "H%.2f\"/>", colour, xa, yb, x, x, ya, xb);
        fprintf(out, "<line class=\"mark\" stroke=\"%s\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                "y2=\"%.1f\"><title>%s</title></line>\n", colour, x, TOP - 8, x, BOTTOM, size);
        bool right = x > (PLOT_X0 + PLOT_X1) / 2;
        char *url = history_commit_url(pg->d->commit_url, r->commit);
        if (url) {
            fputs("<a href=\"", out);
            html_text(out, url);
            fputs("\">", out);
        }
        fprintf(out, "<text class=\"marktext\" fill=\"%s\" x=\"%.2f\" y=\"%.1f\" "
                "text-anchor=\"%s\">%s from ", colour, right ? x - 4 : x + 4,
                c % 2 ? 26.0 : 13.0, right ? "end" : "start", size);
        if (r->commit)
            html_text(out, history_short_commit(r->commit, shortc));
        else
            html_short_text(out, r->id, 30);
        fputs("</text>", out);
        if (url)
            fputs("</a>", out);
        free(url);
        fputs("</g>\n", out);
    }
}

void history_html_chart(const struct history_page *pg, size_t k)
{
    FILE *out = pg->out;
    const struct doc_history_series *s = &pg->d->series[k];
    char *name = history_series_name(s);
    fprintf(out, "<figure class=\"");
    history_html_series_classes(pg, k);
    fprintf(out, "\" id=\"chart-%zu\">\n<figcaption title=\"", k + 1);
    html_text(out, name);
    fputs(": ", out);
    html_text(out, s->stage);
    fputs("\">", out);
    html_short_text(out, name, NAME_CHARS);
    fputs(" <span class=\"st\">\u00b7 ", out);
    html_short_text(out, s->stage, 40);
    fputs("</span></figcaption>\n", out);
    struct axes a;
    if (!s->n_points || !axes_of(pg->d, s, &a)) {
        fputs(s->n_points ? "<p>The medians are out of any measurable range: nothing to draw."
                            "</p>\n</figure>\n"
                          : "<p>No result of this benchmark succeeded: nothing to draw.</p>\n"
                            "</figure>\n", out);
        free(name);
        return;
    }
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"", CHART_W, HEIGHT, CHART_W, HEIGHT);
    html_text(out, name);
    fputs(": median time of each result over time\" xmlns=\"http://www.w3.org/2000/svg\">\n",
          out);
    x_axis(out, &a);
    y_axis(out, &a);
    size_t hosts = 0, dropped = 0;
    for (size_t h = 0; h < pg->n_hosts; h++)
        if (history_html_series_on_host(pg, k, h)) {
            host_line(out, pg, s, &a, h);
            hosts++;
        }
    for (size_t i = 0; i < s->n_points; i++)
        dropped += !drawable(&s->points[i]);
    change_marks(out, pg, s, &a);
    fputs("</svg>\n", out);
    if (hosts > 1 || pg->n_hosts > 1) {
        fputs("<div class=\"legend\">", out);
        for (size_t h = 0; h < pg->n_hosts; h++) {
            if (!history_html_series_on_host(pg, k, h))
                continue;
            fprintf(out, "<span class=\"p h%zu\" title=\"", h);
            html_text(out, history_html_host_name(pg->hosts[h]));
            fprintf(out, "\"><i style=\"background:%s\"></i>", history_html_palette[h % N_PALETTE]);
            html_short_text(out, history_html_host_name(pg->hosts[h]), PILL_CHARS);
            fputs("</span>", out);
        }
        fputs("</div>\n", out);
    }
    if (s->n_changes) {
        fputs("<ul class=\"marks\">\n", out);
        for (size_t c = 0; c < s->n_changes; c++) {
            size_t host = pg->host_of[s->points[s->changes[c].point].result];
            fprintf(out, "<li class=\"p h%zu\">", host);
            history_html_change(out, pg->d, s, &s->changes[c]);
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    if (dropped)
        fprintf(out, "<p class=\"note\">%zu result%s with a median beyond any measurable range "
                "not drawn.</p>\n", dropped, dropped == 1 ? "" : "s");
    fputs("</figure>\n", out);
    free(name);
}
