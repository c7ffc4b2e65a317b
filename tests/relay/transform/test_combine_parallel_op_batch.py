from kiln import relay

Combine = relay.transform.CombineParallelOpBatch


def test_parallel_adds_batch_into_one_with_their_followers(check_pass):
    x = relay.var("x", shape=(2, 3))
    ys = [relay.var(f"y{i}", shape=(2, 3)) for i in range(3)]
    before = relay.Function([x, *ys], relay.Tuple([relay.nn.relu(relay.add(x, y)) for y in ys]))
    y = relay.nn.relu(relay.add(relay.stack([x, x, x], axis=0), relay.stack(ys, axis=0)))
    parts = relay.split(y, 3)
    expected = relay.Function([x, *ys], relay.Tuple([relay.squeeze(parts[i], [0]) for i in range(3)]))
    check_pass(before, Combine("add", "add", 3), expected, opt_level=4)
