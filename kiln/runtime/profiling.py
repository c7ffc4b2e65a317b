"""Profiling reports (TVM's ``tvm.runtime.profiling.Report``): one row of metrics per call, shown as a table, exported
as CSV or JSON.

A report holds

* ``calls``: one dict per call (a kernel node of the graph), column name -> value: ``"Name"`` (the kernel),
  ``"Duration (us)"``, ``"Percent"`` (of the whole run), ``"Count"``, ``"Argument Shapes"`` and whatever else the
  producer records (the debug executor adds ``"Node"``, ``"Relay Ops"`` and ``"FLOPs"``, operations per call);
* ``device_metrics``: per device, metrics of the whole run (``{"cpu0": {"Duration (us)": 39221.0}}``);
* ``configuration``: how it was measured (``{"Executor": "Graph", "Number of runs": 10}``).

:meth:`Report.table` aggregates calls of the same kernel with the same shapes (durations, percentages, counts and
operations add up), sorts them by duration, and derives ``GFLOP/s`` from ``FLOPs``; a ``Sum`` row adds up the
calls and a ``Total`` row gives the whole run, so the two show how much of the run the calls account for.
:meth:`Report.json` writes TVM's layout, each value tagged with its kind (``{"Duration (us)": {"microseconds": 12.5},
"Count": {"count": 1}, "Name": {"string": "..."}}``), and :meth:`Report.from_json` reads it back.
"""

import csv
import io
import json
from dataclasses import dataclass, field

__all__ = ["Report"]

DURATION, PERCENT, COUNT, FLOPS = "Duration (us)", "Percent", "Count", "FLOPs"
_COLUMN_ORDER = ("Name", "Node", DURATION, PERCENT, COUNT, "GFLOP/s", FLOPS, "Relay Ops", "Argument Shapes")
_TABLE_HIDDEN = ("Node", FLOPS)  # per-call details that an aggregated row has no single value for
_FLOAT_KINDS = {DURATION: "microseconds", PERCENT: "percent"}  # other float columns are "ratio"s, as in TVM


def _tag(column, value) -> dict:
    if isinstance(value, bool | str):
        return {"string": str(value)}
    if isinstance(value, int):
        return {"count": value}
    return {_FLOAT_KINDS.get(column, "ratio"): float(value)}


def _untag(tagged):
    (kind, value), = tagged.items()
    return int(value) if kind == "count" else value


def _columns(rows) -> list:
    present = {key for row in rows for key in row}
    ordered = [c for c in _COLUMN_ORDER if c in present]
    return ordered + sorted(present - set(ordered))


def _format(value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


@dataclass
class Report:
    """Per-call metrics of one profiled run (see the module docstring).

    Parameters
    ----------
    calls : list of dict
        One dict per call, column name -> str, int or float.
    device_metrics : dict of str to dict
        Per device, metrics of the whole run (``"Duration (us)"``).
    configuration : dict
        How the run was measured.

    Examples
    --------
    >>> report = m.profile()                    # doctest: +SKIP
    >>> print(report)                           # doctest: +SKIP
    >>> open("profile.csv", "w").write(report.csv())   # doctest: +SKIP
    """

    calls: list
    device_metrics: dict = field(default_factory=dict)
    configuration: dict = field(default_factory=dict)

    def total_us(self):
        """The whole run's duration in microseconds (summed over devices), None when unknown."""
        totals = [m[DURATION] for m in self.device_metrics.values() if DURATION in m]
        return sum(totals) if totals else None

    def aggregated(self) -> list:
        """Calls of the same kernel with the same argument shapes merged into one row each (durations, percentages,
        counts and FLOPs summed), with ``GFLOP/s`` where FLOPs are known."""
        rows: dict = {}
        for call in self.calls:
            key = (call.get("Name"), call.get("Argument Shapes"))
            row = rows.get(key)
            if row is None:
                rows[key] = dict(call)
                continue
            for column in (DURATION, PERCENT, COUNT, FLOPS):
                if column in call:
                    row[column] = row.get(column, 0) + call[column]
        for row in rows.values():
            if row.get(FLOPS) and row.get(DURATION):
                row["GFLOP/s"] = row[FLOPS] / (row[DURATION] * 1e3)
        return list(rows.values())

    def table(self, sort=True, aggregate=True, col_sums=True) -> str:
        """The report as a text table.

        Parameters
        ----------
        sort : bool
            Slowest rows first.
        aggregate : bool
            One row per kernel and argument shapes (see :meth:`aggregated`); False: one row per call.
        col_sums : bool
            Add the ``Sum`` row (durations, percentages and counts of the rows added up) and the ``Total`` row (the
            whole run, measured on its own).

        Returns
        -------
        str
        """
        rows = self.aggregated() if aggregate else [dict(c) for c in self.calls]
        if sort:
            rows.sort(key=lambda r: -r.get(DURATION, 0.0))
        columns = [c for c in _columns(rows) if not (aggregate and c in _TABLE_HIDDEN)]
        if col_sums and rows:
            sums = {"Name": "Sum"}
            for column in (DURATION, PERCENT, COUNT):
                if any(column in r for r in rows):
                    sums[column] = sum(r.get(column, 0) for r in rows)
            rows.append(None)  # a rule
            rows.append(sums)
            total = self.total_us()
            if total is not None:
                rows.append({"Name": "Total", DURATION: total})
        cells = [[_format(r.get(c)) for c in columns] if r is not None else None for r in rows]
        widths = [max([len(c)] + [len(line[i]) for line in cells if line is not None]) for i, c in enumerate(columns)]
        numeric = {DURATION, PERCENT, COUNT, "GFLOP/s"}

        def render(values):
            return "  ".join(v.rjust(w) if c in numeric else v.ljust(w)
                             for c, v, w in zip(columns, values, widths, strict=True)).rstrip()

        lines = [render(columns)]
        lines += [render(line) if line is not None else "-" * len(lines[0]) for line in cells]
        for key, value in self.configuration.items():
            lines.append(f"{key}: {_format(value)}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def csv(self) -> str:
        """One CSV line per call (not aggregated), with a header of every column."""
        columns = _columns(self.calls)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for call in self.calls:
            writer.writerow(["" if call.get(c) is None else call.get(c) for c in columns])
        return out.getvalue()

    def json(self) -> str:
        """The report in TVM's JSON layout (see the module docstring)."""
        return json.dumps({
            "calls": [{k: _tag(k, v) for k, v in call.items()} for call in self.calls],
            "device_metrics": {dev: {k: _tag(k, v) for k, v in metrics.items()}
                               for dev, metrics in self.device_metrics.items()},
            "configuration": {k: _tag(k, v) for k, v in self.configuration.items()},
        }, indent=2)

    @staticmethod
    def from_json(text) -> "Report":
        """Read a report written by :meth:`json`."""
        data = json.loads(text)
        return Report(
            [{k: _untag(v) for k, v in call.items()} for call in data.get("calls", [])],
            {dev: {k: _untag(v) for k, v in m.items()} for dev, m in data.get("device_metrics", {}).items()},
            {k: _untag(v) for k, v in data.get("configuration", {}).items()},
        )
