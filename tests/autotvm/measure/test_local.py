"""LocalBuilder and LocalRunner (kiln/autotvm/measure/local.py, isolation.py): every way a candidate can fail is an
error record of its own, and the tuner goes on."""

import json
import os

import pytest

from kiln import autotvm, te
from kiln.autotvm.measure import MeasureErrorNo, MeasureInput, create_measure_batch
from kiln.autotvm.measure.isolation import run_isolated
from kiln.autotvm.task import register_topi_compute, register_topi_schedule

MODES = ["ok", "wrong", "segfault", "raise", "abort_build", "hang"]


@register_topi_compute("test.faulty")
def faulty(cfg, a):
    """``a * 2``, or a candidate that fails in the way the knob ``mode`` says."""
    cfg.define_knob("mode", MODES)
    mode = cfg["mode"].val
    n = a.shape[0]
    if mode == "raise":
        raise ValueError("this config cannot be instantiated")
    if mode == "wrong":
        return te.compute((n,), lambda i: a[i] * 2.0 + 1.0, name="b")
    if mode == "segfault":  # reads 4 GB past the buffer
        return te.compute((n,), lambda i: a[i + (1 << 30)] * 2.0, name="b")
    if mode == "hang":  # 2^31 steps per element: far beyond the runner's timeout
        k = te.reduce_axis((0, (1 << 31) - 1), name="k")
        return te.compute((n,), lambda i: te.sum(a[i] * 2.0, axis=k), name="b")
    return te.compute((n,), lambda i: a[i] * 2.0, name="b")


@register_topi_schedule("test.faulty")
def faulty_schedule(cfg, outs, target):
    """The default schedule, except that ``abort_build`` kills the process building it."""
    if cfg["mode"].val == "abort_build":
        os.abort()
    return te.create_schedule([o.op for o in outs])


@pytest.fixture(scope="module")
def task():
    return autotvm.task.create("test.faulty", (("TENSOR", (64,), "float32"),), "llvm")


def option(timeout=2.0):
    return autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=2, timeout=20),
                                  runner=autotvm.LocalRunner(number=1, repeat=2, timeout=timeout))


def test_every_failure_is_its_own_error_record(task):
    measure = create_measure_batch(task, option())
    space = task.config_space
    results = measure([MeasureInput(task.target, task, space.get(i)) for i in range(len(space))])
    by_mode = {space.get(i)["mode"].val: r for i, r in enumerate(results)}
    assert by_mode["ok"].error_no == MeasureErrorNo.NO_ERROR and len(by_mode["ok"].costs) == 2
    assert by_mode["wrong"].error_no == MeasureErrorNo.WRONG_ANSWER
    assert "differs from the default config's" in by_mode["wrong"].error_msg
    assert by_mode["segfault"].error_no == MeasureErrorNo.RUNTIME_DEVICE
    assert "SIGSEGV" in by_mode["segfault"].error_msg or "SIGBUS" in by_mode["segfault"].error_msg
    assert by_mode["raise"].error_no == MeasureErrorNo.INSTANTIATION_ERROR
    assert "this config cannot be instantiated" in by_mode["raise"].error_msg
    assert by_mode["abort_build"].error_no == MeasureErrorNo.COMPILE_HOST
    assert "SIGABRT" in by_mode["abort_build"].error_msg
    assert by_mode["hang"].error_no == MeasureErrorNo.RUN_TIMEOUT


def test_tuner_records_errors_and_keeps_the_good_config(task, tmp_path):
    log = tmp_path / "log.json"
    tuner = autotvm.tuner.GridSearchTuner(task)
    tuner.tune(len(task.config_space), option(timeout=1.0), callbacks=[autotvm.callback.log_to_file(str(log))])
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == len(MODES)
    errors = {row["config"]["entity"][0][2]: row["result"][1] for row in rows}
    assert errors["ok"] == 0 and all(errors[m] != 0 for m in MODES if m != "ok")
    assert tuner.best_config["mode"].val == "ok"
    assert rows[0]["config"]["entity"][0][2] == "ok"  # the default config is measured first


def test_isolated_jobs_report_how_they_ended():
    def boom():
        raise RuntimeError("boom")

    def die():
        os.kill(os.getpid(), 9)

    outcomes = run_isolated([(pow, (2, 10)), (boom, ()), (die, ())], n_parallel=2, timeout=10)
    assert outcomes[0] == ("ok", 1024)
    assert outcomes[1].status == "error" and "RuntimeError: boom" in outcomes[1].value
    assert outcomes[2].status == "crash" and "SIGKILL" in outcomes[2].value
