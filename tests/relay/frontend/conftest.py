"""Helpers for the ONNX frontend tests (the ``ox`` fixture): build small models with onnx.helper and compare kiln
(the reference interpreter after ``from_onnx``) with onnxruntime."""

from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from kiln import relay


def elem_type(dtype) -> int:
    """The TensorProto element type of a numpy dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def make_model(nodes, inputs, outputs, initializers=None, opset=17, name="test"):
    """A model of ``nodes``: ``inputs`` maps names to (shape, dtype) or arrays (their shape and dtype), ``outputs``
    is a list of names (float32) or (name, dtype) pairs; ``initializers`` maps names to arrays."""
    value_infos = []
    for input_name, spec in inputs.items():
        shape, dtype = (spec.shape, spec.dtype) if isinstance(spec, np.ndarray) else spec
        value_infos.append(helper.make_tensor_value_info(input_name, elem_type(dtype), shape))
    out_infos = []
    for out in outputs:
        out_name, dtype = (out, "float32") if isinstance(out, str) else out
        out_infos.append(helper.make_tensor_value_info(out_name, elem_type(dtype), None))
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, name, value_infos, out_infos, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)  # what the installed onnxruntime reads
    return model


def run_ort(model, feeds):
    """The outputs of onnxruntime on ``feeds`` (a dict of arrays)."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_kiln(model, feeds, **kwargs):
    """The outputs of kiln's reference interpreter on ``feeds`` after ``from_onnx``."""
    mod, params = relay.frontend.from_onnx(model, **kwargs)
    func = relay.create_executor("debug", mod=mod).evaluate()
    out = func(**feeds, **params)
    outs = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in outs]


def check(model, feeds, rtol=1e-5, atol=1e-5, **kwargs):
    """kiln matches onnxruntime on ``feeds`` (values, dtypes and shapes); returns kiln's outputs."""
    want = run_ort(model, feeds)
    got = run_kiln(model, feeds, **kwargs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def check_compiled_once(model, feeds_list, rtol=1e-5, atol=1e-5):
    """Compile ``model`` once (``kiln.backend.onnx.prepare``: the graph executor or the VM) and match onnxruntime
    on every feed dict of ``feeds_list``; returns the prepared model."""
    from kiln.backend.onnx import prepare

    rep = prepare(model)
    for feeds in feeds_list:
        want = run_ort(model, feeds)
        got = rep.run(feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return rep


def node_model(op_type, inputs, attrs=None, outputs=("y",), out_dtype="float32", initializers=None, opset=17,
               input_names=None):
    """A one-node model over ``inputs`` (a dict of arrays: graph inputs) and ``initializers``."""
    names = input_names if input_names is not None else list(inputs) + list(initializers or {})
    node = helper.make_node(op_type, names, list(outputs), **(attrs or {}))
    outs = [(o, out_dtype) for o in outputs]
    return make_model([node], {k: v for k, v in inputs.items()}, outs, initializers, opset)


def check_node(op_type, inputs, attrs=None, initializers=None, opset=17, out_dtype="float32", outputs=("y",),
               input_names=None, rtol=1e-5, atol=1e-5):
    """Build a one-node model and compare kiln with onnxruntime on ``inputs``."""
    model = node_model(op_type, inputs, attrs, outputs, out_dtype, initializers, opset, input_names)
    return check(model, dict(inputs), rtol=rtol, atol=atol)


@pytest.fixture
def ox():
    """The helpers above as one namespace: ``ox.check_node("Relu", {"x": x})``."""
    return SimpleNamespace(rng=np.random.default_rng(0), TensorProto=TensorProto, check=check, check_node=check_node,
                           check_compiled_once=check_compiled_once,
                           elem_type=elem_type, helper=helper, make_model=make_model, node_model=node_model, onnx=onnx,
                           run_kiln=run_kiln, run_ort=run_ort, numpy_helper=numpy_helper)
