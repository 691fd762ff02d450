"""mlbench installed like any tool: `cmake --install` into a DESTDIR with the prefix /usr (what
`make install DESTDIR=... PREFIX=/usr` runs), and the Debian package (`make deb`, CPack)
unpacked with dpkg -x. Each installed tree is then used alone: its mlbench and
mlbench-workload, the marker library found through its pkg-config file, a marker round trip
from a program built against it, the NVTX library that --nvtx loads, the man pages, the shell
completions (bash, zsh, fish), and uninstalling from the manifest."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("MLBENCH_BUILD", "")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
CC = os.environ.get("CC", "cc")
# the build's sanitizers, which a program linking its (sanitized) marker library needs too
TEST_CFLAGS = os.environ.get("TEST_CFLAGS", "").split()
VERSION = re.search(r"project\(mlbench VERSION ([0-9.]+)",
                    open(os.path.join(SOURCE, "CMakeLists.txt")).read()).group(1)

MARKED = r"""
#include <mlbench/marker.h>
#include <time.h>
static void spin(long ns) {
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}
int main(void) {
    mlb_meta("built_with", "installed");
    mlb_stage_begin("load"); spin(20000000); mlb_stage_end("load");
    mlb_stage_begin("train"); spin(40000000); mlb_stage_end("train");
    return 0;
}
"""


def run(argv, **kw):
    kw.setdefault("timeout", 300)
    return subprocess.run(argv, capture_output=True, text=True, **kw)


class Installed:
    """What a test needs to know of an installed tree under root, prefix /usr."""

    def __init__(self, root):
        self.root = root
        self.usr = os.path.join(root, "usr")
        self.bin = os.path.join(self.usr, "bin")
        pcs = glob.glob(os.path.join(self.usr, "lib", "**", "mlbench-marker.pc"), recursive=True)
        assert len(pcs) == 1, pcs
        self.pc = pcs[0]
        self.libdir = os.path.dirname(os.path.dirname(self.pc))

    def files(self):
        return sorted(os.path.relpath(os.path.join(d, f), self.root)
                      for d, _, fs in os.walk(self.root) for f in fs)


@unittest.skipUnless(BUILD, "MLBENCH_BUILD (the build directory) is not set: run through ctest")
class InstallTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # never the build tree's libraries or settings: only what was installed
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("MLBENCH", "LD_LIBRARY_PATH", "PKG_CONFIG"))}
        self.env["MLBENCH_STORE"] = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, *p):
        return os.path.join(self.tmp.name, *p)

    # ------------------------------------------------------------------ checks on a tree

    def check_tree(self, t):
        """Everything but the uninstall, on the installed tree t."""
        files = t.files()
        bins = sorted(f for f in files if f.startswith("usr/bin/"))
        self.assertEqual(bins, ["usr/bin/mlbench", "usr/bin/mlbench-workload"], files)
        p = run([os.path.join(t.bin, "mlbench"), "version"], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(f"mlbench {VERSION} "), p.stdout)
        p = run([os.path.join(t.bin, "mlbench-workload"), "--help"], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)

        # the marker library: shared with its SONAME, static, header, pkg-config file
        so = os.path.join(t.libdir, "libmlbench_marker.so")
        self.assertTrue(os.path.islink(so), files)
        dyn = run(["readelf", "-d", so]).stdout
        self.assertIn("Library soname: [libmlbench_marker.so.0]", dyn)
        self.assertTrue(os.path.exists(os.path.join(t.libdir, "libmlbench_marker.a")))
        self.assertTrue(os.path.exists(os.path.join(t.usr, "include", "mlbench", "marker.h")))
        self.assertTrue(os.path.exists(os.path.join(t.usr, "include", "mlbench",
                                                    "marker_ring.h")))
        with open(t.pc) as f:
            pc = f.read()
        self.assertIn("prefix=/usr\n", pc)  # the prefix installed to, not the configured one
        self.assertIn(f"Version: {VERSION}", pc)
        # run-time libraries in lib/mlbench/, none in bin/
        self.assertTrue(os.path.exists(os.path.join(t.libdir, "mlbench", "libmlbench_nvtx.so")),
                        files)
        self.assertFalse([f for f in files if f.startswith("usr/bin/") and f.endswith(".so")])
        # documentation, man pages (their text from --help), completions
        self.assertTrue(os.path.exists(os.path.join(t.usr, "share", "doc", "mlbench",
                                                    "README.md")))
        self.assertTrue(os.path.exists(os.path.join(t.usr, "share", "doc", "mlbench", "docs",
                                                    "cli.md")))
        self.check_man(t)
        self.check_completions(t)
        self.check_round_trip(t)
        self.check_nvtx_and_cuda(t)

    def check_man(self, t):
        man1 = os.path.join(t.usr, "share", "man", "man1")
        for verb in ("mlbench", "mlbench-run", "mlbench-compare", "mlbench-history",
                     "mlbench-completion"):
            page = os.path.join(man1, verb + ".1")
            self.assertTrue(os.path.exists(page), os.listdir(man1) if os.path.isdir(man1) else
                            "no man1")
        with open(os.path.join(man1, "mlbench-run.1")) as f:
            roff = f.read()
        self.assertIn(f'.TH MLBENCH-RUN "1"', roff)
        self.assertIn("mlbench-run \\- run a command repeatedly", roff)
        # every option of `mlbench run --help` is in its page (the same source)
        help_text = run([os.path.join(t.bin, "mlbench"), "help", "run"], env=self.env).stdout
        for opt in re.findall(r"^\s+(?:-\w, )?--([\w-]+)", help_text, re.M):
            self.assertIn("\\-\\-" + opt.replace("-", "\\-"), roff, opt)
        if shutil.which("man"):
            p = run(["man", "-l", os.path.join(man1, "mlbench-compare.1")],
                    env={**self.env, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("--fail-if-slower", p.stdout.replace("\u2010", "-"))

    def check_completions(self, t):
        share = os.path.join(t.usr, "share")
        bash = os.path.join(share, "bash-completion", "completions", "mlbench")
        zsh = os.path.join(share, "zsh", "vendor-completions", "_mlbench")
        fish = os.path.join(share, "fish", "vendor_completions.d", "mlbench.fish")
        for f in (bash, zsh, fish):
            self.assertTrue(os.path.exists(f), f)
        self.assertEqual(complete_bash(bash, "mlbench ru"), ["run"])
        self.assertEqual(complete_bash(bash, "mlbench run --ti"), ["--timeout"])
        self.assertEqual(complete_bash(bash, "mlbench compare --fail"), ["--fail-if-slower"])
        self.assertEqual(complete_bash(bash, "mlbench run --color n"), ["never"])
        if shutil.which("zsh"):
            p = run(["zsh", "-n", zsh])
            self.assertEqual(p.returncode, 0, p.stderr)
        if shutil.which("fish"):
            p = run(["fish", "--no-config", "-c",
                     f"source {fish}; complete -C 'mlbench run --ti'; complete -C 'mlbench ru'"],
                    env={**self.env, "HOME": self.tmp.name})
            self.assertEqual(p.returncode, 0, p.stderr)
            words = [line.split("\t")[0] for line in p.stdout.splitlines()]
            self.assertIn("--timeout", words)
            self.assertIn("run", words)

    def check_round_trip(self, t):
        """A program built against the installed header and library (through the pkg-config
        file), measured by the installed mlbench: its stages come back."""
        src = self.path("marked.c")
        with open(src, "w") as f:
            f.write(MARKED)
        pkg = {**self.env, "PKG_CONFIG_SYSROOT_DIR": t.root,
               "PKG_CONFIG_LIBDIR": os.path.dirname(t.pc)}
        p = run(["pkg-config", "--cflags", "--libs", "mlbench-marker"], env=pkg)
        self.assertEqual(p.returncode, 0, p.stderr)
        flags = p.stdout.split()
        self.assertIn("-I" + os.path.join(t.usr, "include"), flags)
        for kind, link in (("shared", ["-Wl,-rpath," + t.libdir]),
                           ("static", ["-static-libgcc", "-Wl,-Bstatic", "-lmlbench_marker",
                                       "-Wl,-Bdynamic", "-pthread"])):
            prog = self.path("marked-" + kind)
            cflags = [f for f in flags if not (kind == "static" and f == "-lmlbench_marker")]
            p = run([CC, "-Wall", "-Werror", *TEST_CFLAGS, "-o", prog, src, *cflags, *link],
                    env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            out = self.path(kind + ".json")
            p = run([os.path.join(t.bin, "mlbench"), "run", "-q", "-r", "1", "-o", out, "--",
                     prog], env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
            stages = [s["name"] for s in doc["summary"]["stages"]]
            self.assertEqual(stages[:2], ["load", "train"], (kind, stages))

    def check_nvtx_and_cuda(self, t):
        # --nvtx finds lib/mlbench/libmlbench_nvtx.so from the installed binary alone
        p = run([os.path.join(t.bin, "mlbench"), "run", "-q", "-r", "1", "--nvtx", "--", "true"],
                env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        cuda = os.path.join(t.libdir, "mlbench", "libmlbench_wl_cuda.so")
        if os.path.exists(cuda):  # built here: the installed workload finds it (it may then
            # fail to load cuBLAS or find no GPU, but never says the backend is missing)
            p = run([os.path.join(t.bin, "mlbench-workload"), "gemm", "--device", "cuda",
                     "--sizes", "64", "--reps", "1", "--warmup", "0"], env=self.env)
            self.assertNotIn("is missing", p.stderr)

    # ------------------------------------------------------------------ the tests

    def test_destdir_install_and_uninstall(self):
        root = self.path("root")
        p = run(["cmake", "--install", BUILD, "--prefix", "/usr"],
                env={**self.env, "DESTDIR": root})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        manifest = self.path("install_manifest.txt")
        shutil.copy(os.path.join(BUILD, "install_manifest.txt"), manifest)
        t = Installed(root)
        self.check_tree(t)
        # everything installed is in the manifest, and uninstalling removes it all
        with open(manifest) as f:
            listed = sorted(line.rstrip("\n").lstrip("/") for line in f)
        self.assertEqual(listed, t.files())
        p = run(["sh", os.path.join(SOURCE, "packaging", "uninstall.sh"), manifest],
                env={**self.env, "DESTDIR": root})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(t.files(), [])
        for d in ("usr/include/mlbench", "usr/share/doc/mlbench"):
            self.assertFalse(os.path.exists(os.path.join(root, d)), d)
        self.assertFalse(glob.glob(os.path.join(root, "usr", "lib", "**", "mlbench"),
                                   recursive=True))
        # nothing to uninstall: a clear message and status 2
        p = run(["sh", os.path.join(SOURCE, "packaging", "uninstall.sh"), manifest])
        self.assertEqual(p.returncode, 2)
        self.assertIn("nothing was installed", p.stderr)

    def test_debian_package(self):
        for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
            if not shutil.which(tool):
                self.skipTest(f"{tool} is not installed (apt-get install cmake dpkg-dev)")
        out = self.path("deb")
        p = run(["cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"),
                 "-B", out], env=self.env, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        debs = {os.path.basename(d).split("_")[0]: d for d in glob.glob(os.path.join(out, "*.deb"))}
        self.assertIn("mlbench", debs, p.stdout)
        deb = debs["mlbench"]
        fields = {k: run(["dpkg-deb", "-f", deb, k]).stdout.strip()
                  for k in ("Package", "Version", "Architecture", "Depends")}
        self.assertEqual(fields["Package"], "mlbench")
        self.assertEqual(fields["Version"], VERSION)
        depends = fields["Depends"]
        # computed from the libraries the binaries link (dpkg-shlibdeps), not written by hand
        for lib in ("libc6", "libjansson4", "libsqlite3-0", "libpq5", "libmicrohttpd12",
                    "libyaml-0-2", "libturbojpeg0", "zlib1g"):
            self.assertIn(lib, depends)
        self.assertRegex(depends, r"libopenblas0")
        if "mlbench-cuda" in debs:
            cuda = debs["mlbench-cuda"]
            self.assertEqual(run(["dpkg-deb", "-f", cuda, "Depends"]).stdout.strip(),
                             f"mlbench (= {VERSION})")
            listing = run(["dpkg-deb", "-c", cuda]).stdout
            self.assertRegex(listing, r"\./usr/lib/(\S+/)?mlbench/libmlbench_wl_cuda\.so")
            self.assertNotIn("libmlbench_wl_cuda.so", run(["dpkg-deb", "-c", deb]).stdout)
        root = self.path("root")
        for d in debs.values():
            p = run(["dpkg-deb", "-x", d, root])
            self.assertEqual(p.returncode, 0, p.stderr)
        self.check_tree(Installed(root))


def complete_bash(script, line):
    """The words bash completes at the end of line, with script loaded."""
    words = line.split(" ")
    prog = (f"source {script}\n"
            f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
            f"COMP_CWORD={len(words) - 1}\nCOMP_LINE={line!r}\nCOMP_POINT={len(line)}\n"
            "_mlbench\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    p = run(["bash", "--norc", "--noprofile", "-c", prog])
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.splitlines() if w]


if __name__ == "__main__":
    unittest.main()
