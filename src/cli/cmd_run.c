/* cmd_run: `mlbench run`: parses the options, turns a workflow file or no command at all into
 * the command to measure, hands it to the repetition loop (session/session.c) and prints the
 * summary. */
#include <stdio.h>
#include <stdlib.h>

#include "session/session.h"
#include "cli/commands.h"
#include "cli/run_options.h"
#include "cli/workload_path.h"
#include "export/text.h"
#include "measure/workflow.h"
#include "util/log.h"
#include "util/xalloc.h"

int cmd_run(int argc, char **argv)
{
    struct run_options o;
    struct run_config *cfg = &o.run;
    char err[1024];
    int rc = run_options_parse(argc, argv, &o, err, sizeof err);
    if (rc == RUN_OPTIONS_HELP) {
        run_options_free(&o);
        return 0;
    }
    if (rc < 0) {
        log_error("%s", err);
        run_options_free(&o);
        return 2;
    }
    log_set_quiet(o.session.quiet);

    /* A workflow file: checked now (a bad file runs nothing), then measured as
     * `mlbench workflow-exec FILE`, which marks each step as a stage. */
    char **wf_argv = NULL;
    if (cfg->argc == 1 && workflow_is_file(cfg->argv[0])) {
        if (cfg->shell) {
            log_error("--shell does not apply to a workflow file (set 'shell: true' on a stage)");
            run_options_free(&o);
            return 2;
        }
        struct workflow *wf = workflow_load(cfg->argv[0], err, sizeof err);
        for (size_t i = 0; wf && i < o.params.n; i++)
            if (workflow_set_param(wf, o.params.v[i], err, sizeof err) < 0) {
                workflow_free(wf);
                wf = NULL;
            }
        if (!wf) {
            log_error("%s", err);
            run_options_free(&o);
            return 2;
        }
        workflow_free(wf);
        char *self = realpath("/proc/self/exe", NULL);
        wf_argv = xcalloc(3 + 2 * o.params.n + 1, sizeof *wf_argv);
        int n = 0;
        wf_argv[n++] = self ? self : xstrdup("/proc/self/exe");
        wf_argv[n++] = "workflow-exec";
        wf_argv[n++] = cfg->argv[0];
        for (size_t i = 0; i < o.params.n; i++) {
            wf_argv[n++] = "--param";
            wf_argv[n++] = o.params.v[i];
        }
        cfg->argv = wf_argv;
        cfg->argc = n;
    } else if (o.params.n) {
        log_error("--param sets a parameter of a workflow file: give a .yaml file as the command");
        run_options_free(&o);
        return 2;
    }

    char *default_argv[] = {NULL, "imgclf", "--epochs", "1", NULL};
    if (cfg->argc == 0) { /* no command: the default workflow, once unless -r says otherwise */
        if (!(default_argv[0] = workload_path())) {
            log_error("no command to benchmark, and the default workflow's mlbench-workload is "
                      "not beside mlbench or on PATH: give a command after '--', e.g. "
                      "mlbench run -r 5 -- python train.py");
            run_options_free(&o);
            return 2;
        }
        log_info("no command given: running the default workflow%s: %s imgclf --epochs 1 (the "
                 "image-classification reference workload on Fashion-MNIST; give your own "
                 "command after '--', or see mlbench demo)",
                 cfg->runs ? "" : " once", default_argv[0]);
        if (!cfg->runs)
            cfg->runs = 1;
        cfg->argv = default_argv;
        cfg->argc = 4;
    }
    struct session_output out;
    int status = session_run(cfg, &o.session, &out);
    if (o.json && out.doc)
        export_text_print_json(stdout, out.doc, out.path);
    else if (!o.session.quiet && out.doc)
        export_text_print(stdout, out.doc, out.path, o.verbose);
    fflush(stdout);
    session_output_free(&out);
    free(default_argv[0]);
    if (wf_argv)
        free(wf_argv[0]);
    free(wf_argv);
    run_options_free(&o);
    return status;
}
