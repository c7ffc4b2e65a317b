import pytest

from kiln import relay


def typed(expr):
    return relay.infer_type(expr).checked_type


@pytest.mark.parametrize("axis,keepdims,exclude,out", [
    (None, False, False, ()),
    (1, False, False, (2, 4)),
    ((0, 2), True, False, (1, 3, 1)),
    (1, False, True, (3,)),
    (-1, False, False, (2, 3)),
    ((1,), True, True, (1, 3, 1)),
])
def test_reduce_shapes(axis, keepdims, exclude, out):
    x = relay.var("x", shape=(2, 3, 4))
    for build in (relay.sum, relay.mean, relay.max, relay.min):
        t = typed(build(x, axis, keepdims, exclude))
        assert t.shape == out and t.dtype == "float32"


def test_argmax_is_int32():
    x = relay.var("x", shape=(2, 3))
    t = typed(relay.argmax(x, axis=1))
    assert t.shape == (2,) and t.dtype == "int32"


def test_bad_axis():
    from kiln.error import TypeInferenceError

    with pytest.raises(TypeInferenceError, match="axis 3"):
        typed(relay.sum(relay.var("x", shape=(2, 3)), axis=3))
