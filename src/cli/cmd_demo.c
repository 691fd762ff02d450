/* cmd_demo: `mlbench demo`, the worked example automated (docs/workloads.md): prepare the dataset,
 * benchmark the image-classification workload in its baseline configuration, then in its
 * optimised one, and compare them stage by stage. Each step is this same binary run as a child
 * (`mlbench run`, `mlbench compare`), so the demo shows exactly what a user would type. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/workload_path.h"
#include "util/log.h"
#include "util/xalloc.h"

extern char **environ;

static const char usage[] =
    "usage: mlbench demo [options]\n"
    "Benchmarks the image-classification reference workload (Fashion-MNIST JPEG files -> small\n"
    "CNN) in a baseline configuration (serial loading, batch 32, one thread, fp32) and in an\n"
    "optimised one (loader thread + prefetch, batch 128, all cores), shows each run's stages and\n"
    "analysis, then compares them stage by stage.\n"
    "  --quick          a small synthetic dataset and few images: seconds (for tests)\n"
    "  -r, --runs N     repetitions of each configuration (default 5; --quick 4: fewer than 4\n"
    "                   cannot show a significant change)\n"
    "  --train-images N training images per run (default: all 60000; --quick 600)\n"
    "  --data-dir DIR   where the dataset's JPEG files are kept\n"
    "  --store DIR      result store (default .mlbench); the two results are also written to\n"
    "                   DIR/demo/baseline.json and DIR/demo/optimised.json\n";

/* Runs argv (argv[0] an absolute path) and waits. Returns its exit status, 128 + signal when it
 * was killed, or -1 when it could not start. */
