"""Lower layers never import higher ones (ARCHITECTURE.md), checked over every module with ``ast``."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "kiln"

# rank of each component; a module may import only components of equal or lower rank
RANKS = {
    "error": 0, "_ffi": 1, "runtime": 1, "rpc": 2, "ir": 2, "transform": 2, "tir": 3, "arith": 4, "te": 6, "topi": 7, "target": 8,
    "relay": 9, "autotvm": 10, "contrib": 10, "backend": 10, "driver": 8, "parser": 10, "script": 5, "cli": 11, "testing": 11, "__init__": 12,
}
# tir.transform sits above arith (its passes use the simplifier); tir nodes sit below it. Target and the CPU tables
# sit beside the TIR nodes (every layer that chooses code by target reads them); the code generators sit above topi.
# autotvm is split as TVM's is: topi's templates read their configs from the dispatch contexts, and tasks rebuild a
# template's schedule, so autotvm.task (spaces, dispatch contexts, tasks; TVM's topi imports tvm.autotvm) and the
# record format the dispatch contexts read logs with sit at topi's rank; extracting tasks from a Relay program,
# measuring and tuning sit above relay.
SUBRANKS = {("tir", "transform"): 5, ("tir", "buffer_offset"): 5, ("target", "target"): 3, ("target", "cpu"): 3, ("target", "generic_func"): 3,
            ("autotvm", "task"): 7, ("autotvm", "task", "relay_integration"): 10, ("autotvm", "record"): 7,
            ("autotvm", "measure", "measure"): 7}


def _component(parts):
    rank = RANKS.get(parts[0])
    if rank is None:
        return None
    return SUBRANKS.get(tuple(parts[:3]), SUBRANKS.get(tuple(parts[:2]), rank))


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        yield path, parts


def _imports(path, parts):
    tree = ast.parse(path.read_text())
    package = parts if path.name == "__init__.py" else parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + (node.module.split(".") if node.module else [])
                names = [target + [a.name] for a in node.names] if not node.module else [target]
            elif node.module and node.module.startswith("kiln."):
                names = [node.module.split(".")[1:]]
            else:
                continue
            for name in names:
                yield node.lineno, name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kiln."):
                    yield node.lineno, alias.name.split(".")[1:]


@pytest.mark.parametrize("path,parts", list(_modules()), ids=lambda p: str(p) if isinstance(p, list) else "")
def test_no_upward_imports(path, parts):
    if path.name == "__init__.py" and len(parts) == 1 and parts[0] == "__init__":
        return  # kiln/__init__.py re-exports everything
    own = _component(parts)
    if own is None:
        return
    for lineno, target in _imports(path, parts):
        if not target:
            continue
        other = _component(target)
        if other is not None and other > own:
            pytest.fail(f"{path.relative_to(ROOT.parent)}:{lineno} imports kiln.{'.'.join(target)} from a lower layer")


def test_topi_knows_nothing_of_relay():
    """Operator strategies live in Relay (kiln/relay/op/strategy); topi's computes and schedules take tensors and
    plain values, never Relay expressions or attribute records."""
    offenders = []
    for path, parts in _modules():
        if parts[0] != "topi":
            continue
        offenders += [f"{path.relative_to(ROOT.parent)}:{line}" for line, target in _imports(path, parts)
                      if target and target[0] == "relay"]
    assert not offenders, offenders
