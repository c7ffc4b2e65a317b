"""Tuning records (kiln/autotvm/record.py): JSON lines that round-trip, invalid lines skipped with a warning naming
the file and line (or refused when strict), and pick_best."""

import json
import time

import pytest

from kiln import autotvm
from kiln.autotvm import record
from kiln.autotvm.measure import MeasureInput, MeasureResult
from kiln.error import KilnError

from .conftest import conv_model


@pytest.fixture(scope="module")
def task():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    return task


def pair(task, index, costs=(1e-5, 1.2e-5), error_no=0, error=""):
    return (MeasureInput(task.target, task, task.config_space.get(index)),
            MeasureResult(tuple(costs), error_no, 0.5, time.time(), error))


def test_round_trip(task, tmp_path):
    records = [pair(task, 0), pair(task, 1, costs=(), error_no=5, error="output 0 differs")]
    log = tmp_path / "log.json"
    record.save_to_file(log, records)
    row = json.loads(log.read_text().splitlines()[0])
    assert set(row) == {"input", "config", "result", "error", "version", "kiln_version"}
    assert row["input"][1] == "conv2d_NCHWc.x86" and row["input"][0] == str(task.target)
    back = list(record.load_from_file(log))
    assert len(back) == 2
    for (inp, res), (inp2, res2) in zip(records, back, strict=True):
        assert inp2.task.workload == inp.task.workload and inp2.config == inp.config
        assert inp2.config.index == inp.config.index
        assert res2.costs == res.costs and res2.error_no == res.error_no and res2.error_msg == res.error_msg


BAD_LINES = [
    ("{not json", "not JSON"),
    ('{"input": 3}', "not a tuning record"),
    ('{"input": ["llvm", "conv9d.x86", [], {}], "config": {"entity": []}, "result": [[1.0], 0, 1.0, 0]}',
     "no schedule template is registered as 'conv9d.x86'"),
]


@pytest.mark.parametrize("line,reason", BAD_LINES)
def test_invalid_line_is_skipped_with_a_warning_naming_file_and_line(task, tmp_path, line, reason):
    log = tmp_path / "log.json"
    good = record.encode(*pair(task, 0))
    log.write_text(good + "\n" + line + "\n\n" + good + "\n")
    with pytest.warns(UserWarning, match=rf"log\.json:2: not a valid tuning record: .*{reason}") as caught:
        loaded = list(record.load_from_file(log))
    assert len(loaded) == 2 and len(caught) == 1
    with pytest.raises(record.RecordError, match=rf"log\.json:2: .*{reason}"):
        list(record.load_from_file(log, strict=True))
    assert issubclass(record.RecordError, KilnError) and issubclass(record.RecordError, ValueError)


def test_record_with_knobs_the_template_does_not_declare(task, tmp_path):
    row = json.loads(record.encode(*pair(task, 0)))
    row["config"]["entity"].append(["tile_zz", "ot", 3])
    log = tmp_path / "log.json"
    log.write_text(json.dumps(row) + "\n")
    with pytest.raises(record.RecordError, match="log.json:1: .*knobs .*tile_zz"):
        list(record.load_from_file(log, strict=True))


def test_pick_best_keeps_the_fastest_successful_record(task, tmp_path):
    log, best = tmp_path / "log.json", tmp_path / "best.json"
    record.save_to_file(log, [pair(task, 0, costs=(3e-5,)), pair(task, 1, costs=(1e-5,)),
                              pair(task, 2, costs=(), error_no=4, error="run crash")])
    assert record.pick_best(log, best) == 1
    ((inp, res),) = list(record.load_from_file(best))
    assert inp.config.index == 1 and res.costs == (1e-5,)
    with autotvm.apply_history_best(str(log)):
        assert autotvm.DispatchContext.current.query(task.target, task.workload).index == 1
