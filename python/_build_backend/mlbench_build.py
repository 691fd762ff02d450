"""mlbench_build: the PEP 517 build backend of mlbench's Python package, kept in the tree.

Why it exists: pip builds a package in an isolated environment, into which it first installs the
backend pyproject.toml names ([build-system] requires). A backend from PyPI (setuptools,
flit_core, hatchling) would be downloaded there, so `pip install ./python` would fail on a
machine that cannot reach PyPI: a cluster node, a CI image, a laptop on a train. This backend
is standard library only and lives beside the package (`backend-path`, the way flit_core builds
itself), so `requires = []` and nothing is downloaded.

It builds what this package is, and no more: the pure-Python packages listed in
[tool.mlbench-build] packages, with the metadata of [project] (PEP 621). Hooks: build_wheel,
build_sdist, build_editable (PEP 660: a .pth naming the source folder), and the
get_requires_for_build_* hooks, which ask for nothing. Archives are reproducible: sorted
entries, fixed permissions, times from SOURCE_DATE_EPOCH (default 1980-01-01).

Runs on Python 3.9+: pyproject.toml is read with tomllib on 3.11+ and, before that, with the
small reader at the end of this file, which knows the part of TOML a pyproject.toml uses and
refuses the rest with the line, so the metadata is written in one place only.
"""

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable"]

