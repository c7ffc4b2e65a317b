"""kiln.testing.autotvm (TVM's tvm.testing.autotvm) and the user-template API it rests on (``autotvm.template``,
``autotvm.get_config``): a whole-function template builds under each config and computes the product numpy does;
tuners confined to an index range stay in it; records of it round-trip in both protocols and load in every form
``ApplyHistoryBest`` accepts."""

import io

import numpy as np
import pytest

import kiln
from kiln import autotvm
from kiln.autotvm.record import decode, encode, measure_str_key
from kiln.testing.autotvm import DummyRunner, get_sample_records, get_sample_task, matmul


def test_user_template_builds_every_config_it_is_given():
    task, target = get_sample_task(16)
    assert task.config_space.knob_names() == ["tile_y", "tile_x"] and len(task.config_space) == 25
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16)).astype("float32"), rng.standard_normal((16, 16)).astype("float32")
    for config in list(task.config_space)[::6]:
        s, tensors = task.instantiate(config)
        lib = kiln.build(s, tensors, target=target, name="f")
        c = kiln.nd.array(np.zeros((16, 16), "float32"))
        lib["f"](kiln.nd.array(a), kiln.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    config = task.config_space.get(7)
    with autotvm.ApplyConfig(config), target:  # called directly, it reads the context's config
        tuned = kiln.lower(*matmul(16, 16, 16, "float32"))["main"]
    with target:
        default = kiln.lower(*matmul(16, 16, 16, "float32"))["main"]
    same = kiln.lower(*task.instantiate(config))["main"]
    assert kiln.ir.structural_equal(tuned, same) and not kiln.ir.structural_equal(tuned, default)
    assert task.flop == 2 * 16 ** 3
    with pytest.raises(kiln.error.KilnError, match="by position"):
        matmul(16, 16, 16, dtype="float32")


def test_index_tuners_stay_in_their_range():
    task, _ = get_sample_task()
    task.config_space.multi_filter(lambda e: 32 <= e["tile_x"].size[-1] * e["tile_y"].size[-1] < 1024)
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=2), runner=DummyRunner())
    for make in (autotvm.tuner.GridSearchTuner, lambda t, range_idx: autotvm.tuner.RandomTuner(t, range_idx, seed=0)):
        tuner = make(task, range_idx=(8, 15))
        assert (tuner.begin_idx, tuner.end_idx, tuner.range_length) == (8, 16, 8)
        assert tuner.visited_max == task.config_space.subrange_length(8, 16) == 4
        tuner.tune(8, option)
        assert len(tuner.visited) == 4 and all(8 <= i < 16 and task.config_space.is_index_valid(i)
                                               for i in tuner.visited)
        assert not tuner.has_next()


def test_records_round_trip_and_load_in_every_form(tmp_path):
    records = get_sample_records(4)  # the i-th costs i + 1 seconds: the first is best
    for protocol in ("json", "pickle"):
        inp, res = decode(encode(*records[1], protocol=protocol), protocol=protocol)
        assert measure_str_key(inp) == measure_str_key(records[1][0]) and res.costs == records[1][1].costs
    path = tmp_path / "log.json"
    autotvm.record.save_to_file(path, records[2:])
    stream = io.StringIO()
    autotvm.callback.log_to_file(stream)(None, [r[0] for r in records[:2]], [r[1] for r in records[:2]])
    stream.seek(0)
    target, workload = records[0][0].target, records[0][0].task.workload
    best = str(records[0][0].config)
    batch = zip(*zip(*records, strict=True), strict=True)  # an iterable of pairs, not a list
    for form in ([path, stream], zip([batch], strict=True), records):
        stream.seek(0)
        assert str(autotvm.apply_history_best(form).query(target, workload)) == best
    assert str(autotvm.apply_history_best(path).query(target, workload)) == str(records[2][0].config)
