from kiln import relay

Canon = relay.transform.CanonicalizeOps


def test_bias_add_becomes_broadcast_add(check_pass):
    x, b = relay.var("x", shape=(1, 8, 4, 4)), relay.var("b", shape=(8,))
    check_pass(relay.Function([x, b], relay.nn.bias_add(x, b)), Canon(), """
        def @main(%x: Tensor[(1, 8, 4, 4), float32], %b: Tensor[(8), float32]) {
          %0 = expand_dims(%b, axis=1, num_newaxis=2);
          add(%x, %0)
        }
    """)


def test_last_axis_needs_no_expand(check_pass):
    x, b = relay.var("x", shape=(2, 5)), relay.var("b", shape=(5,))
    check_pass(relay.Function([x, b], relay.nn.bias_add(x, b, axis=-1)), Canon(), """
        def @main(%x: Tensor[(2, 5), float32], %b: Tensor[(5), float32]) {
          add(%x, %b)
        }
    """)
