/* source: the series registry and the sample tables the metric sources fill (see source.h). */
#include "sources/source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

size_t series_register(struct series_registry *reg, const char *source, const char *name,
                       const char *labels, enum series_kind kind)
{
    reg->defs = xgrow(reg->defs, &reg->cap, reg->n + 1, sizeof *reg->defs);
    reg->defs[reg->n] = (struct series_def){.name = xstrdup(name),
                                            .labels = xstrdup(labels ? labels : ""),
                                            .kind = kind, .source = source};
    return reg->n++;
}

void sample_table_set(struct sample_table *tab, size_t series, size_t row, double value)
{
    if (series < tab->n_series && row < tab->n)
        tab->v[series][row] = value;
}

long sample_table_find(const struct sample_table *tab, const char *name, const char *labels)
{
    for (size_t i = 0; i < tab->n_series; i++)
        if (!strcmp(tab->defs[i].name, name) && (!labels || !strcmp(tab->defs[i].labels, labels)))
            return (long)i;
    return -1;
}

void sample_table_free(struct sample_table *tab)
{
    for (size_t i = 0; i < tab->n_series && tab->v; i++)
        free(tab->v[i]);
    free(tab->v);
    free(tab->t_ns);
    memset(tab, 0, sizeof *tab);
}

void sample_table_init(struct sample_table *tab, const struct series_registry *reg)
{
    memset(tab, 0, sizeof *tab);
    tab->defs = reg->defs;
    tab->n_series = reg->n;
    tab->v = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *tab->v);
}

size_t sample_table_add_row(struct sample_table *tab, int64_t t)
{
    if (tab->n == tab->cap) {
        tab->cap = tab->cap ? tab->cap * 2 : 256;
        tab->t_ns = xreallocarray(tab->t_ns, tab->cap, sizeof *tab->t_ns);
        for (size_t i = 0; i < tab->n_series; i++)
            tab->v[i] = xreallocarray(tab->v[i], tab->cap, sizeof **tab->v);
    }
    tab->t_ns[tab->n] = t;
    for (size_t i = 0; i < tab->n_series; i++)
        tab->v[i][tab->n] = NAN;
    return tab->n++;
}

void series_registry_free(struct series_registry *reg)
{
    for (size_t i = 0; i < reg->n; i++) {
        free(reg->defs[i].name);
        free(reg->defs[i].labels);
    }
    free(reg->defs);
    memset(reg, 0, sizeof *reg);
}
