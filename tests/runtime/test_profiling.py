"""Profiling reports (kiln/runtime/profiling.py): aggregation, the table, CSV and TVM's JSON layout."""

import json

import pytest

from kiln.runtime.profiling import Report


def report():
    calls = [
        {"Name": "conv", "Node": 1, "Duration (us)": 30.0, "Percent": 30.0, "Count": 1, "FLOPs": 6000,
         "Relay Ops": "nn.conv2d, nn.relu", "Argument Shapes": "float32[1, 3], float32[1, 4]"},
        {"Name": "pool", "Node": 2, "Duration (us)": 10.0, "Percent": 10.0, "Count": 1,
         "Relay Ops": "nn.max_pool2d", "Argument Shapes": "float32[1, 4], float32[1, 2]"},
        {"Name": "conv", "Node": 3, "Duration (us)": 50.0, "Percent": 50.0, "Count": 1, "FLOPs": 6000,
         "Relay Ops": "nn.conv2d, nn.relu", "Argument Shapes": "float32[1, 3], float32[1, 4]"},
    ]
    return Report(calls, {"cpu0": {"Duration (us)": 100.0}}, {"Executor": "Graph (debug)", "Number of runs": 5})


def test_aggregated_rows_add_up():
    rows = {r["Name"]: r for r in report().aggregated()}
    conv = rows["conv"]
    assert conv["Duration (us)"] == 80.0 and conv["Percent"] == 80.0 and conv["Count"] == 2
    assert conv["FLOPs"] == 12000 and conv["GFLOP/s"] == pytest.approx(12000 / 80e-6 / 1e9)
    assert "GFLOP/s" not in rows["pool"]
    assert report().total_us() == 100.0 and Report([]).total_us() is None


def test_table():
    lines = str(report()).splitlines()
    assert lines[0].split() == ["Name", "Duration", "(us)", "Percent", "Count", "GFLOP/s", "Relay", "Ops",
                                "Argument", "Shapes"]
    assert lines[1].split()[:5] == ["conv", "80.00", "80.00", "2", "0.15"]
    assert lines[2].split()[:4] == ["pool", "10.00", "10.00", "1"] and lines[2].split()[4] == "nn.max_pool2d"
    assert set(lines[3]) == {"-"}
    assert lines[4].split() == ["Sum", "90.00", "90.00", "3"]
    assert lines[5].split() == ["Total", "100.00"]
    assert lines[6:] == ["Executor: Graph (debug)", "Number of runs: 5"]
    unsorted = report().table(sort=False, aggregate=False, col_sums=False).splitlines()
    assert [line.split()[0] for line in unsorted[1:4]] == ["conv", "pool", "conv"]
    assert unsorted[0].split()[:2] == ["Name", "Node"] and len(unsorted) == 6


def test_csv_has_one_line_per_call():
    lines = report().csv().splitlines()
    assert lines[0] == "Name,Node,Duration (us),Percent,Count,FLOPs,Relay Ops,Argument Shapes"
    assert lines[2] == 'pool,2,10.0,10.0,1,,nn.max_pool2d,"float32[1, 4], float32[1, 2]"'
    assert len(lines) == 4


def test_json_is_tvms_layout_and_round_trips():
    data = json.loads(report().json())
    assert data["calls"][0]["Duration (us)"] == {"microseconds": 30.0}
    assert data["calls"][0]["Percent"] == {"percent": 30.0}
    assert data["calls"][0]["Count"] == {"count": 1} and data["calls"][0]["Name"] == {"string": "conv"}
    assert data["device_metrics"] == {"cpu0": {"Duration (us)": {"microseconds": 100.0}}}
    assert data["configuration"]["Number of runs"] == {"count": 5}
    assert Report.from_json(report().json()) == report()
