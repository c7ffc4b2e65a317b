"""kiln.ir.diagnostics: parse errors go through the current renderer before they are raised; SpanCheck and
AnnotateSpans report and attach source positions."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import DiagnosticError
from kiln.ir import diagnostics


def test_a_parse_error_is_rendered_by_the_overriding_renderer_then_raised():
    seen = []
    diagnostics.override_renderer(lambda ctx: seen.extend(str(d) for d in ctx.diagnostics))
    try:
        with pytest.raises(DiagnosticError, match="line 2"):
            relay.parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) { %x + }')
    finally:
        diagnostics.override_renderer(None)
    assert len(seen) == 1 and seen[0].startswith("error: ") and "line 2" in seen[0]
    assert diagnostics.get_renderer() is not None


def test_a_context_raises_only_for_errors():
    rendered = []
    ctx = diagnostics.DiagnosticContext(None, diagnostics.DiagnosticRenderer(lambda c: rendered.append(len(c.diagnostics))))
    ctx.emit(diagnostics.Diagnostic(diagnostics.DiagnosticLevel.WARNING, None, "just so you know"))
    ctx.render()
    ctx.emit(diagnostics.Diagnostic(diagnostics.DiagnosticLevel.ERROR, None, "this is wrong"))
    with pytest.raises(DiagnosticError, match="this is wrong"):
        ctx.render()
    assert rendered == [1, 1]


def test_span_check_warns_of_expressions_without_spans_and_annotate_spans_gives_them():
    x = relay.var("x", shape=(2,))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    warnings = []
    diagnostics.override_renderer(lambda ctx: warnings.extend(d.message for d in ctx.diagnostics))
    try:
        assert relay.SpanCheck()(mod) is mod
        assert any("Call has no span" in w for w in warnings)
        annotated = relay.transform.AnnotateSpans()(mod)
        warnings.clear()
        relay.SpanCheck()(annotated)
    finally:
        diagnostics.override_renderer(None)
    assert annotated["main"].body.span.source_name == "GeneratedSource"
    assert kiln.ir.structural_equal(annotated, relay.infer_type(mod))  # the text is parsed, so typed (as TVM)
    run = relay.create_executor("debug", mod=annotated).evaluate()
    np.testing.assert_array_equal(run(np.array([-1.0, 2.0], "float32")).numpy(), [0.0, 2.0])


def test_ir_nodes_are_runtime_objects():
    assert isinstance(relay.var("x"), kiln.runtime.Object) and isinstance(relay.const(1), kiln.runtime.Object)
