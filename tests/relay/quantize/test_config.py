"""relay.quantize configuration: qconfig defaults and scopes, validation, QAnnotateKind, the annotation context."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.relay.quantize import QAnnotateKind, current_qconfig, kind2str, qconfig, quantize_context


def test_defaults_are_tvms_and_scopes_nest():
    cfg = current_qconfig()
    assert (cfg.nbit_input, cfg.dtype_activation, cfg.global_scale, cfg.skip_conv_layers) == (8, "int32", 8.0, (0,))
    with qconfig(global_scale=4.0, skip_conv_layers=[]) as outer:
        assert current_qconfig() is outer and outer.skip_conv_layers == ()
        with qconfig(nbit_input=4):
            assert current_qconfig().nbit_input == 4 and current_qconfig().global_scale == 8.0
        assert current_qconfig() is outer
    assert current_qconfig().global_scale == 8.0
    assert cfg.get_nbit_by_kind(QAnnotateKind.WEIGHT) == 8 and cfg.get_dtype_by_kind(QAnnotateKind.ACTIVATION) == "int32"


def test_validation_and_kinds():
    with pytest.warns(UserWarning, match="unknown option global_scal ignored"):  # TVM ignores it; kiln says so
        cfg = qconfig(global_scal=1.0)
    assert cfg.global_scale == 8.0
    with pytest.raises(KilnError, match="calibrate_mode must be one of"):
        qconfig(calibrate_mode="magic")
    assert [kind2str(k) for k in QAnnotateKind] == ["identity", "input", "weight", "activation"]
    with pytest.raises(KilnError, match="unknown QAnnotateKind"):
        kind2str(9)


def test_guard_and_skipped_convolutions():
    x = relay.var("x", shape=(1, 1, 4, 4))
    conv = relay.nn.conv2d(x, relay.var("w", shape=(1, 1, 1, 1)))
    relu = relay.nn.relu(x)
    assert qconfig(debug_enabled_ops=["nn.relu"]).guard(relu) and not qconfig(debug_enabled_ops=["add"]).guard(relu)
    with qconfig(skip_conv_layers=[0, 2]), quantize_context() as ctx:
        assert [ctx.check_to_skip(conv) for _ in range(4)] == [True, False, True, False]
        assert not ctx.check_to_skip(relu)
        ctx.stop_quantize()
        assert ctx.check_to_skip(relu)
