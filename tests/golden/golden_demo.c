/* golden_demo: draws the views `mlbench demo` prints between its steps (export/demo_text.h) from
 * documents on disk, for the golden views test (test_golden.py), since the demo itself measures
 * anew at every call.
 * Usage: golden_demo bottleneck RESULT | batch SWEEP | final BEFORE AFTER */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "export/demo_text.h"

static json_t *read_doc(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "golden_demo: %s: %s\n", path, e.text);
    return j;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "bottleneck")) {
        json_t *r = read_doc(argv[2]);
        int rc = r ? export_demo_print_bottleneck(stdout, r) : 1;
        json_decref(r);
        return rc ? 1 : 0;
    }
    if (argc == 3 && !strcmp(argv[1], "batch")) {
        json_t *s = read_doc(argv[2]);
        int rc = s ? export_demo_print_batch_choice(stdout, s, 32) : 1;
        if (s)
            printf("chosen: %d\n", export_demo_chosen_batch(s, 32));
        json_decref(s);
        return rc ? 1 : 0;
    }
    if (argc == 4 && !strcmp(argv[1], "final")) {
        json_t *before = read_doc(argv[2]), *after = read_doc(argv[3]);
        if (!before || !after)
            return 1;
        /* Both guards: one passed with a baseline accuracy, one failed without. */
        struct export_demo_final f = {before, after, 0.8, 0.5,
                                      export_demo_counter(before, "accuracy"), 1};
        int rc = export_demo_print_final(stdout, &f);
        f.passed = 0;
        f.baseline = NAN;
        rc |= export_demo_print_final(stdout, &f);
        json_decref(before);
        json_decref(after);
        return rc ? 1 : 0;
    }
    fputs("usage: golden_demo bottleneck RESULT | batch SWEEP | final BEFORE AFTER\n", stderr);
    return 2;
}
