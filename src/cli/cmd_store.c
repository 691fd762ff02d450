/* cmd_store: `mlbench store push TARGET [REF...]` and `mlbench store pull SOURCE`: copy results
 * between a local directory store and a shared one (or any two stores). A result is one id:
 * copying it again changes nothing, so a push that stopped half-way is simply run again
 * (docs/store.md). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/fsx.h"
#include "util/log.h"
#include "store/store.h"

/* The prose of --help, above the options. */
static const char usage_text[] =
    "Usage: mlbench store push TARGET [REF...] [--from DIR]\n"
    "  or:  mlbench store pull SOURCE [--label NAME] [--to DIR]\n"
    "\n"
    "push copies results to the store TARGET (a shared one: postgresql://host/db): the REFs\n"
    "(result files, ids, labels, latest) or, without any, every result of the local store.\n"
    "pull copies the results of SOURCE (those with --label NAME) into a local store.\n"
    "A result already there (the same id) is left as it is, so either can be run again.\n";

/* Copies what store_copy copies and says how many were copied once it started. Returns 0, or
 * the exit status after saying what failed. */
static int copy(struct store *from, const char *from_dir, char *const *refs, size_t n_refs,
                const struct store_query *q, struct store *to, const char *verb)
{
    char err[1024];
    size_t added, there;
    int rc = store_copy(from, from_dir, refs, n_refs, q, to, &added, &there, err, sizeof err);
    if (rc < 0)
        log_error("store %.4s: %s", verb, err);
    if (rc == -1) /* nothing listed */
        return store_exit_status();
    rc = rc < 0 ? store_exit_status() : 0;
    printf("%s %zu result%s to %s", verb, added, added == 1 ? "" : "s", store_name(to));
    if (there)
        printf(" (%zu already there)", there);
    putchar('\n');
    if (rc == 3) /* verb is "pushed" or "pulled": the action is its first four letters */
        log_error("store %.4s: stopped there; run it again to copy the rest (what was copied "
                  "stays as it is)", verb);
    return rc;
}

int cmd_store(int argc, char **argv)
{
    const char *from = STORE_DEFAULT_DIR, *to = STORE_DEFAULT_DIR, *label = NULL;
    const struct cli_option table[] = {
        CLI_OPT_STRING("from", 0, &from, CLI_NONEMPTY, "is empty: give a store directory",
                       .metavar = "DIR", .help = "the local store push reads (default .mlbench)"),
        CLI_OPT_STRING("to", 0, &to, CLI_NONEMPTY, "is empty: give a store directory",
                       .metavar = "DIR", .help = "the local store pull writes (default .mlbench)"),
        CLI_OPT_STRING("label", 'l', &label, 0, NULL, .metavar = "NAME",
                       .help = "pull only the results with this label"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "store", .options = table, .usage = usage_text};
    struct cli_args args;
    int rc;
    if (!cli_parse_args(&parser, argc, argv, &args, &rc))
        return rc;
    char err[1024];
    bool push = args.n >= 1 && !strcmp(args.v[0], "push");
    bool pull = args.n >= 1 && !strcmp(args.v[0], "pull");
    if (args.n >= 1 && !push && !pull) {
        log_error("store: unknown action '%s': give push or pull (see mlbench store --help)",
                  args.v[0]);
        return 2;
    }
    if ((!push && !pull) || args.n < 2 || (pull && args.n > 2)) {
        log_error("store: give push TARGET [REF...] or pull SOURCE (see mlbench store --help)");
        return 2;
    }
    if ((push && label) || (pull && strcmp(from, STORE_DEFAULT_DIR) != 0) ||
        (push && strcmp(to, STORE_DEFAULT_DIR) != 0)) {
        log_error("store: --from is push's, --to and --label pull's (see mlbench store --help)");
        return 2;
    }
    const char *other = args.v[1], *local = push ? from : to;
    if (store_where(local, NULL, err, sizeof err) != 0) {
        log_error("store: --%s takes a directory store (the local one); the shared store is "
                  "the %s", push ? "from" : "to", push ? "TARGET" : "SOURCE");
        return 2;
    }
    /* push REF...: the references are read one by one (a file needs no store) */
    bool need_local = pull || args.n == 2;
    if (need_local && push && access(local, F_OK) != 0) {
        log_error("store push: no local store '%s' to push from: give --from DIR, or the "
                  "result files to push", local);
        return 2;
    }
    /* the directory a copy goes to is made; the one it comes from must be there */
    const char *made = pull ? local : store_where(other, NULL, NULL, 0) == 0 ? other : NULL;
    if (made && fsx_mkdirs(made) < 0) {
        log_error("store %s: cannot create the store '%s': %s", args.v[0], made,
                  strerror(errno));
        return 2;
    }
    struct store *a = NULL, *b = NULL;
    if ((need_local && !(a = store_open(local, err, sizeof err))) ||
        !(b = store_open(other, err, sizeof err))) {
        log_error("store %s: %s", args.v[0], err);
        rc = store_exit_status();
    } else if (push) {
        struct store_query all = {0};
        rc = copy(a, local, args.n > 2 ? args.v + 2 : NULL, (size_t)args.n - 2, &all, b,
                  "pushed");
    } else {
        struct store_query q = {.label = label};
        rc = copy(b, other, NULL, 0, &q, a, "pulled");
    }
    store_close(a);
    store_close(b);
    fflush(stdout);
    return rc;
}
