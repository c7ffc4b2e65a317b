"""SPEC section 10 as a user's script writes it: TVM's x86 tuning tutorial (``tune_relay_x86.py``) step by step, with
kiln's names and SPEC's defaults, on a model of two convolutions and a dense layer; the rebuilt model must compute
what the reference interpreter computes."""

import numpy as np

import kiln
from kiln import autotvm, relay
from kiln.contrib import graph_executor


def two_conv_model():
    """conv 3x3 (8 -> 16) + relu, conv 1x1 (16 -> 16), flatten, dense 16*8*8 -> 10: ``(mod, params)``."""
    rng = np.random.default_rng(7)
    x = relay.var("x", shape=(1, 8, 8, 8))
    w1, w2, w3 = (relay.var(n, shape=s) for n, s in (("w1", (16, 8, 3, 3)), ("w2", (16, 16, 1, 1)), ("w3", (10, 1024))))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1), channels=16, kernel_size=(3, 3)))
    y = relay.nn.conv2d(y, w2, channels=16, kernel_size=(1, 1))
    y = relay.nn.dense(relay.nn.batch_flatten(y), w3)
    params = {name: rng.uniform(-1, 1, shape).astype("float32")
              for name, shape in (("w1", (16, 8, 3, 3)), ("w2", (16, 16, 1, 1)), ("w3", (10, 1024)))}
    return kiln.IRModule.from_expr(relay.Function([x, w1, w2, w3], y)), params


def test_the_tuning_tutorial_runs_as_written(tmp_path, capsys):
    mod, params = two_conv_model()
    log_file, best_file = str(tmp_path / "tuning.log"), str(tmp_path / "best.log")
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    assert {t.name for t in tasks} >= {"conv2d_NCHWc.x86"} and all(t.flop > 0 and len(t.config_space) > 1 for t in tasks)
    measure_option = autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=None, timeout=10),
                                            runner=autotvm.LocalRunner(number=4, repeat=3, timeout=10, min_repeat_ms=0))
    for i, task in enumerate(tasks):
        prefix = f"[Task {i + 1:2d}/{len(tasks):2d}] "
        tuner = autotvm.tuner.RandomTuner(task) if i % 2 else autotvm.tuner.GridSearchTuner(task)
        n_trial = min(3, len(task.config_space))
        tuner.tune(n_trial=n_trial, early_stopping=None, measure_option=measure_option,
                   callbacks=[autotvm.callback.progress_bar(n_trial, prefix=prefix),
                              autotvm.callback.log_to_file(log_file)])
        assert tuner.trials == n_trial
    assert "[Task  1/" in capsys.readouterr().err  # the progress bar drew its prefix

    records = list(autotvm.record.load_from_file(log_file))
    assert len(records) == sum(min(3, len(t.config_space)) for t in tasks)
    assert all(result.error_no == 0 and result.costs for _, result in records)
    assert autotvm.record.pick_best(log_file, best_file) == len(tasks)  # one best record per task

    with autotvm.apply_history_best(best_file):
        with kiln.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    x = np.random.default_rng(8).uniform(-1, 1, (1, 8, 8, 8)).astype("float32")
    module.set_input("x", x)
    module.run()
    expected = relay.create_executor("debug", mod=mod).evaluate()(x, *(params[n] for n in ("w1", "w2", "w3")))
    np.testing.assert_allclose(module.get_output(0).numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
