/* cmd_show: `mlbench show REF`: a stored result, read back from its JSON file, printed as the
 * summary `mlbench run` prints after its runs (export/text.c, the one terminal renderer), a load
 * result as the summary `mlbench load` prints at its end (export/load_text.c), or the file itself
 * with --json. References: docs/store.md. */
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli/commands.h"
#include "export/load_text.h"
#include "cli/options.h"
#include "export/sweep.h"
#include "export/text.h"
#include "util/log.h"
#include "doc/result.h"
#include "store/store.h"
#include "store/sweeps.h"

/* The prose of --help, above the options. */
static const char usage_text[] =
    "Usage: mlbench show REF [--json] [--store DIR]\n"
    "\n"
    "Prints a stored result (a load result: its scenario runs, as mlbench load ends). REF is\n"
    "an id, a unique id prefix, a label (its newest result), latest, or a result file; or a\n"
    "sweep (sweep:ID, latest-sweep): its table.\n";

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

/* Whether result r is a load result (it has a load section). */
static bool is_load(const json_t *r)
{
    struct doc_result *d = doc_result_read(r);
    bool load = d->load != NULL;
    doc_result_free(d);
    return load;
}

int cmd_show(int argc, char **argv)
{
    const char *store = store_default_dir();
    bool json = false, verbose = false;
    const struct cli_option table[] = {
        CLI_OPT_FLAG("json", 0, &json, .help = "print the result file itself"),
        CLI_OPT_FLAG("verbose", 'v', &verbose,
                     .help = "the summary in full: every stage's verdict, every finding, the "
                             "resources per stage, CPU, memory and metadata"),
        CLI_OPT_FLAG("explain", 0, &verbose, .help = "the same as --verbose"),
        CLI_OPT_STORE(&store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "show", .options = table, .usage = usage_text};
    struct cli_args args;
    int rc;
    if (!cli_parse_args(&parser, argc, argv, &args, &rc))
        return rc;
    char err[1024], *path;
    if (args.n != 1) {
        log_error("show: give one result: an id, a prefix, a label, latest or a file (see "
                  "mlbench show --help)");
        return 2;
    }
    if (store_is_sweep_ref(args.v[0])) {
        json_t *sweep = store_sweep_load(store, args.v[0], &path, err, sizeof err);
        if (!sweep) {
            log_error("show: %s", err);
            return 2;
        }
        rc = json ? copy_file(stdout, path) < 0 ? 2 : 0
                  : export_sweep_print(stdout, sweep, path) < 0 ? 3 : 0;
        json_decref(sweep);
        free(path);
        fflush(stdout);
        return rc == 0 && ferror(stdout) ? 3 : rc;
    }
    json_t *r = store_load(store, args.v[0], &path, err, sizeof err);
    if (!r) {
        log_error("%s", err);
        return store_exit_status();
    }
    rc = 0;
    if (json && access(path, R_OK) == 0) {
        /* the file as it was written, byte for byte */
        if (copy_file(stdout, path) < 0) {
            log_error("cannot read %s", path);
            rc = 2;
        }
    } else if (json) {
        /* a shared store keeps the document (JSONB: the keys in its own order) */
        if (json_dumpf(r, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0)
            rc = 3;
        putchar('\n');
    } else if (is_load(r)) {
        /* the process that measured is the load generator: its stage table and verdicts would
         * describe mlbench, not the server */
        rc = export_load_print_stored(stdout, r, path) < 0 ? 3 : 0;
    } else {
        rc = export_text_print(stdout, r, path, verbose) < 0 ? 3 : 0;
    }
    json_decref(r);
    free(path);
    fflush(stdout);
    return rc == 0 && ferror(stdout) ? 3 : rc;
}
