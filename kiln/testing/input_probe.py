"""Bad input never crashes kiln: random bytes, truncations and misuse thrown at every loader and executor, in a
separate process so that a crash (a signal such as SIGBUS or SIGSEGV) or a hang is caught and reported, not suffered.

Each case is ``(target, seed, index)``: a target of :mod:`.input_probe_targets` (``from_onnx``, ``relay.parse``,
``load_module``, ``load_param_dict``, ``graph_executor.create``, ``vm.load_exec`` and the misuse of the two
executors' inputs) damages its valid artifact with a generator seeded by ``(seed, index)`` and gives it to kiln.
The outcome is

* ``ok``: accepted (and, for a loader, the loaded thing ran);
* ``refused``: a :class:`~kiln.error.KilnError`;
* ``bare``: any other exception (a bug: the user gets a Python error from deep inside kiln);
* ``silent``: an executor accepted an input its signature forbids (a bug);
* ``crash``: the process died (a bug), ``hang``: a case ran longer than ``case_timeout`` (a bug).

The parent builds the artifacts once, then starts a worker process that runs the cases in order and records each
one's start and end in a progress file. When the worker dies, the case it had started is the crash, and a new
worker goes on from the next one.

``python -m kiln.testing.input_probe --cases 200 --seed 1`` runs 200 cases per target and prints, for every bug,
the command that replays it (``--targets T --seed S --replay K``).
"""

import argparse
import functools
import importlib.util
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from .input_probe_targets import TARGETS, SilentAcceptance, prepare, read_artifact

__all__ = ["ProbeOutcome", "probe", "run_case"]

BUGS = ("bare", "silent", "crash", "hang")


@dataclass
class ProbeOutcome:
    """What one case did: ``kind`` is one of ``ok``, ``refused``, ``bare``, ``silent``, ``crash``, ``hang``."""

    target: str
    seed: int
    index: int
    damage: str
    kind: str
    detail: str = ""

    @property
    def is_bug(self) -> bool:
        return self.kind in BUGS

    def replay(self) -> str:
        return (f"python -m kiln.testing.input_probe --targets {self.target} --seed {self.seed} "
                f"--replay {self.index}")


