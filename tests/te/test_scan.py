"""te.scan (kiln/te/scan.py) and the graph queries over it (kiln/te/graph.py)."""

import pytest

from kiln import te, tir
from kiln.error import TIRError


def _cumsum():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    state = te.placeholder((m, n), name="state")
    init = te.compute((1, n), lambda _, i: X[0, i], name="init")
    update = te.compute((m, n), lambda t, i: state[t - 1, i] + X[t, i], name="update")
    return X, state, init, update, te.scan(init, update, state, inputs=[X], name="cumsum")


def test_scan_op_axes_outputs_and_inputs():
    X, state, init, update, res = _cumsum()
    op = res.op
    assert isinstance(op, te.ScanOp) and res.shape[0] is state.shape[0] and res.dtype == "float32"
    assert op.scan_axis.iter_type == tir.IterVar.Ordered and op.scan_axis.var.name_hint == "cumsum.idx"
    assert int(op.scan_axis.dom.min) == 1
    assert [iv.var.name_hint for iv in op.spatial_axis_] == ["cumsum.out0.i1"]
    assert op.input_tensors == [init, update] and op.root_iter_vars[0] is op.scan_axis


def test_scan_checks_shapes_and_counts():
    n = te.var("n")
    state = te.placeholder((n, 4), name="state")
    init = te.compute((1, 4), lambda _, i: 0.0, name="init")
    bad = te.compute((n, 5), lambda t, i: state[t - 1, i % 4], name="bad")
    with pytest.raises(TIRError, match="dimension 1"):
        te.scan(init, bad, state)
    with pytest.raises(TIRError, match="as many tensors"):
        te.scan([init, init], [bad], [state])


def test_scan_body_and_schedule_attachment():
    X, state, init, update, res = _cumsum()
    assert te.schedule.ScanGetBody(res.op) == [update.op]
    s = te.create_schedule(res.op)
    group = s[update].group
    assert group.attach_type == "scan_update" and group.attach_stage is s[res] and s[update].attach_type == "root"
    path = te.schedule.CreateAttachPath(s)
    assert list(path[update.op]) == list(s[res].leaf_iter_vars)[::-1]
    assert list(path[init.op]) == []


def test_fix_point_exact_and_transposed_dependences():
    m, n = te.var("m"), te.var("n")
    state = te.placeholder((m, n, n), name="state")
    init = te.compute((1, n, n), lambda _, i, j: 0.0, name="init")
    same = te.compute((m, n, n), lambda t, i, j: state[t - 1, i, j] * 2.0, name="same")
    fx = te.schedule.ScanFixPointAnalysis(te.scan(init, same, state).op)
    assert [int(v) for v in fx.values()] == [1, 1]
    swapped = te.compute((m, n, n), lambda t, i, j: state[t - 1, j, i] * 2.0, name="swapped")
    op = te.scan(init, swapped, state).op
    fx = te.schedule.ScanFixPointAnalysis(op)
    assert [int(fx[iv]) for iv in op.spatial_axis_] == [0, 0]


def test_read_graph_and_post_dfs_order():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((4,), lambda i: B[i] * A[i], name="C")
    g = te.schedule.CreateReadGraph([C.op])
    assert list(g[C.op]) == [B, A] and list(g[B.op]) == [A] and list(g[A.op]) == []
    assert te.schedule.PostDFSOrder([C.op], g) == [A.op, B.op, C.op]


def test_create_prim_func_refuses_a_scan_with_a_type_error():
    X, _, _, _, res = _cumsum()
    with pytest.raises(TypeError, match="Unsupported Operation: ScanOp"):
        te.create_prim_func([X, res])


def test_cumulative_sum_scan_runs():
    import numpy as np

    import kiln

    X, state, init, update, res = _cumsum()
    s = te.create_schedule(res.op)
    bounds = te.schedule.InferBound(s)
    assert int(bounds[res.op.scan_axis].min) == 1
    f = kiln.build(s, [X, res])
    x = np.random.default_rng(0).random((6, 5), dtype="float32")
    out = kiln.nd.array(np.zeros((6, 5), "float32"))
    f(kiln.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=0), rtol=1e-5)


def test_two_state_scan_with_a_body_stage_and_inlining_runs():
    import numpy as np

    import kiln

    m, n = 5, 4
    X = te.placeholder((m, n), name="X")
    s1 = te.placeholder((m, n), name="s1")
    s2 = te.placeholder((m, n), name="s2")
    i1 = te.compute((1, n), lambda _, i: X[0, i], name="i1")
    i2 = te.compute((1, n), lambda _, i: X[0, i] * 0.0 + 1.0, name="i2")
    mix = te.compute((m, n), lambda t, i: s1[t - 1, i] + s2[t - 1, (i + 1) % n], name="mix")
    u1 = te.compute((m, n), lambda t, i: mix[t, i] + X[t, i], name="u1")
    u2 = te.compute((m, n), lambda t, i: s2[t - 1, i] * 2.0, name="u2")
    r1, r2 = te.scan([i1, i2], [u1, u2], [s1, s2], inputs=[X], name="rec")
    s = te.create_schedule(r1.op)
    s[mix].compute_inline()
    f = kiln.build(s, [X, r1, r2])
    x = np.random.default_rng(1).random((m, n), dtype="float32")
    o1, o2 = kiln.nd.array(np.zeros((m, n), "float32")), kiln.nd.array(np.zeros((m, n), "float32"))
    f(kiln.nd.array(x), o1, o2)
    e1, e2 = np.zeros((m, n), "float32"), np.zeros((m, n), "float32")
    e1[0], e2[0] = x[0], 1.0
    for t in range(1, m):
        e1[t] = e1[t - 1] + np.roll(e2[t - 1], -1) + x[t]
        e2[t] = e2[t - 1] * 2
    np.testing.assert_allclose(o1.numpy(), e1, rtol=1e-5)
    np.testing.assert_allclose(o2.numpy(), e2, rtol=1e-5)
