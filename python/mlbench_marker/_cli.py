"""mlbench_marker._cli: find the mlbench binary and run its commands (record, show, history,
compare) for Measurement.record and the pytest plugin. Imported modules (subprocess, json) are
loaded only when a command is run, so importing the marker client stays cheap."""

import os

__all__ = ["MlbenchError", "MlbenchNotFoundError", "find_mlbench", "run_mlbench",
           "record_timings"]

ENV_BINARY = "MLBENCH"  # the binary's path, as the project's tests set it


class MlbenchError(RuntimeError):
    """An mlbench command failed; the message holds what it printed on stderr."""


class MlbenchNotFoundError(MlbenchError):
    """No mlbench binary: not given, not in $MLBENCH, not on PATH."""


def find_mlbench(binary=None):
    """Returns the path of the mlbench binary to run: `binary` when given (a path, or a name
    looked up on PATH), else $MLBENCH, else `mlbench` on PATH. Raises MlbenchNotFoundError
    saying where it looked."""
    import shutil
    for origin, candidate in (("given", binary), (f"${ENV_BINARY}", os.environ.get(ENV_BINARY))):
        if not candidate:
            continue
        found = shutil.which(candidate) if os.sep not in candidate else (
            candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None)
        if found is None:
            raise MlbenchNotFoundError(f"the mlbench binary {candidate!r} ({origin}) is not an "
                                       "executable file")
        return found
    found = shutil.which("mlbench")
    if found is None:
        raise MlbenchNotFoundError(
            f"no mlbench binary: none given, ${ENV_BINARY} unset and no mlbench on PATH (build "
            f"it with cmake and set {ENV_BINARY}=/path/to/build/mlbench)")
    return found


def run_mlbench(binary, args, stdin_text=None, ok=(0,)):
    """Runs `binary args...` and returns its subprocess.CompletedProcess (text output). Raises
    MlbenchError, with the command and its stderr, when its exit status is not in ok."""
    import subprocess
    try:
        proc = subprocess.run([binary, *args], input=stdin_text, capture_output=True,
                              text=True, check=False)
    except OSError as err:
        raise MlbenchError(f"cannot run {binary}: {err.strerror or err}") from None
    if proc.returncode not in ok:
        detail = proc.stderr.strip() or proc.stdout.strip() or "no message"
        raise MlbenchError(f"`mlbench {' '.join(args)}` failed (exit status "
                           f"{proc.returncode}): {detail}")
    return proc


def record_timings(docs, store=None, binary=None):
    """Stores mlbench.timings/1 documents (dicts) as results, all in one `mlbench record
    --json` (JSON Lines on its stdin). Returns its JSON array: one dict per document, in order,
    with "id", "label", "path", "median_ns", "ci_low_ns", "ci_high_ns", "n". Raises
    MlbenchNotFoundError or MlbenchError (nothing is stored when the input is refused)."""
    import json
    path = find_mlbench(binary)
    args = ["record", "--json"]
    if store is not None:
        args += ["--store", os.fspath(store)]
    args.append("-")
    text = "".join(json.dumps(doc, separators=(",", ":")) + "\n" for doc in docs)
    proc = run_mlbench(path, args, stdin_text=text)
    try:
        stored = json.loads(proc.stdout)
    except ValueError as err:
        raise MlbenchError(f"`mlbench record --json` printed no JSON ({err}): "
                           f"{proc.stdout[:200]!r}") from None
    if not isinstance(stored, list) or len(stored) != len(docs):
        raise MlbenchError(f"`mlbench record --json` answered {proc.stdout[:200]!r} for "
                           f"{len(docs)} documents: expected an array of {len(docs)}")
    return stored