GENERATOR = "mlbench_build"
_SKIPPED_DIRS = {"__pycache__"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
# [project] keys this backend turns into metadata; any other is refused rather than dropped.
_PROJECT_KEYS = {"name", "version", "description", "readme", "requires-python", "license",
                 "authors", "maintainers", "keywords", "classifiers", "urls", "dependencies",
                 "entry-points", "scripts", "gui-scripts"}


# ---- PEP 517 / PEP 660 hooks ---------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    """Returns the build requirements of a wheel: none."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Returns the build requirements of an sdist: none."""
    return []


def get_requires_for_build_editable(config_settings=None):
    """Returns the build requirements of an editable wheel: none."""
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Writes the wheel into wheel_directory; returns its file name."""
    project = _Project(os.getcwd())
    files = [(arcname, _read_bytes(path)) for arcname, path in project.package_files()]
    return _write_wheel(wheel_directory, project, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """Writes an editable wheel into wheel_directory (PEP 660): it installs the metadata and a
    .pth file that puts the source folder on sys.path, so edits take effect without a
    reinstall. Returns its file name."""
    project = _Project(os.getcwd())
    pth = (project.root + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, project, [(f"_{project.dist_name}_editable.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    """Writes the source archive NAME-VERSION.tar.gz into sdist_directory; returns its file
    name. It holds pyproject.toml, the readme, this backend, the packages and PKG-INFO."""
    project = _Project(os.getcwd())
    base = f"{project.dist_name}-{project.version}"
    members = [(f"{base}/{arcname}", _read_bytes(path))
               for arcname, path in project.sdist_files()]
    members.append((f"{base}/PKG-INFO", project.metadata()))
    members.sort()
    name = base + ".tar.gz"
    mtime = _source_date_epoch()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for arcname, data in members:
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    with open(os.path.join(sdist_directory, name), "wb") as out:
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=mtime, filename="") as gz:
            gz.write(raw.getvalue())
    return name


# ---- the project ---------------------------------------------------------------------------

class _Project:
    """pyproject.toml of the source folder root, checked, and what is built from it."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        with open(os.path.join(self.root, "pyproject.toml"), encoding="utf-8") as f:
            data = load_toml(f.read())
        self.build_system = data.get("build-system", {})
        project = data.get("project")
        if not isinstance(project, dict):
            raise ValueError("pyproject.toml: no [project] table")
        unknown = sorted(set(project) - _PROJECT_KEYS)
        if unknown:
            raise ValueError(f"pyproject.toml: [project] {', '.join(unknown)}: not supported by "
                             f"{GENERATOR} (dynamic metadata, extras); write the metadata "
                             "statically or extend the backend")
        for key in ("name", "version"):
            if not isinstance(project.get(key), str) or not project[key]:
                raise ValueError(f"pyproject.toml: [project] {key} must be a non-empty string")
        self.project = project
        self.name = project["name"]
        self.version = project["version"]
        # PEP 427/625: the name in file names, normalised with underscores
        self.dist_name = re.sub(r"[-_.]+", "_", self.name).lower()
        tool = data.get("tool", {}).get("mlbench-build", {})
        self.packages = tool.get("packages")
        if (not isinstance(self.packages, list) or not self.packages
                or not all(isinstance(p, str) for p in self.packages)):
            raise ValueError("pyproject.toml: [tool.mlbench-build] packages must list the "
                             "import packages to build, e.g. [\"mlbench_marker\"]")
        for package in self.packages:
            if not os.path.isfile(os.path.join(self.root, package, "__init__.py")):
                raise ValueError(f"pyproject.toml: package {package!r} has no "
                                 f"{package}/__init__.py in {self.root}")

    def _tree(self, folder):
        """(archive name, path) of the files under folder (relative to root), sorted, without
        caches."""
        found = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS)
            for filename in sorted(filenames):
                if filename.endswith(_SKIPPED_SUFFIXES):
                    continue
                path = os.path.join(dirpath, filename)
                found.append((os.path.relpath(path, self.root).replace(os.sep, "/"), path))
        return found

    def package_files(self):
        """(archive name, path) of every file of the packages: what a wheel installs."""
        return [entry for package in self.packages for entry in self._tree(package)]

    def sdist_files(self):
        """(archive name, path) of what an sdist needs to build the wheel again."""
        files = [("pyproject.toml", os.path.join(self.root, "pyproject.toml"))]
        readme = self._readme_file()
        if readme:
            files.append((readme, os.path.join(self.root, readme)))
        for folder in self.build_system.get("backend-path", []):
            files.extend(self._tree(folder))
        return files + self.package_files()

    def _readme_file(self):
        readme = self.project.get("readme")
        if isinstance(readme, dict):
            return readme.get("file")
        return readme

    def _readme(self):
        """(content type, text) of the long description, or None."""
        readme = self.project.get("readme")
        if readme is None:
            return None
        if isinstance(readme, str):
            readme = {"file": readme}
        if "text" in readme:
            text = readme["text"]
        else:
            with open(os.path.join(self.root, readme["file"]), encoding="utf-8") as f:
                text = f.read()
        kind = readme.get("content-type")
        if kind is None:
            suffix = os.path.splitext(readme.get("file", ""))[1].lower()
            kind = {".md": "text/markdown", ".rst": "text/x-rst"}.get(suffix, "text/plain")
        return kind, text

    def metadata(self):
        """The core metadata (METADATA, PKG-INFO) as bytes: Metadata-Version 2.1."""
        p = self.project
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        if p.get("description"):
            lines.append(f"Summary: {p['description']}")
        if p.get("keywords"):
            lines.append("Keywords: " + ",".join(p["keywords"]))
        for role, field in (("authors", "Author"), ("maintainers", "Maintainer")):
            people = p.get(role, [])
            names = [x["name"] for x in people if "name" in x and "email" not in x]
            emails = [(f"{x['name']} <{x['email']}>" if "name" in x else x["email"])
                      for x in people if "email" in x]
            if names:
                lines.append(f"{field}: {', '.join(names)}")
            if emails:
                lines.append(f"{field}-email: {', '.join(emails)}")
        license_ = p.get("license")
        if isinstance(license_, dict) and "text" in license_:
            lines.append(f"License: {license_['text']}")
        elif license_ is not None:
            raise ValueError("pyproject.toml: [project] license: only {text = \"...\"} is "
                             f"supported by {GENERATOR}")
        for label, url in p.get("urls", {}).items():
            lines.append(f"Project-URL: {label}, {url}")
        lines.extend(f"Classifier: {c}" for c in p.get("classifiers", []))
        if p.get("requires-python"):
            lines.append(f"Requires-Python: {p['requires-python']}")
        lines.extend(f"Requires-Dist: {d}" for d in p.get("dependencies", []))
        readme = self._readme()
        if readme is not None:
            lines.append(f"Description-Content-Type: {readme[0]}")
            lines.append("")
            lines.append(readme[1])
        return ("\n".join(lines) + "\n").encode("utf-8")

    def entry_points(self):
        """entry_points.txt as bytes, or None when there are none."""
        groups = dict(self.project.get("entry-points", {}))
        for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
            if key in self.project:
                groups[group] = self.project[key]
        if not groups:
            return None
        text = ""
        for group in sorted(groups):
            text += f"[{group}]\n"
            text += "".join(f"{name} = {ref}\n" for name, ref in sorted(groups[group].items()))
            text += "\n"
        return text.encode("utf-8")


