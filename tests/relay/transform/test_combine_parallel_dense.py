import pytest

from kiln import relay
from kiln.error import TypeInferenceError
from kiln.relay.testing import run_opt_pass

Combine = relay.transform.CombineParallelDense


def test_same_shape_dense_layers_become_one_batch_matmul(check_pass):
    x = relay.var("x", shape=(3, 4))
    w1, w2, w3 = (relay.var(f"w{i}", shape=(5, 4)) for i in range(3))
    odd = relay.var("odd", shape=(6, 4))
    b1, b2, b3 = (relay.var(f"b{i}", shape=(5,)) for i in range(3))
    before = relay.Function([x, w1, w2, w3, odd, b1, b2, b3], relay.Tuple(
        [relay.add(relay.nn.dense(x, w), b) for w, b in ((w1, b1), (w2, b2), (w3, b3))] + [relay.nn.dense(x, odd)]))
    y = relay.nn.batch_matmul(relay.stack([x, x, x], axis=0), relay.stack([w1, w2, w3], axis=0))
    y = relay.add(y, relay.stack([relay.expand_dims(b, 0) for b in (b1, b2, b3)], axis=0))
    parts = relay.split(y, 3)
    expected = relay.Function([x, w1, w2, w3, odd, b1, b2, b3], relay.Tuple(
        [relay.squeeze(parts[i], [0]) for i in range(3)] + [relay.nn.dense(x, odd)]))
    check_pass(before, Combine(), expected, opt_level=4)


def test_to_dense_joins_units_and_repeats_operands_that_broadcast(check_pass):
    x = relay.var("x", shape=(3, 4))
    w1, w2 = relay.var("w1", shape=(2, 4)), relay.var("w2", shape=(5, 4))
    b1, b2 = relay.var("b1", shape=(3, 1)), relay.var("b2", shape=(3, 5))
    s1, s2 = relay.var("s1", shape=()), relay.var("s2", shape=())
    before = relay.Function([x, w1, w2, b1, b2, s1, s2], relay.Tuple([
        relay.multiply(relay.add(relay.nn.dense(x, w1), b1), s1),
        relay.multiply(relay.add(relay.nn.dense(x, w2), b2), s2)]))
    y = relay.nn.dense(x, relay.concatenate([w1, w2], axis=0), units=7)
    y = relay.add(y, relay.concatenate([relay.repeat(b1, 2, 1), b2], axis=1))
    y = relay.multiply(y, relay.concatenate([relay.repeat(relay.expand_dims(s1, -1), 2, 0),
                                             relay.repeat(relay.expand_dims(s2, -1), 5, 0)], axis=0))
    expected = relay.Function([x, w1, w2, b1, b2, s1, s2], relay.Tuple([
        relay.strided_slice(y, [0, 0], [-1, 2], strides=[1, 1], slice_mode="size"),
        relay.strided_slice(y, [0, 2], [-1, 5], strides=[1, 1], slice_mode="size")]))
    check_pass(before, Combine(min_num_branches=2, to_batch=False), expected, opt_level=4)


def test_to_dense_finds_the_units_axis_after_expand_dims(check_pass):
    x = relay.var("x", shape=(2, 6))
    w1, w2 = relay.var("w1", shape=(4, 6)), relay.var("w2", shape=(3, 6))
    before = relay.Function([x, w1, w2], relay.Tuple([relay.expand_dims(relay.nn.dense(x, w), 0) for w in (w1, w2)]))
    after = check_pass(before, Combine(min_num_branches=2, to_batch=False), opt_level=4)
    assert [tuple(f.attrs.begin) for f in after.body.fields] == [(0, 0, 0), (0, 0, 4)]


def test_untyped_input_is_refused_with_a_clear_error():
    x = relay.var("x", shape=(3, 4))
    w = relay.var("w", shape=(5, 4))
    import kiln

    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.Tuple([relay.nn.dense(x, w), relay.nn.dense(x, w)])))
    with pytest.raises(TypeInferenceError, match="InferType"):
        Combine(min_num_branches=2)(mod)
    # through run_opt_pass InferType runs first and the layers combine
    assert run_opt_pass(mod["main"], Combine(min_num_branches=2)).body.fields[0].op.name == "squeeze"
