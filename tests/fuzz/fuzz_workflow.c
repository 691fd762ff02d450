/* fuzz_workflow: the workflow file loader. Input: a workflow file (YAML). It is written to a
 * file and loaded (workflow_load); a file that loads has every stage's argv built
 * (workflow_stage_argv, which refuses command substitution: nothing is run) and its first
 * parameter overridden (workflow_set_param), as `mlbench run --param` does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "measure/workflow.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet++)
        log_set_quiet(1);
    const char *path = fuzz_write_file("wf.yaml", data, size);
    char err[1024];
    struct workflow *wf = workflow_load(path, err, sizeof err);
    if (!wf) {
        if (!err[0])
            abort(); /* a refusal must say why */
        return 0;
    }
    if (wf->n_stages == 0)
        abort(); /* workflow.h: at least one stage */
    for (size_t i = 0; i < wf->n_stages; i++) {
        char **argv = workflow_stage_argv(wf, i, err, sizeof err);
        if (argv)
            workflow_argv_free(argv);
    }
    if (wf->n_params > 0) {
        char assign[512];
        snprintf(assign, sizeof assign, "%s=a b'c\"$(x)${params.%s}", wf->params[0].name,
                 wf->params[0].name);
        (void)workflow_set_param(wf, assign, err, sizeof err);
    }
    (void)workflow_set_param(wf, "no-such-param=1", err, sizeof err);
    workflow_free(wf);
    return 0;
}
