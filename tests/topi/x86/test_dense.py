"""The knobs of the matrix-product templates (kiln/topi/x86/dense.py, ``dense_pack.x86`` and
``batch_matmul_pack.x86``): every 2-D register tile (rows x vector columns), reduction unrolling and panel order
computes the product numpy does (with row blocks in groups sweeping the panels together), and the tiles stay within
the register budget."""

import numpy as np

import kiln
from kiln import autotvm, relay
from kiln.target import Target

TARGET = "llvm"


def _sample(space):
    """Few configs between them showing every value of every knob (the largest tiles first)."""
    picked, seen = [], set()
    for config in sorted(space, key=lambda c: -c["tile_y"].val * c["tile_x"].size[-1]):
        values = {(name, repr(config[name])) for name in space.knob_names()} - seen
        if values:
            picked.append(config)
            seen |= values
    return picked


def _check_task(task, arrays, ref):
    budget = Target(TARGET).cpu_info.vector_registers * 3 // 4
    lanes = Target(TARGET).vector_lanes("float32")
    default = task.config_space.get(task.default_index)
    for config in task.config_space:
        tile = (config["tile_y"].val, config["tile_x"].size[-1])
        assert tile[0] * max(1, tile[1] // lanes) <= budget or tile == (default["tile_y"].val,
                                                                          default["tile_x"].size[-1])
    for config in _sample(task.config_space):
        s, tensors = task.instantiate(config)
        lib = kiln.build(s, tensors, target=TARGET, name="f")
        out = kiln.nd.array(np.zeros(ref.shape, "float32"))
        lib["f"](*[kiln.nd.array(a) for a in arrays], out)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4, err_msg=str(config))


def test_packed_dense_tiles_match_numpy():
    x = relay.var("x", shape=(24, 64))
    w = relay.var("w", shape=(64, 64))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((64, 64)).astype("float32")
    (task,) = autotvm.task.extract_from_program(mod, {"w": w_np}, target=TARGET)
    assert task.name == "dense_pack.x86"
    assert {"tile_y", "tile_x", "tile_k", "panel_outer", "row_group"} <= set(task.config_space.knob_names())
    assert len(task.config_space.space_map["tile_x"]) == 2  # a panel of two vectors: tiles of one or both
    x_np = rng.standard_normal((24, 64)).astype("float32")
    _, packed, units, _ = task.args
    blocks, _, bn = packed[1]
    padded = np.zeros((blocks * bn, 64), "float32")
    padded[:units] = w_np
    w_packed = padded.reshape(blocks, bn, 64).transpose(0, 2, 1).copy()
    _check_task(task, [x_np, w_packed], x_np @ w_np.T)


def test_batch_matmul_tiles_match_numpy():
    args = (("TENSOR", (2, 12, 32), "float32"), ("TENSOR", (2, 40, 32), "float32"), False, True, "float32")
    task = autotvm.task.create("batch_matmul_pack.x86", args, TARGET)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 12, 32)).astype("float32"), rng.standard_normal((2, 40, 32)).astype("float32")
    _check_task(task, [a, b], a @ b.transpose(0, 2, 1))
