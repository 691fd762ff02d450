/* history.c: what the renderers of the history dashboards (history.h) share: commit links,
 * names of series and hosts, times, units, the sentence for an empty store. Their table is
 * history_format.c. */
#include "export/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

bool history_commit_url_ok(const char *tmpl)
{
    return tmpl && strstr(tmpl, "{}") != NULL;
}

char *history_commit_url(const char *tmpl, const char *commit)
{
    if (!tmpl || !commit)
        return NULL;
    struct strbuf b = STRBUF_INIT;
    for (const char *p = tmpl; *p; p++) {
        if (p[0] != '{' || p[1] != '}') {
            strbuf_putc(&b, *p);
            continue;
        }
        for (const unsigned char *c = (const unsigned char *)commit; *c; c++) {
            if ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                strchr("._~-", *c))
                strbuf_putc(&b, (char)*c);
            else
                strbuf_printf(&b, "%%%02X", *c);
        }
        p++;
    }
    return strbuf_take(&b);
}

char *history_short_commit(const char *commit, char *buf)
{
    snprintf(buf, 13, "%.12s", commit ? commit : "");
    return buf;
}

char *history_series_name(const struct doc_history_series *s)
{
    if (s->label)
        return xstrdup(s->label);
    if (!s->command || !*s->command)
        return xstrdup("unlabelled results without a command (mlbench load)");
    return xasprintf("command %s", s->command);
}

double history_time(const char *created)
{
    struct tm tm = {0};
    const char *rest = created ? strptime(created, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest)
        return NAN;
    double frac = 0;
    if (*rest == '.') {
        char *end;
        frac = strtod(rest, &end); /* ".123" */
        if (end == rest || !(frac >= 0 && frac < 1))
            frac = 0;
    }
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? NAN : (double)t + frac;
}

char *history_created(const char *created, char *buf, size_t len)
{
    if (!created) {
        snprintf(buf, len, "-");
        return buf;
    }
    snprintf(buf, len, "%.19s", created);
    char *t = strchr(buf, 'T');
    if (t)
        *t = ' ';
    return buf;
}

const char *history_unit(double max_ns, double *scale)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = {{"s", 1e9}, {"ms", 1e6}, {"\u00b5s", 1e3}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (max_ns >= units[i].ns) {
            *scale = units[i].ns;
            return units[i].name;
        }
    *scale = 1;
    return "ns";
}

char *history_change_size(const struct doc_history_change *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s by %.1f %%", c->change_pct > 0 ? "slower" : "faster",
             fabs(c->change_pct));
    return buf;
}

static bool same_host(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

size_t history_hosts(const struct doc_history *d, const char ***hosts, size_t **host_of)
{
    const char **h = xcalloc(d->n_results + 1, sizeof *h);
    size_t *of = xcalloc(d->n_results + 1, sizeof *of), n = 0;
    for (size_t i = 0; i < d->n_results; i++) {
        size_t k = 0;
        while (k < n && !same_host(h[k], d->results[i].host))
            k++;
        if (k == n)
            h[n++] = d->results[i].host;
        of[i] = k;
    }
    *hosts = h;
    if (host_of)
        *host_of = of;
    else
        free(of);
    return n;
}

char *history_nothing(const struct doc_history *d)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "No results");
    if (d->label)
        strbuf_printf(&b, " with label '%s'", d->label);
    if (d->stage)
        strbuf_printf(&b, " %s stage '%s'", d->label ? "and" : "with a", d->stage);
    if (d->host)
        strbuf_printf(&b, " from host '%s'", d->host);
    strbuf_printf(&b, " in the store %s.", d->store ? d->store : "");
    return strbuf_take(&b);
}

char *history_filters(const struct doc_history *d)
{
    if (!d->label && !d->stage && !d->host && !d->last)
        return NULL;
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "Only results");
    if (d->label)
        strbuf_printf(&b, " with label '%s'", d->label);
    if (d->stage)
        strbuf_printf(&b, " with stage '%s'", d->stage);
    if (d->host)
        strbuf_printf(&b, " from host '%s'", d->host);
    if (d->last) /* "Only results: the newest 20." alone */
        strbuf_printf(&b, "%s the newest %zu", d->label || d->stage || d->host ? "," : ":",
                      d->last);
    strbuf_putc(&b, '.');
    return strbuf_take(&b);
}
