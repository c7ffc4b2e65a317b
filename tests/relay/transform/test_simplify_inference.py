import numpy as np

import kiln
from kiln import relay

SI = relay.transform.SimplifyInference


def test_batch_norm_unpacked(check_pass):
    x = relay.var("x", shape=(1, 3, 4, 4))
    g, b, m, v = (relay.var(n, shape=(3,)) for n in ("g", "b", "m", "v"))
    before = relay.Function([x, g, b, m, v], relay.nn.batch_norm(x, g, b, m, relay.abs(v))[0])
    check_pass(before, SI(), """
        def @main(%x: Tensor[(1, 3, 4, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32],
                  %m: Tensor[(3), float32], %v: Tensor[(3), float32]) {
          %0 = abs(%v);
          %1 = add(%0, 1e-05f);
          %2 = sqrt(%1);
          %3 = divide(1f, %2);
          %4 = multiply(%3, %g);
          %5 = expand_dims(%4, axis=1, num_newaxis=2);
          %6 = negative(%m);
          %7 = multiply(%6, %4);
          %8 = add(%7, %b);
          %9 = multiply(%x, %5);
          %10 = expand_dims(%8, axis=1, num_newaxis=2);
          add(%9, %10)
        }
    """, rtol=1e-4)


def test_batch_norm_of_parameters_sized_at_run_time_keeps_its_static_type(check_pass):
    """Parameters typed (?) broadcast against one channel would make the result's channel dynamic, while the
    function still says 1 (fuzz seed 71005): the unpacked scale and shift are reshaped to the channels."""
    x = relay.var("x", shape=(2, 1, 3))
    g, b, m, v = (relay.var(n, shape=(relay.Any(),)) for n in ("g", "b", "m", "v"))
    func = relay.Function([x, g, b, m, v], relay.nn.batch_norm(x, g, b, m, relay.abs(v))[0])
    func = relay.infer_type(func)
    after = relay.transform.InferType()(SI()(kiln.IRModule.from_expr(func)))["main"]
    assert after.ret_type == relay.TensorType((2, 1, 3), "float32")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in [(2, 1, 3), (1,), (1,), (1,), (1,)]]
    for f in (func, after):
        mod = kiln.IRModule.from_expr(f)
        got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args).numpy()
        want = (args[0] - args[3]) / np.sqrt(np.abs(args[4]) + 1e-5) * args[1] + args[2]
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_dropout_removed_and_layer_norm_expanded(check_pass):
    x = relay.var("x", shape=(2, 5))
    g, b = relay.var("g", shape=(5,)), relay.var("b", shape=(5,))
    before = relay.Function([x, g, b], relay.nn.layer_norm(relay.nn.dropout(x, 0.4), g, b))
    after = check_pass(before, SI(), rtol=1e-4, atol=1e-5)
    ops = []
    relay.post_order_visit(after, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert "nn.dropout" not in ops and "nn.layer_norm" not in ops and "mean" in ops


def test_nhwc_batch_norm_axis(check_pass):
    x = relay.var("x", shape=(1, 4, 4, 3))
    params = [relay.const(np.abs(np.random.default_rng(i).standard_normal(3)).astype("float32") + 0.1)
              for i in range(4)]
    before = relay.Function([x], relay.nn.batch_norm(x, *params, axis=3)[0])
    check_pass(before, SI(), rtol=1e-4, atol=1e-5)


def test_resnet_and_transformer_blocks(check_pass):
    from kiln.relay.testing import resnet, transformer

    net = resnet.get_net(num_layers=8, image_shape=(3, 16, 16), num_classes=4)
    check_pass(net, SI(), rtol=1e-3, atol=1e-3)
    check_pass(transformer.get_net(seq=4, hidden=16, heads=2, ffn=32), SI(), rtol=1e-3, atol=1e-4)
