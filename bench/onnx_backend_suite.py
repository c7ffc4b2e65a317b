"""The official ONNX backend suite through ``kiln.backend.onnx.KilnBackend`` (each model compiled once, for the graph
executor or the VM), with the failures grouped by their error.

    .venv/bin/python bench/onnx_backend_suite.py [--only SUBSTRING] [--json results.json] [--target c]

Prints the passed count per category and in total, then the failure classes (an error message with names and
numbers blanked), largest first. ``--json`` writes ``{test name: "ok" | "skipped" | last error line}``. A case taking
longer than ``--timeout`` seconds counts as failed.
"""

import argparse
import collections
import json
import re
import signal
import sys
import time
import unittest
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "backend"))

CATEGORIES = ("Node", "Simple", "PyTorchConverted", "PyTorchOperator", "Real")


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def run_case(cls, name, timeout) -> str:
    """``"ok"``, ``"skipped"`` or the last line of the case's error."""
    result = unittest.TestResult()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(name).run(result)
    except _Timeout:
        return f"timeout after {timeout} s"
    finally:
        signal.alarm(0)
    if result.skipped:
        return "skipped"
    bad = result.failures + result.errors
    return bad[0][1].strip().splitlines()[-1][:300] if bad else "ok"


def failure_class(message) -> str:
    """The message with quoted names and numbers blanked, so cases failing for one reason group together."""
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'X'", message))[:160]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--json", help="write each case's result here")
    parser.add_argument("--target", default="llvm", help="what the models are compiled for (llvm, c)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per case")
    parser.add_argument("--classes", type=int, default=40, help="how many failure classes to print")
    args = parser.parse_args()

    import test_onnx_backend as suite

    import kiln.backend.onnx as backend

    backend.TARGET = args.target
    results, start = {}, time.time()
    for category in CATEGORIES:
        cls = suite._suite()[f"OnnxBackend{category}ModelTest"]
        names = [n for n in dir(cls) if n.startswith("test_") and n.endswith("_cpu")]
        outcomes = {n: run_case(cls, n, args.timeout) for n in names if not args.only or args.only in n}
        ran = [v for v in outcomes.values() if v != "skipped"]
        print(f"{category}: {sum(v == 'ok' for v in ran)}/{len(ran)} passed", flush=True)
        results.update(outcomes)
    ran = [v for v in results.values() if v != "skipped"]
    passed = sum(v == "ok" for v in ran)
    print(f"total: {passed}/{len(ran)} passed in {time.time() - start:.0f} s")
    classes = collections.Counter(failure_class(v) for v in ran if v != "ok")
    for message, count in classes.most_common(args.classes):
        print(f"{count:5d}  {message}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
