/* golden_demo: draws the views `mlbench demo` prints between its steps (demo_views.h) from
 * documents on disk, for the golden views test (test_golden.py), since the demo itself measures
 * anew at every call.
 * Usage: golden_demo bottleneck RESULT | batch SWEEP | final BEFORE AFTER */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/demo_views.h"

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
        int rc = r ? demo_print_bottleneck(stdout, r) : 1;
        json_decref(r);
        return rc ? 1 : 0;
    }
    if (argc == 3 && !strcmp(argv[1], "batch")) {
        json_t *s = read_doc(argv[2]);
        int rc = s ? demo_print_batch_choice(stdout, s, 32) : 1;
        if (s)
            printf("chosen: %d\n", demo_chosen_batch(s, 32));
        json_decref(s);
        return rc ? 1 : 0;
    }
    if (argc == 4 && !strcmp(argv[1], "final")) {
        json_t *before = read_doc(argv[2]), *after = read_doc(argv[3]);
        if (!before || !after)
            return 1;
        /* Both guards: one passed with a baseline accuracy, one failed without. */
        json_t *doc = json_pack("{s:O, s:O, s:f, s:{s:f, s:b, s:f}}", "before", before, "after",
                                after, "target", 0.8, "guard", "max_drop", 0.5, "passed", 1,
                                "baseline", demo_counter(before, "accuracy"));
        int rc = demo_print_final(stdout, doc);
        json_object_set_new(json_object_get(doc, "guard"), "passed", json_false());
        json_object_del(json_object_get(doc, "guard"), "baseline");
        rc |= demo_print_final(stdout, doc);
        json_decref(doc);
        json_decref(before);
        json_decref(after);
        return rc ? 1 : 0;
    }
    fputs("usage: golden_demo bottleneck RESULT | batch SWEEP | final BEFORE AFTER\n", stderr);
    return 2;
}
