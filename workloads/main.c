/* main: `mlbench-workload NAME [options]`, the reference ML workloads (docs/workloads.md). */
#include <stdio.h>
#include <string.h>

#include "workloads.h"

static const struct {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
} workloads[] = {
    {"imgclf", imgclf_main, "image classification: JPEG files -> small CNN (load, preprocess, "
                            "train, evaluate)"},
    {"logreg", logreg_main, "logistic regression with L-BFGS on make_classification data"},
    {"gemm", gemm_main, "matrix-multiply throughput by device and precision (CPU, CUDA)"},
    {"mlp", mlp_main, "MLP-block inference latency and throughput by precision (CPU, CUDA)"},
    {"serve", serve_main, "inference server: imgclf's CNN over HTTP (KServe v2 JSON), "
                          "dynamic batching"},
};

static void usage(FILE *out)
{
    fputs("usage: mlbench-workload NAME [options]\n\nworkloads:\n", out);
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        fprintf(out, "  %-8s %s\n", workloads[i].name, workloads[i].summary);
    fputs("\nmlbench-workload NAME --help lists a workload's options; docs/workloads.md "
          "describes them.\nRun under mlbench to measure: mlbench run -- mlbench-workload imgclf\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (!strcmp(argv[1], workloads[i].name))
            return workloads[i].main(argc - 1, argv + 1);
    fprintf(stderr, "mlbench-workload: unknown workload '%s' (known: ", argv[1]);
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", workloads[i].name);
    fputs("; see mlbench-workload --help)\n", stderr);
    return 2;
}
