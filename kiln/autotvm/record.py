"""Tuning records: one JSON object per line (TVM's ``autotvm/record.py``, the same fields in spirit)::

    {"input": ["llvm -keys=cpu -mcpu=...", "conv2d_NCHWc.x86", [["TENSOR", [1, 1, 14, 14, 16], "float32"], ...], {}],
     "config": {"index": 3, "code_hash": null, "entity": [["tile_ow", "sp", [1, 14]], ["reduce_inner", "ot", "kw"]]},
     "result": [[1.2e-05, 1.1e-05], 0, 0.84, 1795000000.0], "error": "", "version": 0.2, "kiln_version": "0.1.0"}

``input`` is the target, the task (template name and workload arguments) and TVM's unused kwargs; ``result`` is the
costs in seconds (empty for a failed candidate), the :class:`~.measure.measure.MeasureErrorNo`, the whole
measurement's seconds and the timestamp; ``error`` says what failed.

:func:`load_from_file` skips a line that is not a valid record with a warning naming the file and the line (or,
with ``strict=True``, raises :class:`RecordError` naming them): never silently.
"""

import base64
import importlib.metadata
import json
import pickle
import warnings

from ..error import KilnError
from ..target.target import Target
from .measure.measure import MeasureInput, MeasureResult
from .task.dispatcher import ApplyHistoryBest, target_key, workload_key
from .task.space import ConfigEntity
from .task.task import create

__all__ = ["encode", "decode", "load_from_file", "save_to_file", "pick_best", "RecordError", "VERSION",
           "ApplyHistoryBest", "measure_str_key", "load_from_stream"]

VERSION = 0.2

try:
    _KILN_VERSION = importlib.metadata.version("kiln")
except importlib.metadata.PackageNotFoundError:  # run from a source tree
    _KILN_VERSION = "unknown"


class RecordError(KilnError, ValueError):
    """A line of a log that is not a valid tuning record."""


def _tuples(value):
    """JSON lists back to the tuples workloads are made of."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def encode(inp, result, protocol="json") -> str:
    """The record of measuring ``inp`` (a MeasureInput) with ``result`` (a MeasureResult): a JSON line, or with
    ``protocol="pickle"`` the same row pickled and base64-encoded (TVM's compact form)."""
    if protocol == "pickle":
        return base64.b64encode(pickle.dumps(json.loads(encode(inp, result)))).decode()
    if protocol != "json":
        raise RecordError(f"unknown record protocol {protocol!r} (json, pickle)")
    row = {
        "input": [str(inp.target), inp.task.name, list(inp.task.args), {}],
        "config": inp.config.to_json_dict(),
        "result": [list(result.costs), int(result.error_no), result.all_cost, result.timestamp],
        "error": result.error_msg,
        "version": VERSION,
        "kiln_version": _KILN_VERSION,
    }
    return json.dumps(row)


_TASKS: dict = {}  # (target, name, args) -> Task: decoding a log builds each task's space once


def decode(line, protocol="json"):
    """``(MeasureInput, MeasureResult)`` of a record (``protocol`` as :func:`encode`'s); RecordError saying what is
    wrong with it."""
    if protocol == "pickle":
        try:
            row = pickle.loads(base64.b64decode(line))  # noqa: S301  (records the user chose to load)
        except Exception as exc:  # noqa: BLE001  (any malformed pickle)
            raise RecordError(f"not a pickled record ({type(exc).__name__})") from None
        return decode(json.dumps(row))
    if protocol != "json":
        raise RecordError(f"unknown record protocol {protocol!r} (json, pickle)")
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    try:
        target_str, name, args, _ = row["input"]
        costs, error_no, all_cost, timestamp = row["result"]
        config_json = row["config"]
    except (KeyError, TypeError, ValueError):
        raise RecordError("not a tuning record (it needs input [target, task, args, {}], config and result "
                          "[costs, error_no, all_cost, timestamp])") from None
    try:
        target = Target(target_str)
    except Exception as exc:  # noqa: BLE001  (any malformed target string)
        raise RecordError(f"bad target {target_str!r}: {exc}") from None
    args = _tuples(args)
    key = (target_str, name, args)
    try:
        task = _TASKS.get(key) or _TASKS.setdefault(key, create(name, args, target))
        config = ConfigEntity.from_json_dict(config_json, task.config_space)
    except KilnError as exc:
        raise RecordError(f"a record for task {name!r} that kiln cannot use: {exc}") from None
    except Exception as exc:  # noqa: BLE001  (arguments the template cannot take)
        raise RecordError(f"a record for task {name!r} with arguments its template cannot take: "
                          f"{type(exc).__name__}: {exc}") from None
    result = MeasureResult(tuple(float(c) for c in costs), int(error_no), float(all_cost), float(timestamp),
                           str(row.get("error", "")))
    return MeasureInput(target, task, config), result


def load_from_file(filename, strict=False):
    """Yield ``(MeasureInput, MeasureResult)`` for each record of the log ``filename``.

    Parameters
    ----------
    filename : str or path
    strict : bool
        Raise :class:`RecordError` (naming the file and line) on a line that is not a valid record, instead of
        skipping it with a warning naming them. Blank lines are not records and are passed over.
    """
    with open(filename) as f:
        yield from load_from_stream(f, strict, name=str(filename))


def load_from_stream(stream, strict=False, name=None):
    """Yield ``(MeasureInput, MeasureResult)`` for each record of the open log ``stream`` (as
    :func:`load_from_file`; ``name`` names it in messages)."""
    name = name or getattr(stream, "name", "<stream>")
    for lineno, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield decode(line)
        except RecordError as exc:
            message = f"{name}:{lineno}: not a valid tuning record: {exc}"
            if strict:
                raise RecordError(message) from None
            warnings.warn(f"{message}; line skipped", stacklevel=3)


def save_to_file(filename, records, mode="a"):
    """Append (``mode="a"``) or write the ``(MeasureInput, MeasureResult)`` pairs ``records`` as JSON lines."""
    with open(filename, mode) as f:
        for inp, result in records:
            f.write(encode(inp, result) + "\n")


def pick_best(in_file, out_file):
    """Write to ``out_file`` the best (fastest successful) record of each task and target of ``in_file``."""
    best = {}
    for inp, result in load_from_file(in_file):
        if result.error_no or not result.costs:
            continue
        key = (target_key(inp.target), workload_key(inp.task.workload))
        if key not in best or result.mean_cost < best[key][1].mean_cost:
            best[key] = (inp, result)
    save_to_file(out_file, best.values(), mode="w")
    return len(best)


def measure_str_key(inp, include_config=True) -> str:
    """A string naming what a record measured: target, task name and arguments, and (with ``include_config``)
    the config (TVM's key for de-duplicating records)."""
    key = f"{target_key(inp.target)} {inp.task.name} {inp.task.args}"
    return f"{key} {inp.config}" if include_config else key
