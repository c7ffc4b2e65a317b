"""Tasks and templates (kiln/autotvm/task/task.py, dispatcher.py): the default config is today's hand-chosen
schedule, exactly; other configs change it; workloads key the configs a build uses."""

import time
import warnings

import pytest

import kiln
from kiln import autotvm
from kiln.autotvm.measure import MeasureInput, MeasureResult
from kiln.autotvm.task import FallbackConfigEntity, UnknownTaskError
from kiln.ir import structural_equal
from kiln.relay.backend.lower_te import lower_te
from kiln.relay.optimize import optimize
from kiln.target import Target
from kiln.topi import x86

from ..conftest import conv_model, grouped_model, mixed_model, pooled_model

HAND_CHOSEN = {  # each template's schedule as topi calls it without any config
    "conv2d_NCHWc.x86": x86.schedule_conv2d_NCHWc,
    "group_conv2d_NCHWc.x86": x86.schedule_conv2d_NCHWc,
    "batch_matmul_pack.x86": x86.schedule_gemm,
    "depthwise_conv2d_NCHWc.x86": x86.schedule_conv2d_direct,
    "dense_pack.x86": x86.schedule_gemm,
    "dense_nopack.x86": x86.schedule_dense_nopack,
    "pool2d.x86": lambda outs, target: x86.schedule_pool(outs, target=target),
    "global_pool.x86": lambda outs, target: x86.schedule_pool(outs, target=target),
    "reduce.x86": x86.schedule_reduce,
}


def lowered(task, config=None, schedule=None):
    if schedule is None:
        s, tensors = task.instantiate(config)
    else:  # the hand-chosen schedule on the template's compute
        _, tensors = task.instantiate(FallbackConfigEntity())
        outs = [t for t in tensors if hasattr(t.op, "body")]
        s = schedule(outs, task.target)
    with task.target:
        return kiln.lower(s, tensors)


@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=haswell"])
@pytest.mark.parametrize("model,count", [(mixed_model, 4), (grouped_model, 2), (pooled_model, 7)],
                         ids=["mixed", "grouped", "pooled"])
def test_default_config_is_the_hand_chosen_schedule(target, model, count):
    mod, params = model()
    tasks = autotvm.task.extract_from_program(mod, params, target=target)
    assert len(tasks) == count
    for task in tasks:
        today = lowered(task, schedule=HAND_CHOSEN[task.name])
        default = lowered(task, task.config_space.get(task.default_index))
        assert structural_equal(today["main"], default["main"]), task.name
        others = [i for i in task.config_space.valid_indices() if i != task.default_index]
        if others:  # another point of the space is another schedule
            changed = lowered(task, task.config_space.get(others[0]))
            assert not structural_equal(today["main"], changed["main"]), task.name


def _kernels(mod, params, target="llvm"):
    t = Target(target)
    with kiln.transform.PassContext(opt_level=3), t:
        optimized, _ = optimize(mod, t, params)
        low = lower_te(optimized, target=t)
    return {gv.name_hint: f for gv, f in low.functions.items() if gv.name_hint != "main"}


def _record(task, index, cost=1e-5, target=None):
    config = task.config_space.get(index)
    return MeasureInput(target or task.target, task, config), MeasureResult((cost,), 0, 0.1, time.time())


def test_apply_history_best_uses_the_record_and_falls_back_without_one():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    other = next(i for i in task.config_space.valid_indices() if i != task.default_index)
    untuned = _kernels(mod, params)
    with autotvm.apply_history_best([_record(task, other), _record(task, task.default_index, cost=2e-5)]):
        tuned = _kernels(mod, params)
    with autotvm.apply_history_best([]):
        no_record = _kernels(mod, params)
    (name,) = [n for n in untuned if "conv2d" in n]
    assert not structural_equal(untuned[name], tuned[name])  # the lowering cache did not hand back the default
    assert structural_equal(untuned[name], no_record[name])
    assert structural_equal(untuned[name], _kernels(mod, params)[name])


def test_records_of_another_target_are_ignored_with_a_warning():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    other = next(i for i in task.config_space.valid_indices() if i != task.default_index)
    foreign = Target("llvm -mcpu=znver2") if Target("llvm").cpu_name != "znver2" else Target("llvm -mcpu=haswell")
    context = autotvm.apply_history_best([_record(task, other, target=foreign)])
    with warnings.catch_warnings(record=True) as caught, context:
        warnings.simplefilter("always")
        cfg = autotvm.DispatchContext.current.query(task.target, task.workload)
    assert cfg.is_fallback
    assert any("ignoring the tuning records for target" in str(w.message) and foreign.cpu_name in str(w.message)
               for w in caught)


def test_unknown_template_is_an_error_naming_it():
    with pytest.raises(UnknownTaskError, match="no schedule template is registered as 'conv3d.x86'"):
        autotvm.task.create("conv3d.x86", (), "llvm")


def test_apply_config_pins_every_workload():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    config = next(iter(task.config_space))
    with autotvm.ApplyConfig(config) as ctx:
        assert autotvm.DispatchContext.current.query(task.target, task.workload) is config
    assert ctx.workload == task.workload
    assert autotvm.DispatchContext.current.query(task.target, task.workload).is_fallback
