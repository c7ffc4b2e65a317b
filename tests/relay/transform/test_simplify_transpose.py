import pytest

from kiln import relay

SE = relay.transform.SimplifyExpr


def _names(func):
    names = []
    relay.analysis.post_order_visit(func, lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    return names


def test_transpose_and_layout_transform_compose_into_one_transpose(check_pass):
    x = relay.var("x", shape=(2, 3, 4, 5))
    y = relay.layout_transform(relay.transpose(x, (0, 2, 3, 1)), "NHWC", "HWCN")
    after = check_pass(relay.Function([x], relay.transpose(y, (3, 0, 1, 2))), SE())
    assert _names(after) == ["transpose"] and tuple(after.body.attrs.axes) == (0, 2, 3, 1)


def test_permutations_that_cancel_disappear(check_pass):
    x = relay.var("x", shape=(2, 3, 4, 5))
    y = relay.transpose(relay.transpose(relay.nn.relu(x), (0, 2, 3, 1)), (1, 2, 3, 0))
    after = check_pass(relay.Function([x], relay.transpose(y, (3, 2, 0, 1))), SE())
    assert _names(after) == ["nn.relu"]
    same = relay.layout_transform(relay.transpose(x, (0, 1, 2, 3)), "NCHW", "NCHW")
    assert _names(check_pass(relay.Function([x], same), SE())) == []


def test_a_permutation_joins_a_rank_changing_layout_transform(check_pass):
    x = relay.var("x", shape=(1, 6, 6, 8))
    y = relay.nn.relu(relay.layout_transform(relay.transpose(x, (0, 3, 1, 2)), "NCHW", "NCHW4c"))
    y = relay.transpose(relay.layout_transform(y, "NCHW4c", "NCHW"), (0, 2, 3, 1))
    after = check_pass(relay.Function([x], y), SE())
    transforms = [(c.attrs.src_layout, c.attrs.dst_layout) for c in (after.body.args[0].args[0], after.body)]
    assert transforms == [("NHWC", "NCHW4c"), ("NCHW4c", "NHWC")]


@pytest.mark.parametrize("layouts, expected", [
    (("NCHW4c", "NCHW", "NCHW8c"), [("NCHW4c", "NCHW8c")]),
    (("NCHW", "NCHW4c", "NCHW"), []),
    (("NCHW4c", "NCHW8c", "NCHW4c"), []),  # blocked layouts, not a permutation: only the exact inverse folds
])
def test_consecutive_layout_transforms(check_pass, layouts, expected):
    first = {"NCHW4c": (1, 2, 4, 4, 4), "NCHW": (1, 8, 4, 4)}[layouts[0]]
    x = relay.var("x", shape=first)
    y = relay.layout_transform(relay.layout_transform(x, layouts[0], layouts[1]), layouts[1], layouts[2])
    after = check_pass(relay.Function([x], relay.nn.relu(y)), SE())
    found = []
    relay.analysis.post_order_visit(after, lambda e: found.append((e.attrs.src_layout, e.attrs.dst_layout))
                                    if isinstance(e, relay.Call) and e.op.name == "layout_transform" else None)
    assert found == expected


def test_a_blocked_layout_change_then_a_transpose_is_not_taken_for_a_permutation(check_pass):
    x = relay.var("x", shape=(1, 2, 4, 4, 4))
    y = relay.transpose(relay.layout_transform(x, "NCHW4c", "NCHW2c"), (0, 1, 3, 2, 4))
    after = check_pass(relay.Function([x], y), SE())
    assert _names(after) == ["layout_transform", "transpose"]
