"""TVM v0.16's own unit tests run against kiln with ``import kiln as tvm``: how many pass, file by file.

The test files are read from a clone of apache/tvm (``--tvm``, a bare or normal git repository; the tag ``v0.16.0``)
into a temporary directory, never into this repository. There a ``tvm`` package stands in for TVM: a meta-path
finder that answers ``import tvm.X`` with ``kiln.X`` (the same module object), so TVM's tests run unchanged on
kiln's modules. Each file runs in its own pytest process with a time limit; a file that fails to import counts all
the cases it defines as failed ("as a user sees it": one missing name at a file's top level takes the whole file
down), counted from the ``def test_`` functions in its source when pytest could not collect it.

Run: ``python bench/tvm_unit_tests.py --tvm /path/to/tvm [--files relay/test_op_level1.py,te/test_*.py,...]
[--timeout 600] [--keep DIR]``; ``--keep`` writes the extracted files and the ``tvm`` stand-in to DIR and leaves
them there, so one file can be rerun by hand with
``cd DIR && PYTHONPATH=.:<kiln checkout> python -m pytest relay__test_op_level1.py``.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

# the kiln under test is the checkout this script belongs to, not whichever one the interpreter has installed
REPO_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_FILES = [
    "relay/test_op_level1.py", "relay/test_op_level2.py", "relay/test_op_level3.py", "relay/test_op_level4.py",
    "relay/test_op_level5.py", "relay/test_pass_*.py",
    "relay/test_ir_parser.py", "relay/test_ir_text_printer.py", "relay/test_type_infer.py",
    "relay/test_ir_structural_equal_hash.py", "relay/test_backend_graph_executor.py",
    "relay/test_backend_interpreter.py", "relay/test_any.py", "relay/test_vm.py",
    "frontend/onnx/test_forward.py",
    # the lower layers, as issue 13 counts them: every test file of te/, tir-base/ and arith/, topi's conv2d,
    # softmax, pooling and relu, and DLPack
    "te/test_*.py", "tir-base/test_*.py", "arith/test_*.py",
    "topi/test_topi_conv2d_nchw.py", "topi/test_topi_conv2d_NCHWc.py", "topi/test_topi_conv2d_nhwc.py",
    "topi/test_topi_softmax.py", "topi/test_topi_pooling.py", "topi/test_topi_relu.py",
    "contrib/test_dlpack.py",
]

SHIM = '''
"""``import tvm`` answered by kiln: every ``tvm.X`` is the module ``kiln.X``."""
import importlib
import importlib.abc
import importlib.util
import sys

import kiln


def _kiln_module(rest):
    """kiln's module for ``tvm.<rest>``: ``kiln.<rest>``, or a module kiln exposes under that name as an
    attribute (``kiln.relay.build_module``); None when there is none."""
    try:
        return importlib.import_module("kiln." + rest)
    except ImportError:
        parent, _, last = rest.rpartition(".")
        try:
            found = getattr(importlib.import_module("kiln" + ("." + parent if parent else "")), last, None)
        except ImportError:
            return None
        return found if isinstance(found, type(sys)) else None


class _KilnAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("tvm.") and _kiln_module(name[4:]) is not None:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return _kiln_module(spec.name[4:])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _KilnAlias())
sys.modules[__name__].__dict__.update({k: v for k, v in vars(kiln).items() if not k.startswith("__")})
'''


def expand(tvm_repo, files):
    """``files`` with each pattern (``relay/test_pass_*.py``) replaced by the files of tag v0.16.0 it matches."""
    out = []
    for rel in files:
        if "*" not in rel:
            out.append(rel)
            continue
        folder, _, pattern = rel.rpartition("/")
        listing = subprocess.run(["git", "-C", str(tvm_repo), "ls-tree", "--name-only",
                                  f"v0.16.0:tests/python/{folder}"], capture_output=True, text=True).stdout.split()
        out.extend(f"{folder}/{name}" for name in sorted(listing) if fnmatch.fnmatch(name, pattern))
    return out


def extract(tvm_repo, files, workdir):
    """Write each test file of tag v0.16.0 under ``workdir``; returns the paths written."""
    out = []
    for rel in expand(tvm_repo, files):
        try:
            text = subprocess.run(["git", "-C", str(tvm_repo), "show", f"v0.16.0:tests/python/{rel}"], check=True,
                                  capture_output=True, text=True).stdout
        except subprocess.CalledProcessError:
            print(f"{rel}: not in the TVM clone, skipped")
            continue
        path = workdir / rel.replace("/", "__")
        path.write_text(text)
        out.append(path)
        extract_siblings(tvm_repo, rel, text, workdir)
    return out


def extract_siblings(tvm_repo, rel, text, workdir):
    """The test modules of the same folder that ``text`` imports by name (``from test_dynamic_op_level3 import
    verify_func``: pytest puts a test file's folder on ``sys.path``), written under their own names."""
    folder = rel.rpartition("/")[0]
    for name in sorted(set(re.findall(r"^\s*(?:from|import) (test_\w+)", text, re.M))):
        try:
            sibling = subprocess.run(["git", "-C", str(tvm_repo), "show", f"v0.16.0:tests/python/{folder}/{name}.py"],
                                     check=True, capture_output=True, text=True).stdout
        except subprocess.CalledProcessError:
            continue
        (workdir / f"{name}.py").write_text(sibling)


def extract_helpers(tvm_repo, workdir):
    """TVM's ``tests/python/relay/utils`` package (``ref_funcs``, ``assert_diagnostic``...), which relay test files
    import as ``utils``."""
    listing = subprocess.run(["git", "-C", str(tvm_repo), "ls-tree", "--name-only", "v0.16.0",
                              "tests/python/relay/utils/"], capture_output=True, text=True).stdout.split()
    (workdir / "utils").mkdir(exist_ok=True)
    for path in listing:
        text = subprocess.run(["git", "-C", str(tvm_repo), "show", f"v0.16.0:{path}"], capture_output=True,
                              text=True).stdout
        (workdir / "utils" / Path(path).name).write_text(text)


def run_file(path, workdir, timeout):
    """``(passed, failed, note)`` of one test file."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rN", str(path)]
    try:
        proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join([str(workdir), str(REPO_ROOT)])})
    except subprocess.TimeoutExpired:
        return 0, _defined_tests(path), "timed out"
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|error|errors|skipped|xfailed)", tail)}
    passed = counts.get("passed", 0)
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    if "error" in tail and not passed and not counts.get("failed"):  # collection failed: every case fails
        return 0, max(_defined_tests(path), failed), "does not import"
    return passed, failed, ""


def _defined_tests(path):
    return max(1, len(re.findall(r"^def test_", path.read_text(), re.M)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tvm", required=True, help="a git clone of apache/tvm holding the tag v0.16.0")
    parser.add_argument("--files", default=",".join(DEFAULT_FILES), help="comma-separated paths under tests/python")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file")
    parser.add_argument("--keep", help="write the test files here and keep them (default: a temporary directory)")
    args = parser.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kiln_tvm_tests_") as tmp:
        workdir = Path(args.keep or tmp)
        (workdir / "tvm").mkdir(exist_ok=True)
        (workdir / "tvm" / "__init__.py").write_text(textwrap.dedent(SHIM))
        # as TVM's tests/python/conftest.py: the target/dev parametrization of tvm.testing.plugin
        (workdir / "conftest.py").write_text('pytest_plugins = ["tvm.testing.plugin"]\n')
        extract_helpers(args.tvm, workdir)
        total_passed = total_failed = 0
        for path in extract(args.tvm, [f for f in args.files.split(",") if f], workdir):
            passed, failed, note = run_file(path, workdir, args.timeout)
            total_passed, total_failed = total_passed + passed, total_failed + failed
            share = passed / max(1, passed + failed)
            print(f"{path.name.replace('__', '/'):50s} {passed:5d} passed {failed:5d} failed  {share:6.1%}  {note}",
                  flush=True)
        total = max(1, total_passed + total_failed)
        print(f"total: {total_passed} of {total_passed + total_failed} cases pass ({total_passed / total:.1%})")


if __name__ == "__main__":
    main()
