"""Every Relay pass preserves results on a ResNet-style network and a transformer encoder block (reference
interpreter, random inputs), alone and after the passes that normally precede it."""

import pytest

import kiln
from kiln import relay
from kiln.relay.testing import assert_same_results, resnet, run_opt_pass, transformer

PASSES = [
    "FoldConstant", "DeadCodeElimination", "EliminateCommonSubexpr", "SimplifyInference", "SimplifyExpr",
    "CanonicalizeOps", "ForwardFoldScaleAxis", "BackwardFoldScaleAxis", "FoldScaleAxis", "AlterOpLayout",
    "FuseOps", "DefuseOps", "ToANormalForm", "ToGraphNormalForm", "LambdaLift", "Inline", "DivToMul", "CanonicalizeCast",
]


def _resnet_block():
    mod, params = resnet.get_workload(num_layers=8, image_shape=(3, 16, 16), num_classes=4, seed=1)
    # bind the weights so scale folding and constant folding have constants to work on
    return relay.bind_params_by_name(mod["main"], params)


def _transformer_block():
    mod, params = transformer.get_workload(seq=4, hidden=16, heads=2, ffn=32, seed=1)
    return relay.bind_params_by_name(mod["main"], params)


@pytest.mark.parametrize("model", [_resnet_block, _transformer_block], ids=["resnet", "transformer"])
@pytest.mark.parametrize("name", PASSES)
def test_pass_preserves_model_results(name, model):
    func = model()
    alone = run_opt_pass(func, kiln.transform.get_pass(name))
    assert_same_results(func, alone, rtol=2e-3, atol=2e-3, trials=1)
    prepared = [kiln.transform.get_pass(n) for n in ("SimplifyInference", "FoldConstant", "ToANormalForm")
                if n != name]
    after = run_opt_pass(func, prepared + [kiln.transform.get_pass(name)])
    assert_same_results(func, after, rtol=2e-3, atol=2e-3, trials=1)


def test_convert_layout_on_models():
    for model in (_resnet_block, _transformer_block):
        func = model()
        after = run_opt_pass(func, relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}))
        assert_same_results(func, after, rtol=2e-3, atol=2e-3, trials=1)