@functools.cache
def resolve(name: str):
    """The :class:`ProbeTarget` called ``name`` in :data:`TARGETS`, or ``"path/to/file.py:NAME"``: one defined in a
    file (a test's own target, which the worker process loads the same way)."""
    if name in TARGETS:
        return TARGETS[name]
    path, _, attr = name.rpartition(":")
    if not path.endswith(".py"):
        raise KeyError(f"unknown probe target {name!r}; targets: {', '.join(TARGETS)}")
    spec = importlib.util.spec_from_file_location(f"kiln_probe_{pathlib.Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attr)


def _case_rng(target: str, seed: int, index: int) -> random.Random:
    return random.Random(f"{target}/{seed}/{index}")


def run_case(target_name: str, seed: int, index: int, workdir: pathlib.Path, state=None) -> ProbeOutcome:
    """Run one case in this process (the worker's loop, and ``--replay``); ``state`` is the target's setup."""
    from ..error import KilnError

    target = resolve(target_name)
    if state is None:
        state = target.setup(workdir)
    original = read_artifact(target, workdir)
    data, damage = target.mutate(original, _case_rng(target_name, seed, index))
    if isinstance(data, bytes | str) and data == original:
        damage += " (no change)"
    path = workdir / "cases" / f"{target.name}-{seed}-{index}{pathlib.Path(target.artifact).suffix}"
    path.parent.mkdir(exist_ok=True)
    try:
        target.consume(state, data, path)
        kind, detail = "ok", ""
    except KilnError as exc:
        kind, detail = "refused", f"{type(exc).__name__}: {str(exc)[:300]}"
    except SilentAcceptance as exc:
        kind, detail = "silent", str(exc)
    except Exception as exc:  # noqa: BLE001  (the finding: anything but a KilnError)
        kind, detail = "bare", f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        if path.exists():
            path.unlink()
    return ProbeOutcome(target_name, seed, index, damage, kind, detail)


def _worker(workdir: pathlib.Path, cases: list, progress: pathlib.Path) -> None:
    """Run ``cases`` (target, seed, index) in order, appending a ``begin`` and an ``end`` record for each."""
    import warnings

    warnings.simplefilter("ignore")  # the probe judges by outcome; warnings (skipped names) are expected
    states: dict = {}
    with open(progress, "a", buffering=1) as out:
        for target, seed, index in cases:
            out.write(json.dumps({"begin": [target, seed, index]}) + "\n")
            out.flush()
            if target not in states:
                states[target] = resolve(target).setup(workdir)
            outcome = run_case(target, seed, index, workdir, states[target])
            out.write(json.dumps({"end": [target, seed, index], "damage": outcome.damage, "kind": outcome.kind,
                                  "detail": outcome.detail}) + "\n")
            out.flush()


def _read_progress(progress: pathlib.Path):
    ended, begun = {}, None
    if progress.exists():
        for line in progress.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a record cut short by the crash it reports
            if "begin" in record:
                begun = tuple(record["begin"])
            else:
                ended[tuple(record["end"])] = record
    return ended, begun


def probe(targets=None, seed: int = 0, cases: int = 20, workdir=None, case_timeout: float = 120.0,
          replay=None) -> list:
    """Run ``cases`` cases of each target (all of :data:`TARGETS` by default) in worker processes.

    Parameters
    ----------
    targets : list of str, optional
        Names from :data:`~kiln.testing.input_probe_targets.TARGETS`.
    seed : int
        Names the cases with their index: the same seed damages the same way.
    cases : int
        Cases per target.
    workdir : path, optional
        Where the artifacts are built (a temporary directory by default; an existing one is reused as it is).
    case_timeout : float
        Seconds one case may run before it counts as a hang.
    replay : int, optional
        Run only this index of each target.

    Returns
    -------
    list of ProbeOutcome
    """
    targets = list(targets or TARGETS)
    with tempfile.TemporaryDirectory(prefix="kiln-probe-") as tmp:
        work = pathlib.Path(workdir) if workdir is not None else pathlib.Path(tmp)
        if not all((work / resolve(t).artifact).exists() for t in targets):
            prepare(work)
        indices = [replay] if replay is not None else range(cases)
        todo = [(t, seed, k) for t in targets for k in indices]
        progress = pathlib.Path(tmp) / "progress.jsonl"
        outcomes = []
        while todo:
            if progress.exists():
                progress.unlink()
            spec = pathlib.Path(tmp) / "cases.json"
            spec.write_text(json.dumps(todo))
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pathlib.Path(__file__).parents[2]),
                                                               os.environ.get("PYTHONPATH", "")]))
            log = pathlib.Path(tmp) / "stderr.txt"
            with open(log, "wb") as err:  # a file, not a pipe: a chatty worker must not block on a full pipe
                proc = subprocess.Popen([sys.executable, "-m", "kiln.testing.input_probe", "--worker", str(work),
                                         str(spec), str(progress)], env=env, stdout=subprocess.DEVNULL, stderr=err)
                hung = _wait(proc, progress, case_timeout)
            stderr = log.read_text(errors="replace")
            ended, begun = _read_progress(progress)
            if not ended and begun is None:
                raise RuntimeError(f"the probe's worker ran no case (exit status {proc.returncode}): {stderr[-2000:]}")
            for case in todo:
                if case in ended:
                    r = ended[case]
                    outcomes.append(ProbeOutcome(*case, r["damage"], r["kind"], r["detail"]))
                    continue
                if begun == case:
                    kind = "hang" if hung else "crash"
                    detail = (f"exit status {proc.returncode}: {stderr[-400:]}" if kind == "crash"
                              else f"more than {case_timeout} s")
                    target = resolve(case[0])
                    damage = target.mutate(read_artifact(target, work), _case_rng(*case))[1]
                    outcomes.append(ProbeOutcome(*case, damage, kind, detail))
                break
            done = {(o.target, o.seed, o.index) for o in outcomes}
            todo = [c for c in todo if c not in done]
    return outcomes


def _wait(proc, progress: pathlib.Path, case_timeout: float) -> bool:
    """Wait for the worker, killing it when one case runs longer than ``case_timeout``; returns whether it was
    killed."""
    last, seen = time.monotonic(), 0
    while proc.poll() is None:
        time.sleep(0.2)
        size = progress.stat().st_size if progress.exists() else 0
        if size != seen:
            last, seen = time.monotonic(), size
        elif time.monotonic() - last > case_timeout + (60 if size == 0 else 0):  # the first case also imports
            proc.kill()
            proc.wait()
            return True
    return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kiln.testing.input_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=50, help="cases per target (default 50)")
    parser.add_argument("--replay", type=int, help="run only this case index of each target")
    parser.add_argument("--workdir", help="keep the artifacts here (and reuse them)")
    parser.add_argument("--case-timeout", type=float, default=120.0)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        work, spec, progress = map(pathlib.Path, args.worker)
        _worker(work, [tuple(c) for c in json.loads(spec.read_text())], progress)
        return 0
    unknown = [t for t in args.targets.split(",") if t not in TARGETS and ".py:" not in t]
    if unknown:
        parser.error(f"unknown targets {', '.join(unknown)}; targets: {', '.join(TARGETS)}")
    outcomes = probe(args.targets.split(","), args.seed, args.cases, args.workdir, args.case_timeout, args.replay)
    for name in args.targets.split(","):
        mine = [o for o in outcomes if o.target == name]
        counts = {k: sum(o.kind == k for o in mine) for k in ("ok", "refused", *BUGS)}
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v or k in BUGS))
    bugs = [o for o in outcomes if o.is_bug]
    for o in bugs:
        print(f"{o.kind}: {o.target} [{o.damage}]: {o.detail}\n    replay: {o.replay()}")
    if args.replay is not None:
        for o in outcomes:
            print(f"{o.target} {o.index}: {o.kind} [{o.damage}] {o.detail}")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
