"""mlbench: the Python side of the mlbench benchmarking tool, under the project's own name.

A thin alias of mlbench_marker, which holds the code: the same functions, classes and objects,
so `mlbench.bench(fn)` and `mlbench_marker.bench(fn)` are one thing. docs/python.md.

    import mlbench

    with mlbench.stage("train"):
        ...
    m = mlbench.bench(sorted, data)   # an in-process measurement (mlbench.Measurement)
"""

from mlbench_marker import *  # noqa: F401,F403  (the public API, listed in __all__)
from mlbench_marker import __all__, __version__  # noqa: F401