# ---- archives ------------------------------------------------------------------------------

def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _source_date_epoch():
    """The time stamped on archive members: SOURCE_DATE_EPOCH, else 1980-01-01 (the earliest
    a zip file can hold)."""
    try:
        return max(int(os.environ["SOURCE_DATE_EPOCH"]), 315532800)
    except (KeyError, ValueError):
        return 315532800


def _record_hash(data):
    """The RECORD form of a file's hash: sha256=<urlsafe base64, unpadded>."""
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _write_wheel(wheel_directory, project, files):
    """Writes a py3-none-any wheel holding files ((archive name, bytes)) and the .dist-info
    (METADATA, WHEEL, entry_points.txt, RECORD with a sha256 of every other file); returns its
    file name."""
    dist_info = f"{project.dist_name}-{project.version}.dist-info"
    wheel_text = (f"Wheel-Version: 1.0\nGenerator: {GENERATOR} {project.version}\n"
                  "Root-Is-Purelib: true\nTag: py3-none-any\n")
    members = sorted(files)
    members.append((f"{dist_info}/METADATA", project.metadata()))
    members.append((f"{dist_info}/WHEEL", wheel_text.encode("utf-8")))
    entry_points = project.entry_points()
    if entry_points is not None:
        members.append((f"{dist_info}/entry_points.txt", entry_points))
    top_level = "".join(p + "\n" for p in sorted(project.packages))
    members.append((f"{dist_info}/top_level.txt", top_level.encode("utf-8")))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in members)
    record += f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode("utf-8")))

    name = f"{project.dist_name}-{project.version}-py3-none-any.whl"
    stamp = time.gmtime(_source_date_epoch())[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for arcname, data in members:
            info = zipfile.ZipInfo(arcname, date_time=stamp)
            info.external_attr = (0o100644 << 16)  # a regular file, rw-r--r--
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
    return name


# ---- pyproject.toml ------------------------------------------------------------------------

def load_toml(text):
    """Returns the TOML document text as a dict: tomllib's reading on Python 3.11+, else
    _TomlReader's."""
    try:
        import tomllib
    except ImportError:
        return _TomlReader(text).document()
    return tomllib.loads(text)


class _TomlReader:
    """Reads the TOML a pyproject.toml uses: [table] headers (dotted), key = value lines (bare,
    quoted or dotted keys), basic and literal strings on one line, integers, booleans, arrays
    (over several lines, with comments and a trailing comma) and inline tables. Anything else
    (floats, dates, multi-line strings, arrays of tables) raises ValueError naming the line:
    a wrong reading is worse than none."""

    _BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
    _INTEGER = re.compile(r"[+-]?(0|[1-9](_?[0-9])*)(?=[\s,\]}#]|$)")
    _ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def error(self, what):
        line = self.text.count("\n", 0, self.pos) + 1
        raise ValueError(f"pyproject.toml line {line}: {what} (the TOML reader of "
                         f"{GENERATOR} for Python < 3.11 reads only what pyproject.toml needs)")

    def peek(self, ahead=0):
        index = self.pos + ahead
        return self.text[index] if index < len(self.text) else ""

    def skip_spaces(self):
        while self.peek() in (" ", "\t"):
            self.pos += 1

    def skip_blank(self):
        """Skips white space, line ends and comments."""
        while True:
            c = self.peek()
            if c in (" ", "\t", "\r", "\n"):
                self.pos += 1
            elif c == "#":
                while self.peek() not in ("\n", ""):
                    self.pos += 1
            else:
                return

    def expect(self, c):
        if self.peek() != c:
            self.error(f"expected {c!r}, found {self.peek() or 'the end'!r}")
        self.pos += 1

    def document(self):
        root = {}
        table = root
        headers = set()
        while True:
            self.skip_blank()
            if not self.peek():
                return root
            if self.peek() == "[":
                if self.peek(1) == "[":
                    self.error("arrays of tables ([[...]]) are not supported")
                self.pos += 1
                self.skip_spaces()
                keys = self.key_path()
                self.expect("]")
                if keys in headers:
                    self.error(f"table [{'.'.join(keys)}] defined twice")
                headers.add(keys)
                table = self.table_at(root, keys)
            else:
                keys = self.key_path()
                self.expect("=")
                self.skip_spaces()
                self.assign(table, keys, self.value())
            self.end_of_line()

    def end_of_line(self):
        self.skip_spaces()
        if self.peek() == "#":
            while self.peek() not in ("\n", ""):
                self.pos += 1
        if self.peek() == "\r":
            self.pos += 1
        if self.peek() not in ("\n", ""):
            self.error(f"unexpected {self.peek()!r} after a value")

    def key_path(self):
        keys = [self.key()]
        self.skip_spaces()
        while self.peek() == ".":
            self.pos += 1
            self.skip_spaces()
            keys.append(self.key())
            self.skip_spaces()
        return tuple(keys)

    def key(self):
        if self.peek() == '"':
            return self.basic_string()
        if self.peek() == "'":
            return self.literal_string()
        match = self._BARE_KEY.match(self.text, self.pos)
        if not match:
            self.error(f"expected a key, found {self.peek() or 'the end'!r}")
        self.pos = match.end()
        return match.group()

    def table_at(self, root, keys):
        table = root
        for key in keys:
            table = table.setdefault(key, {})
            if not isinstance(table, dict):
                self.error(f"{'.'.join(keys)}: {key} is a value, not a table")
        return table

    def assign(self, table, keys, value):
        table = self.table_at(table, keys[:-1])
        if keys[-1] in table:
            self.error(f"key {'.'.join(keys)} defined twice")
        table[keys[-1]] = value

    def value(self):
        c = self.peek()
        if c == '"':
            if self.text.startswith('"""', self.pos):
                self.error("multi-line strings are not supported")
            return self.basic_string()
        if c == "'":
            if self.text.startswith("'''", self.pos):
                self.error("multi-line strings are not supported")
            return self.literal_string()
        if c == "[":
            return self.array()
        if c == "{":
            return self.inline_table()
        for word, value in (("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        match = self._INTEGER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return int(match.group().replace("_", ""))
        self.error(f"unsupported value starting with {c or 'the end'!r}")

    def basic_string(self):
        self.expect('"')
        out = []
        while True:
            c = self.peek()
            if c in ("", "\n"):
                self.error("unterminated string")
            self.pos += 1
            if c == '"':
                return "".join(out)
            if c != "\\":
                out.append(c)
                continue
            c = self.peek()
            self.pos += 1
            if c in self._ESCAPES:
                out.append(self._ESCAPES[c])
            elif c in ("u", "U"):
                digits = 4 if c == "u" else 8
                code = self.text[self.pos:self.pos + digits]
                if not re.fullmatch(r"[0-9A-Fa-f]{%d}" % digits, code):
                    self.error(f"bad escape \\{c}{code}")
                out.append(chr(int(code, 16)))
                self.pos += digits
            else:
                self.error(f"bad escape \\{c}")

    def literal_string(self):
        self.expect("'")
        end = self.text.find("'", self.pos)
        if end < 0 or "\n" in self.text[self.pos:end]:
            self.error("unterminated string")
        value = self.text[self.pos:end]
        self.pos = end + 1
        return value

    def array(self):
        self.expect("[")
        items = []
        while True:
            self.skip_blank()
            if self.peek() == "]":
                self.pos += 1
                return items
            items.append(self.value())
            self.skip_blank()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                self.error(f"expected ',' or ']' in an array, found {self.peek() or 'the end'!r}")

    def inline_table(self):
        self.expect("{")
        table = {}
        self.skip_spaces()
        if self.peek() == "}":
            self.pos += 1
            return table
        while True:
            self.skip_spaces()
            keys = self.key_path()
            self.expect("=")
            self.skip_spaces()
            self.assign(table, keys, self.value())
            self.skip_spaces()
            if self.peek() == "}":
                self.pos += 1
                return table
            self.expect(",")
