from kiln import relay

Combine = relay.transform.CombineParallelBatchMatmul


def _slice(y, start, size):
    return relay.strided_slice(y, begin=[0, 0, start], end=[-1, -1, size], strides=[1, 1, 1], slice_mode="size")


def test_batch_matmuls_of_one_left_operand_and_their_bias_adds_combine(check_pass):
    x = relay.var("x", shape=(2, 3, 4))
    ws = [relay.var(f"w{i}", shape=(2, n, 4)) for i, n in enumerate((5, 2, 3))]
    bs = [relay.var(f"b{i}", shape=(n,)) for i, n in enumerate((5, 2, 3))]
    before = relay.Function([x, *ws, *bs], relay.Tuple([relay.add(relay.nn.batch_matmul(x, w), b)
                                                        for w, b in zip(ws, bs, strict=True)]))
    y = relay.add(relay.nn.batch_matmul(x, relay.concatenate(ws, axis=1)), relay.concatenate(bs, axis=-1))
    expected = relay.Function([x, *ws, *bs], relay.Tuple([_slice(y, 0, 5), _slice(y, 5, 2), _slice(y, 7, 3)]))
    check_pass(before, Combine(min_num_branches=2), expected, opt_level=4)


def test_only_the_legacy_transposed_form_combines(check_pass):
    x = relay.var("x", shape=(2, 3, 4))
    w1, w2 = relay.var("w1", shape=(2, 4, 5)), relay.var("w2", shape=(2, 4, 5))
    before = relay.Function([x, w1, w2], relay.Tuple([relay.nn.batch_matmul(x, w, transpose_b=False)
                                                      for w in (w1, w2)]))
    after = check_pass(before, Combine(min_num_branches=2), opt_level=4)
    assert [f.op.name for f in after.body.fields] == ["nn.batch_matmul"] * 2
