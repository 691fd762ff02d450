/* cmd_rm: `mlbench rm REF...`: removes stored results, each its file and its index rows in one
 * transaction. Every reference is resolved before anything is removed, so a bad one removes
 * nothing; a file path must name a result file of the store (docs/store.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "store/store.h"

static const char usage_text[] =
    "usage: mlbench rm REF... [--store DIR]\n"
    "\n"
    "Removes stored results (their JSON files and index rows). REF is an id, a unique id\n"
    "prefix, a label (its newest result), latest, or a result file inside the store.\n"
    "\n"
    "      --store DIR      result store (default .mlbench, or $MLBENCH_STORE)\n"
    "  -h, --help           this help\n";

int cmd_rm(int argc, char **argv)
{
    enum { OPT_STORE = 256 };
    static const struct option longopts[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = store_default_dir();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_STORE:
            if (!*optarg) {
                log_error("rm: --store is empty: give a directory");
                return 2;
            }
            dir = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        case ':':
            log_error("rm: option '%s' needs a value (see mlbench rm --help)", argv[optind - 1]);
            return 2;
        default:
            log_error("rm: unknown option '%s' (see mlbench rm --help)", argv[optind - 1]);
            return 2;
        }
    }
    if (optind == argc) {
        log_error("rm: give the results to remove: ids, prefixes, labels, latest or files (see "
                  "mlbench rm --help)");
        return 2;
    }
    char err[1024];
    struct store *s = store_open(dir, err, sizeof err);
    if (!s) {
        log_error("%s", err);
        return 2;
    }
    size_t n = (size_t)(argc - optind);
    char **ids = xcalloc(n, sizeof *ids);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (store_find_stored(s, argv[optind + (int)i], &ids[i], err, sizeof err) < 0) {
            log_error("%s: nothing removed", err);
            rc = 2;
        }
    for (size_t i = 0; i < n && rc == 0; i++) {
        bool again = false; /* two references to one result */
        for (size_t j = 0; j < i && !again; j++)
            again = !strcmp(ids[i], ids[j]);
        if (again)
            continue;
        if (store_remove(s, ids[i], err, sizeof err) < 0) {
            log_error("%s", err);
            rc = 3;
        } else {
            printf("removed %s\n", ids[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    store_close(s);
    return rc;
}
