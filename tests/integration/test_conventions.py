"""The command line's conventions: `mlbench help VERB` is `VERB --help`; completion scripts for
every command (made from the option rows, as --help and so the man pages are: that every row
is described is unit.test_cli_help's); colour on a terminal for verdicts and warnings, never
when NO_COLOR is set, --color never, or not a terminal, and the text the same with and without
it."""
import os
import pty
import re
import select
import subprocess
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", os.path.join(os.path.dirname(__file__), "..", "..", "build",
                                                  "mlbench"))
ESC = re.compile(r"\x1b\[[0-9;]*m")


def run(*args, env=None, **kw):
    return subprocess.run([MLBENCH, *args], capture_output=True, text=True, timeout=120,
                          env=env, **kw)


def run_tty(args, env, cwd):
    """Runs mlbench with stdout and stderr on a pseudo-terminal; returns (status, output)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([MLBENCH, *args], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                         env=env, cwd=cwd)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=60), out.decode().replace("\r\n", "\n")


def verbs():
    out = run("--help").stdout
    return [v for v in re.findall(r"^  ([a-z][a-z-]*)  ", out, re.M) if v not in ("help", "version")]


class HelpTest(unittest.TestCase):
    def test_help_verb_is_verb_help(self):
        for verb in verbs():
            a, b = run("help", verb), run(verb, "--help")
            self.assertEqual(a.returncode, 0, (verb, a.stderr))
            self.assertEqual(a.stdout, b.stdout, verb)
            self.assertTrue(a.stdout.startswith(f"Usage: mlbench {verb}"), (verb, a.stdout[:80]))
        p = run("help", "nosuch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no command 'nosuch'", p.stderr)

    def test_completions_name_every_command(self):
        """The fish script lists each command's options from its table, as --help does (every
        row has its help: unit.test_cli_help): every command is there."""
        fish = run("completion", "fish")
        self.assertEqual(fish.returncode, 0, fish.stderr)
        table = {}
        for verb, opt in re.findall(r"__fish_seen_subcommand_from (\S+)' -l (\S+)", fish.stdout):
            table.setdefault(verb, set()).add(opt)
        self.assertEqual(set(table) | {"completion"}, set(verbs()) | {"completion"})
        for verb, opts in table.items():
            self.assertLessEqual({"color", "help"}, opts, verb)

    def test_completion_scripts(self):
        for shell in ("bash", "zsh", "fish"):
            p = run("completion", shell)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("mlbench", p.stdout)
        p = run("completion", "tcsh")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no shell 'tcsh'", p.stderr)
        self.assertEqual(run("completion").returncode, 2)


class ColorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.env = {**os.environ, "MLBENCH_STORE": os.path.join(cls.tmp.name, "store"),
                   "TERM": "xterm"}
        cls.env.pop("NO_COLOR", None)
        for label, secs in (("fast", "0.01"), ("slow", "0.04")):
            p = run("run", "-q", "-r", "6", "-l", label, "--", "sleep", secs, env=cls.env)
            assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def compare(self, *extra, env=None):
        return run_tty(["compare", *extra, "fast", "slow"], env or self.env, self.tmp.name)

    def test_terminal_gets_colour_and_the_same_text(self):
        rc, out = self.compare()
        self.assertEqual(rc, 0, out)
        self.assertIn("\x1b[1;31mslower\x1b[0m", out)  # 4x slower: significant
        rc, plain = self.compare("--color", "never")
        self.assertNotIn("\x1b", plain)
        self.assertEqual(ESC.sub("", out), plain)

    def test_no_color_and_pipes_get_none(self):
        rc, out = self.compare(env={**self.env, "NO_COLOR": "1"})
        self.assertNotIn("\x1b", out)
        rc, out = self.compare(env={**self.env, "TERM": "dumb"})
        self.assertNotIn("\x1b", out)
        p = run("compare", "fast", "slow", env=self.env)  # a pipe
        self.assertNotIn("\x1b", p.stdout)
        # asked for, it is there even in a pipe and with NO_COLOR
        p = run("compare", "--color", "always", "fast", "slow",
                env={**self.env, "NO_COLOR": "1"})
        self.assertIn("\x1b[1;31mslower\x1b[0m", p.stdout)

    def test_errors_and_warnings(self):
        rc, out = run_tty(["compare", "fast", "nosuch"], self.env, self.tmp.name)
        self.assertEqual(rc, 2)
        self.assertIn("mlbench: \x1b[1;31merror:\x1b[0m compare: unknown run 'nosuch'", out)
        p = run("compare", "--color", "sometimes", "fast", "slow", env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--color 'sometimes' is not auto, always or never", p.stderr)

    def test_a_workload_cannot_send_colour(self):
        """A stage named with escape sequences is cleaned; only mlbench's own colour stays."""
        script = os.path.join(self.tmp.name, "evil.py")
        with open(script, "w") as f:
            f.write("import os, socket, time\n"
                    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                    "s.connect(os.environ['MLBENCH_MARKER_SOCKET'])\n"
                    "pid, tid = os.getpid(), os.getpid()\n"
                    "for k in 'BE':\n"
                    "    s.send(f'{k} {time.monotonic_ns()} {pid} {tid} "
                    "x\\x1b[1;31mslower\\x1b[0m'.encode())\n"
                    "    time.sleep(0.01)\n")
        rc, out = run_tty(["run", "-r", "3", "--color", "always", "--", "python3", script],
                          self.env, self.tmp.name)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("x\x1b", out)
        self.assertIn("x?[1;31mslower?[0m", out)
        self.assertIn("\x1b[33mwarnings:\x1b[0m", out)  # few runs: its own colour stays


if __name__ == "__main__":
    unittest.main()
