/* machine_facts: the typed facts of what a run ran on (see machine_facts.h). */
#include "result/machine_facts.h"

#include <string.h>

bool machine_facts_cpu_has(const struct machine_facts *m, const char *feature)
{
    for (size_t i = 0; m && i < m->n_cpu_features; i++)
        if (!strcmp(m->cpu_features[i], feature))
            return true;
    return false;
}

void machine_facts_copy(struct machine_facts *dst, const struct machine_facts *src)
{
    *dst = *src;
    source_facts_copy(&dst->sources, &src->sources);
}

void machine_facts_free(struct machine_facts *m)
{
    if (!m)
        return;
    source_facts_free(&m->sources);
    memset(m, 0, sizeof *m);
}
