/* cmd_show: `mlbench show REF`: a stored result, read back from its JSON file, printed as the
 * summary `mlbench run` prints after its runs (export/text.c, the one terminal renderer), or the
 * file itself with --json. References: docs/store.md. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli/commands.h"
#include "export/text.h"
#include "util/log.h"
#include "result/result_load.h"
#include "store/store.h"

static const char usage_text[] =
    "usage: mlbench show REF [--json] [--store DIR]\n"
    "\n"
    "Prints a stored result. REF is an id, a unique id prefix, a label (its newest result),\n"
    "latest, or a result file.\n"
    "\n"
    "      --json           print the result file itself\n"
    "      --store DIR      result store (default .mlbench, or $MLBENCH_STORE)\n"
    "  -h, --help           this help\n";

/* Copies the file to out as it is. */
static int copy_file(FILE *out, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, out);
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : 0;
}

int cmd_show(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_STORE };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"store", required_argument, NULL, OPT_STORE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *store = store_default_dir();
    bool json = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON:
            json = true;
            break;
        case OPT_STORE:
            if (!*optarg) {
                log_error("show: --store is empty: give a directory");
                return 2;
            }
            store = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        case ':':
            log_error("show: option '%s' needs a value (see mlbench show --help)",
                      argv[optind - 1]);
            return 2;
        default:
            log_error("show: unknown option '%s' (see mlbench show --help)", argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind != 1) {
        log_error("show: give one result: an id, a prefix, a label, latest or a file (see "
                  "mlbench show --help)");
        return 2;
    }
    char err[1024], *path;
    if (store_resolve(store, argv[optind], &path, err, sizeof err) < 0) {
        log_error("%s", err);
        return 2;
    }
    json_t *r = result_load_file(path, err, sizeof err);
    if (!r) {
        log_error("%s", err);
        free(path);
        return 2;
    }
    int rc = 0;
    if (json) {
        if (copy_file(stdout, path) < 0) {
            log_error("cannot read %s", path);
            rc = 2;
        }
    } else {
        rc = export_text_print(stdout, r, path) < 0 ? 3 : 0;
    }
    json_decref(r);
    free(path);
    fflush(stdout);
    return rc == 0 && ferror(stdout) ? 3 : rc;
}
