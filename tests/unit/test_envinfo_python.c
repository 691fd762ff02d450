/* Unit tests of src/result/envinfo/python.c (the `python` object of the environment, issue 13):
 * a fake interpreter (a shell script printing what `python3 -c` would: version, executable,
 * sys.path) over a fake site-packages tree, so that the versions found are known: metadata
 * beside the package wins over version.py, a dist-info without its package does not count, the
 * first sys.path folder holding the package wins, relative entries are skipped; an interpreter
 * that fails or is missing gives no object. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fakes/proc/fake_fs.h"
#include "result/envinfo/internal.h"

static char *root;

static int setup(void **state)
{
    (void)state;
    root = fake_root_new();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_root_free(root);
    return 0;
}

/* ROOT/usr/bin/python3 printing the probe's answer; sys.path: lib/a, a relative entry, lib/b. */
static void fake_python(const char *version, int status)
{
    fake_write(root, "usr/bin/python3",
               "#!/bin/sh\necho %s\necho /opt/fake/bin/python3\necho %s/lib/a\necho rel\n"
               "echo %s/lib/b\nexit %d\n", version, root, root, status);
    char path[4096];
    snprintf(path, sizeof path, "%s/usr/bin/python3", root);
    assert_int_equal(chmod(path, 0755), 0);
}

static const char *package(const json_t *py, const char *name)
{
    return json_string_value(json_object_get(json_object_get(py, "packages"), name));
}

static void test_versions_from_metadata(void **state)
{
    (void)state;
    fake_python("3.99.1", 0);
    /* lib/a: numpy with a dist-info; a stale torch dist-info without the package */
    fake_write(root, "lib/a/numpy/__init__.py", "# package\n");
    fake_write(root, "lib/a/numpy/version.py", "version = '0.0.1'\n");
    fake_write(root, "lib/a/numpy-2.0.1.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: numpy\nVersion: 2.0.1\nSummary: x\n");
    fake_write(root, "lib/a/torch-9.9.dist-info/METADATA", "Name: torch\nVersion: 9.9\n");
    /* lib/b: torch with only its version.py (version_info must not be taken for it); a
     * second numpy, hidden by lib/a's */
    fake_write(root, "lib/b/torch/__init__.py", "# package\n");
    fake_write(root, "lib/b/torch/version.py",
               "version_info = (2, 5)\n__version__ = '2.5.0+cpu'\ndebug = False\n");
    fake_write(root, "lib/b/numpy/__init__.py", "# package\n");
    fake_write(root, "lib/b/numpy-1.0.egg-info/PKG-INFO", "Version: 1.0\n");

    json_t *py = envinfo_python(root, NULL, NULL);
    assert_non_null(py);
    assert_string_equal(json_string_value(json_object_get(py, "version")), "3.99.1");
    assert_string_equal(json_string_value(json_object_get(py, "executable")),
                        "/opt/fake/bin/python3");
    assert_string_equal(package(py, "numpy"), "2.0.1");
    assert_string_equal(package(py, "torch"), "2.5.0+cpu");
    json_decref(py);

    /* Debian's layout: an egg-info file (not a folder) beside the package */
    fake_remove(root, "lib/a/numpy-2.0.1.dist-info");
    fake_write(root, "lib/a/numpy-1.24.2.egg-info", "Metadata-Version: 1.2\nVersion: 1.24.2\n");
    py = envinfo_python(root, NULL, NULL);
    assert_string_equal(package(py, "numpy"), "1.24.2");
    json_decref(py);
}

static void test_no_packages_and_failures(void **state)
{
    (void)state;
    fake_python("3.1.4", 0);
    json_t *py = envinfo_python(root, NULL, NULL);
    assert_non_null(py);
    assert_int_equal(json_object_size(json_object_get(py, "packages")), 0);
    json_decref(py);

    fake_python("3.1.4", 1); /* the interpreter fails */
    assert_null(envinfo_python(root, NULL, NULL));
    /* missing interpreters: by path, and through PATH */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/no/python3", root);
    assert_null(envinfo_python(NULL, missing, NULL));
    assert_null(envinfo_python(NULL, "mlbench-no-such-python3", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_versions_from_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_packages_and_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
