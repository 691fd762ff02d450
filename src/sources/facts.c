/* facts: the typed static facts of the metric sources (see facts.h). */
#include "sources/facts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct gpu_facts gpu_facts_unknown(int index)
{
    return (struct gpu_facts){.index = index, .memory_bytes = NAN, .cc_major = -1,
                              .cc_minor = -1, .sm_clock_max_hertz = NAN};
}

void source_facts_add_gpu(struct source_facts *f, const struct gpu_facts *g)
{
    f->gpus = xreallocarray(f->gpus, f->n_gpus + 1, sizeof *f->gpus);
    f->gpus[f->n_gpus++] = *g;
}

void source_facts_copy(struct source_facts *dst, const struct source_facts *src)
{
    *dst = *src;
    dst->gpus = NULL;
    if (src->n_gpus) {
        dst->gpus = xmalloc(src->n_gpus * sizeof *dst->gpus);
        memcpy(dst->gpus, src->gpus, src->n_gpus * sizeof *dst->gpus);
    }
}

void source_facts_free(struct source_facts *f)
{
    if (!f)
        return;
    free(f->gpus);
    memset(f, 0, sizeof *f);
}
