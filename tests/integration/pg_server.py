"""A private PostgreSQL server for the tests of the shared store: Debian's postgresql package
(initdb and pg_ctl from /usr/lib/postgresql/N/bin), a cluster in a temporary directory that
listens on a Unix socket there and on no TCP port, torn down by stop(). PostgreSQL refuses to
run as root: as root the cluster belongs to the `postgres` user the package creates, and its
superuser is named after the user who runs the tests, so that mlbench connects with peer-less
trust on the socket without a password.

   server = PgServer(); server.start(); uri = server.uri("mlbench"); ...; server.stop()
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile


def pg_bin():
    """The directory of initdb and pg_ctl, or None when PostgreSQL's server is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(pg_ctl) if pg_ctl else None


class PgServer:
    def __init__(self):
        self.bin = pg_bin()
        self.tmp = None
        self.user = pwd.getpwuid(os.getuid()).pw_name

    def missing(self):
        """Why no server can be started here, or None."""
        if not self.bin:
            return "PostgreSQL's server (Debian package postgresql) is not installed"
        if os.getuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and there is no postgres user to run the server as"
        return None

    def _as_owner(self, args, **kw):
        """Runs a server program as the cluster's owner (postgres when we are root)."""
        if os.getuid() == 0:
            args = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] + args
        # in a directory the owner may enter: initdb and pg_ctl look up the current one
        return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=self.tmp,
                              **kw)

    def start(self):
        # in /tmp: a socket path must stay under 108 bytes, and $TMPDIR may be a directory the
        # postgres user cannot enter
        self.tmp = tempfile.mkdtemp(prefix="mlbench-pg-", dir="/tmp")
        os.chmod(self.tmp, 0o755)
        self.data = os.path.join(self.tmp, "data")
        self.sock = os.path.join(self.tmp, "sock")
        os.mkdir(self.sock)
        if os.getuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.tmp, pw.pw_uid, pw.pw_gid)
            os.chown(self.sock, pw.pw_uid, pw.pw_gid)
        p = self._as_owner([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", self.user,
                            "--auth=trust", "-E", "UTF8", "--no-sync"])
        if p.returncode != 0:
            raise RuntimeError("initdb failed: " + p.stderr)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = ''\nunix_socket_directories = '{self.sock}'\n"
                    "fsync = off\nmax_connections = 100\n")
        self.log = os.path.join(self.tmp, "server.log")
        p = self._as_owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log,
                            "-w", "start"])
        if p.returncode != 0:
            raise RuntimeError("pg_ctl start failed: " + p.stderr + self.server_log())
        self.createdb("mlbench")

    def server_log(self):
        try:
            with open(self.log) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def uri(self, db="mlbench"):
        return f"postgresql:///{db}?host={self.sock}"

    def psql(self, sql, db="mlbench"):
        """Runs sql with psql; returns its output (unaligned, tuples only)."""
        p = subprocess.run(["psql", "-h", self.sock, "-d", db, "-X", "-A", "-t", "-q",
                            "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError("psql failed: " + p.stderr)
        return p.stdout.strip()

    def createdb(self, db):
        self.psql(f'CREATE DATABASE "{db}"', db="postgres")

    def stop(self, mode="fast"):
        """Stops the server (mode immediate: as if killed)."""
        if self.tmp and os.path.isdir(self.data):
            self._as_owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode,
                            "-w", "stop"])

    def restart(self):
        p = self._as_owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log,
                            "-w", "start"])
        if p.returncode != 0:
            raise RuntimeError("pg_ctl start failed: " + p.stderr)

    def cleanup(self):
        self.stop("immediate")
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
