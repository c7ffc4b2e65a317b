from kiln import relay

Combine = relay.transform.CombineParallelConv2D


def _slice(y, begin, size):
    ndim = len(begin)
    return relay.strided_slice(y, begin=begin, end=[-1] * (ndim - 1) + [size], strides=[1] * ndim, slice_mode="size")


def test_convolutions_of_one_input_become_one_and_the_odd_one_stays(check_pass):
    x = relay.var("x", shape=(1, 3, 10, 10))
    w1, w2, w3 = (relay.var(f"w{i}", shape=s) for i, s in enumerate([(4, 3, 1, 1), (6, 3, 1, 1), (5, 3, 3, 3)], 1))
    before = relay.Function([x, w1, w2, w3], relay.Tuple([relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2),
                                                          relay.nn.conv2d(x, w3)]))
    y = relay.nn.conv2d(x, relay.concatenate([w1, w2], axis=0), channels=10)
    expected = relay.Function([x, w1, w2, w3], relay.Tuple([_slice(y, [0, 0], 4), _slice(y, [0, 4], 6),
                                                            relay.nn.conv2d(x, w3)]))
    check_pass(before, Combine(min_num_branches=2), expected, opt_level=4)


def test_following_ops_alike_in_every_branch_are_combined_until_they_differ(check_pass):
    x = relay.var("x", shape=(2, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(3, 4, 1, 1)), relay.var("w2", shape=(5, 4, 1, 1))
    s1, s2 = relay.var("s1", shape=(3, 1, 1)), relay.var("s2", shape=(5, 1, 1))
    b = relay.var("b", shape=(5, 1, 1))
    y1 = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w1), s1))
    y2 = relay.add(relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w2), s2)), b)
    before = relay.Function([x, w1, w2, s1, s2, b], relay.Tuple([y1, y2]))
    y = relay.nn.conv2d(x, relay.concatenate([w1, w2], axis=0), channels=8)
    y = relay.nn.relu(relay.multiply(y, relay.concatenate([s1, s2], axis=0)))
    expected = relay.Function([x, w1, w2, s1, s2, b], relay.Tuple([
        _slice(y, [0, 0], 3), relay.add(_slice(y, [0, 3], 5), b)]))
    check_pass(before, Combine(min_num_branches=2), expected, opt_level=4)


def test_nhwc_slices_the_last_axis_and_scalar_operands_stop_the_combination(check_pass):
    x = relay.var("x", shape=(1, 5, 5, 2))
    w1, w2 = relay.var("w1", shape=(1, 1, 2, 3)), relay.var("w2", shape=(1, 1, 2, 4))
    s = relay.var("s", shape=(1,))
    conv = {"data_layout": "NHWC", "kernel_layout": "HWIO"}
    before = relay.Function([x, w1, w2, s], relay.Tuple([relay.multiply(relay.nn.conv2d(x, w1, **conv), s),
                                                         relay.multiply(relay.nn.conv2d(x, w2, **conv), s)]))
    y = relay.nn.conv2d(x, relay.concatenate([w1, w2], axis=3), channels=7, **conv)
    expected = relay.Function([x, w1, w2, s], relay.Tuple([relay.multiply(_slice(y, [0, 0, 0, 0], 3), s),
                                                           relay.multiply(_slice(y, [0, 0, 0, 3], 4), s)]))
    check_pass(before, Combine(min_num_branches=2), expected, opt_level=4)


def test_too_few_branches_or_grouped_convolutions_are_left_alone(check_pass):
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    wg = relay.var("wg", shape=(4, 2, 3, 3))
    before = relay.Function([x, w, wg], relay.Tuple([relay.nn.conv2d(x, w), relay.nn.conv2d(x, w),
                                                     relay.nn.conv2d(x, wg, groups=2),
                                                     relay.nn.conv2d(x, wg, groups=2)]))
    after = check_pass(before, Combine(), opt_level=4)  # three branches needed by default; grouped ones never combine
    assert all(field.op.name == "nn.conv2d" for field in after.body.fields)


def test_stacked_blocks_each_combine(check_pass):
    x = relay.var("x", shape=(1, 4, 5, 5))
    w = relay.var("w", shape=(2, 4, 1, 1))
    y = x
    for _ in range(3):
        y = relay.concatenate([relay.nn.conv2d(y, w), relay.nn.conv2d(y, w)], axis=1)
    after = check_pass(relay.Function([x, w], y), Combine(min_num_branches=2), opt_level=4)
    convs = []
    relay.analysis.post_order_visit(after, lambda e: convs.append(e) if getattr(e, "op", None) is not None
                                    and getattr(e.op, "name", "") == "nn.conv2d" else None)
    assert len(convs) == 3 and all(c.attrs.channels == 4 for c in convs)
