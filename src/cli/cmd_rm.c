/* cmd_rm: `mlbench rm REF...`: removes stored results, each its file and its index rows in one
 * transaction. Every reference is resolved before anything is removed, so a bad one removes
 * nothing; a file path must name a result file of the store (docs/store.md). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "store/store.h"

/* The prose of --help, above the options. */
static const char usage_text[] =
    "Usage: mlbench rm REF... [--store DIR]\n"
    "\n"
    "Removes stored results (their JSON files and index rows). REF is an id, a unique id\n"
    "prefix, a label (its newest result), latest, or a result file inside the store.\n";

int cmd_rm(int argc, char **argv)
{
    const char *dir = store_default_dir();
    const struct cli_option table[] = {
        CLI_OPT_STORE(&dir),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "rm", .options = table, .usage = usage_text};
    struct cli_args args;
    int rc;
    if (!cli_parse_args(&parser, argc, argv, &args, &rc))
        return rc;
    char err[1024];
    if (args.n == 0) {
        log_error("rm: give the results to remove: ids, prefixes, labels, latest or files (see "
                  "mlbench rm --help)");
        return 2;
    }
    struct store *s = store_open(dir, err, sizeof err);
    if (!s) {
        log_error("%s", err);
        return store_exit_status();
    }
    size_t n = (size_t)args.n;
    char **ids = xcalloc(n, sizeof *ids);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (store_find_stored(s, args.v[i], &ids[i], err, sizeof err) < 0) {
            log_error("%s: nothing removed", err);
            rc = store_exit_status();
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