static int spawn_wait(char **argv)
{
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc) {
        log_error("cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct demo {
    char *self, *workload;
    const char *store, *data_dir, *dataset;
    int runs, train_images;
    bool quick;
};

/* Appends the imgclf options shared by every step to argv at *n. */
static void common_args(const struct demo *d, char **argv, int *n, char *train_images)
{
    argv[(*n)++] = d->workload;
    argv[(*n)++] = "imgclf";
    argv[(*n)++] = "--dataset";
    argv[(*n)++] = (char *)d->dataset;
    if (d->quick) {
        argv[(*n)++] = "--image-size";
        argv[(*n)++] = "16";
        argv[(*n)++] = "--val-images";
        argv[(*n)++] = "300";
    }
    if (d->data_dir) {
        argv[(*n)++] = "--data-dir";
        argv[(*n)++] = (char *)d->data_dir;
    }
    if (d->train_images) {
        argv[(*n)++] = "--train-images";
        argv[(*n)++] = train_images;
    }
    argv[(*n)++] = "--epochs";
    argv[(*n)++] = "1";
}

static int measure(const struct demo *d, const char *label, const char *out, char *const *knobs)
{
    char runs[16], train_images[16];
    snprintf(runs, sizeof runs, "%d", d->runs);
    snprintf(train_images, sizeof train_images, "%d", d->train_images);
    char *argv[64];
    int n = 0;
    argv[n++] = d->self;
    argv[n++] = "run";
    argv[n++] = "-r";
    argv[n++] = runs;
    argv[n++] = "-l";
    argv[n++] = (char *)label;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = "--store";
    argv[n++] = (char *)d->store;
    argv[n++] = "--";
    common_args(d, argv, &n, train_images);
    for (int i = 0; knobs[i]; i++)
        argv[n++] = knobs[i];
    argv[n] = NULL;
    return spawn_wait(argv);
}

/* Returns CLI_OK, CLI_HELP (usage printed) or CLI_ERROR (message printed). */
static int parse(int argc, char **argv, struct demo *d)
{
    const char *store_env = getenv("MLBENCH_STORE");
    d->store = store_env && *store_env ? store_env : ".mlbench";
    d->dataset = "fashion-mnist";
    const struct cli_option table[] = {
        CLI_OPT_FLAG("quick", 0, &d->quick),
        CLI_OPT_INTEGER("runs", 'r', &d->runs, 1, 100, 0, "must be a whole number from 1 to 100"),
        CLI_OPT_INTEGER("train-images", 0, &d->train_images, 1, 10000000, 0,
                        "must be a whole number from 1 to 10000000"),
        CLI_OPT_STRING("data-dir", 0, &d->data_dir, CLI_NONEMPTY, "is empty: give a directory"),
        CLI_OPT_STORE(&d->store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"demo", table, CLI_NO_ARGS};
    struct cli_args args;
    char err[1024];
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_HELP)
        fputs(usage, stdout);
    else if (rc == CLI_ERROR)
        log_error("%s", err);
    if (rc != CLI_OK)
        return rc;
    if (d->quick)
        d->dataset = "synthetic";
    /* Mann-Whitney's test cannot give p < 0.05 with 3 runs a side (its smallest p is 0.1):
     * 5 runs let compare call a real change significant. */
    if (!d->runs)
        d->runs = d->quick ? 4 : 5;
    if (!d->train_images && d->quick)
        d->train_images = 600;
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    struct demo d = {0};
    int rc = parse(argc, argv, &d);
    if (rc != CLI_OK)
        return rc == CLI_HELP ? 0 : 2;
    d.workload = workload_path();
    if (!d.workload) {
        log_error("cannot find mlbench-workload beside mlbench or on PATH: build it (make "
                  "build) or install it");
        return 2;
    }
    d.self = realpath("/proc/self/exe", NULL);
    char *outdir = xasprintf("%s/demo", d.store);
    char *base_json = xasprintf("%s/baseline.json", outdir);
    char *opt_json = xasprintf("%s/optimised.json", outdir);
    int status = 0;
    if (!d.self || ((mkdir(d.store, 0777) < 0 && errno != EEXIST) ||
                    (mkdir(outdir, 0777) < 0 && errno != EEXIST))) {
        log_error("cannot create '%s': %s (choose another with --store DIR)", outdir,
                  strerror(errno));
        status = 2;
        goto out;
    }

    /* The knobs of the two configurations. The optimised one uses every core for training and
     * one loader thread (a quarter of the cores on bigger machines) that prefetches batches
     * while the step runs. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    char threads[24], loaders[24];
    snprintf(threads, sizeof threads, "%ld", cpus);
    snprintf(loaders, sizeof loaders, "%ld", cpus >= 8 ? cpus / 4 : 1);
    char *baseline[] = {"--loader-threads", "0", "--batch", "32", "--threads", "1", NULL};
    char *optimised[] = {"--loader-threads", loaders, "--prefetch", "4", "--batch", "128",
                         "--threads", threads, NULL};

    char train_images[16];
    snprintf(train_images, sizeof train_images, "%d", d.train_images);
    printf("mlbench demo: image classification (%s, %s training images, 1 epoch), %d runs "
           "each\n\n== 1/4 dataset ==\n",
           d.dataset, d.train_images ? train_images : "all", d.runs);
    fflush(stdout);
    char *prep[32];
    int n = 0;
    common_args(&d, prep, &n, train_images);
    prep[n++] = "--prepare-only";
    prep[n] = NULL;
    if ((status = spawn_wait(prep)) != 0)
        goto failed;

    printf("\n== 2/4 baseline: serial loading in the training thread, batch 32, 1 thread, "
           "fp32 ==\n");
    fflush(stdout);
    if ((status = measure(&d, "demo-baseline", base_json, baseline)) != 0)
        goto failed;
    printf("\n== 3/4 optimised: %s loader thread(s) with 4 batches of prefetch, batch 128, %s "
           "thread(s), fp32 ==\n",
           loaders, threads);
    fflush(stdout);
    if ((status = measure(&d, "demo-optimised", opt_json, optimised)) != 0)
        goto failed;

    printf("\n== 4/4 baseline -> optimised, stage by stage ==\n");
    fflush(stdout);
    char *cmp[] = {d.self, "compare", base_json, opt_json, NULL};
    if ((status = spawn_wait(cmp)) != 0)
        goto failed;
    printf("\nIn the optimised runs load and preprocess ran on the loader thread while train ran "
           "(\"stages overlap\" above):\ntheir own times can grow as they share the cores, yet "
           "they cost only what they add to the total.\nThe accuracies differ by the batch: "
           "fewer, larger steps in one epoch (docs/workloads.md).\n");
    printf("\nresults: %s and %s (also in the store %s: mlbench history)\n"
           "report:  mlbench report -o demo.html %s %s\n",
           base_json, opt_json, d.store, base_json, opt_json);
    goto out;
failed:
    if (status < 0)
        status = 1;
    log_error("the demo stopped: the step above failed (exit status %d)", status);
out:
    free(d.self);
    free(d.workload);
    free(outdir);
    free(base_json);
    free(opt_json);
    return status;
}
