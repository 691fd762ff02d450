"""common.py: what the four stage scripts of examples/workflow share: the data layout and the
optional marker client (a no-op when mlbench_marker is not importable). Not a stage."""

import os

SIDE = 8                 # images are SIDE x SIDE, 8-bit grey
CLASSES = ("horizontal", "vertical", "diagonal", "ring")

try:
    import mlbench_marker as marker
except ImportError:  # run alone, without PYTHONPATH=<mlbench>/python: markers off
    class _Off:
        def __getattr__(self, name):
            if name == "stage":
                return lambda _name: _Null()
            return lambda *args, **kwargs: None

    class _Null:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    marker = _Off()


def path(workdir, name):
    """A file of the work directory, which is made when missing."""
    os.makedirs(workdir, exist_ok=True)
    return os.path.join(workdir, name)
