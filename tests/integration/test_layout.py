"""The layout rules of src/README.md, as .ci/check-includes and .ci/check-readmes enforce them:
the real tree follows the arrows and its folders' READMEs name every file; a tree with an
include across a forbidden arrow, or a README that forgets a file or names a missing one, fails
with the file named."""
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(SOURCE, ".ci", "check-includes")
CHECK_READMES = os.path.join(SOURCE, ".ci", "check-readmes")


def check(root):
    p = subprocess.run(["sh", CHECK, root], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def tree(files):
    tmp = tempfile.TemporaryDirectory()
    for path, text in files.items():
        full = os.path.join(tmp.name, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return tmp


class LayoutTest(unittest.TestCase):
    def test_the_tree_follows_the_arrows(self):
        rc, out = check(SOURCE)
        self.assertEqual(rc, 0, out)

    def test_allowed_includes_pass(self):
        with tree({"src/result/r.c": '#include "analysis/stats.h"\n#include "util/log.h"\n',
                   "src/cli/c.c": '#include "session/session.h"\n',
                   "workloads/imgclf/i.c": '#include "common/opts.h"\n#include "mlbench/marker.h"\n'}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 0, out)

    def test_upward_include_fails(self):
        with tree({"src/analysis/a.c": '#include <stdio.h>\n#include "cli/commands.h"\n',
                   "src/util/u.h": '#include "util/xalloc.h"\n'}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("src/analysis/a.c:2: analysis may not include cli/", out)
            self.assertNotIn("u.h", out)

    def test_core_code_never_includes_export(self):
        with tree({"src/measure/m.c": '#include "export/export.h"\n'}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("measure may not include export/", out)

    def test_workloads_and_harness_stay_apart(self):
        with tree({"workloads/imgclf/i.c": '#include "util/xalloc.h"\n'}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("workloads/ may not include the harness", out)
        with tree({"src/session/b.c": '#include "../workloads/common/opts.h"\n'}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("may not include workloads/", out)

    def test_unknown_folder_needs_its_arrows(self):
        with tree({"src/newthing/n.c": "int x;\n"}) as t:
            rc, out = check(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("src/newthing", out)


def check_readmes(root):
    p = subprocess.run([sys.executable, CHECK_READMES, root], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


class ReadmeTest(unittest.TestCase):
    def test_the_tree_names_every_file(self):
        rc, out = check_readmes(SOURCE)
        self.assertEqual(rc, 0, out)

    def test_a_file_not_named_fails(self):
        with tree({"src/room/README.md": "# room\n\n- `a.c`, `a.h`: a\n",
                   "src/room/a.c": "", "src/room/a.h": "", "src/room/b.c": "",
                   "src/room/deep/c.c": ""}) as t:
            rc, out = check_readmes(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("src/room/b.c: not named in src/room/README.md", out)
            self.assertIn("src/room/deep/c.c: not named", out)  # a folder without a README
            self.assertNotIn("a.c: not named", out)

    def test_a_name_without_a_file_fails(self):
        with tree({"src/room/README.md": "- `a.c`: a\n- `gone.c`: moved away\n"
                                         "- `cmd_<verb>.c` is prose, `other/x.c` elsewhere\n",
                   "src/room/a.c": "", "src/other/README.md": "- `x.c`: x\n",
                   "src/other/x.c": ""}) as t:
            rc, out = check_readmes(t)
            self.assertEqual(rc, 1, out)
            self.assertIn("src/room/README.md:2: names `gone.c`", out)
            self.assertNotIn("cmd_<verb>", out)
            self.assertNotIn("other/x.c", out)


if __name__ == "__main__":
    unittest.main()
