"""The benchmark scripts are not a package: put ``bench/`` on the import path, as running a script there does."""

import pathlib
import sys

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
