"""A mutation fuzzer for the ONNX importer: malformed models must end in a clear ``kiln.error`` or be handled as
ONNX Runtime handles them, never in a bare Python error, a crash or a silent wrong answer.

Each case takes one of a few small, valid seed models (convolutions, pooling, a matrix product, shape arithmetic,
a branch) and applies one random mutation: a structural one (a node input renamed, a node dropped or moved, an
attribute given a zero, negative, huge or mistyped value, an initializer's dims, type or data changed, a graph
input's dims or type changed, the opset import removed or lowered, a string that is not UTF-8) or a flipped byte in
the serialized model. The mutated model goes through ``from_onnx``, ``relay.build`` and the graph executor on random
inputs, and through ONNX Runtime as the referee. A case is a **bug** when kiln:

* raises anything but a :class:`~kiln.error.KilnError` (``bare``),
* accepts and runs a model ONNX Runtime refuses (``silent``: kiln cannot know what it computed),
* returns values that differ from ONNX Runtime's (``mismatch``).

Refusing a model ONNX Runtime runs (``strict``) is reported but not a bug: kiln may lack an operator or refuse
something ONNX Runtime tolerates. Where ONNX Runtime has no kernel for the model (operators of old opsets) there is
no verdict (``unjudged``). With ``--isolate`` every case runs in its own process, so a crash (``crash``) is
caught and reported too.

Each case is named by ``(seed, index)``; ``python -m kiln.relay.testing.onnx_fuzz --seed S --cases N`` runs a batch
and prints, for every bug, the command that replays it (``--seed S --replay K``).
"""

import argparse
import copy
import random
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

__all__ = ["seed_models", "mutate", "run_case", "fuzz", "Outcome"]


@dataclass
class Outcome:
    """What happened to one case: ``kind`` is ``ok``, ``refused`` (a KilnError where ONNX Runtime refused too),
    ``strict``, ``unjudged``, ``bare``, ``silent``, ``mismatch`` or ``crash``; ``detail`` says more."""

    seed: int
    index: int
    mutation: str
    kind: str
    detail: str = ""

    @property
    def is_bug(self) -> bool:
        return self.kind in ("bare", "silent", "mismatch", "crash")

    def replay(self) -> str:
        return f"python -m kiln.relay.testing.onnx_fuzz --seed {self.seed} --replay {self.index}"


def _model(nodes, inputs, outputs, inits=(), opset=13):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes, "fuzz",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def seed_models() -> list:
    """The valid models mutations start from."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)

    def init(name, shape, dtype="float32"):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(dtype), name)

    conv = _model([helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                    strides=[1, 1], name="conv"),
                   helper.make_node("Relu", ["c"], ["r"], name="relu"),
                   helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool")],
                  [("x", [1, 3, 8, 8])], [("y", [1, 4, 4, 4])], [init("w", (4, 3, 3, 3)), init("b", (4,))])
    gemm = _model([helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1, alpha=0.5, name="gemm"),
                   helper.make_node("Softmax", ["g"], ["y"], axis=1, name="softmax")],
                  [("x", [2, 6])], [("y", [2, 5])], [init("w", (5, 6)), init("b", (5,))])
    shape_ops = _model([helper.make_node("Shape", ["x"], ["s"], name="shape"),
                        helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
                        helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["sl"], name="slice"),
                        helper.make_node("Concat", ["sl", "sl"], ["c"], axis=1, name="concat"),
                        helper.make_node("Transpose", ["c"], ["y"], perm=[1, 0], name="transpose")],
                       [("x", [3, 4])], [("y", [4, 3])],
                       [numpy_helper.from_array(np.array([0], "int64"), "starts"),
                        numpy_helper.from_array(np.array([2], "int64"), "ends"),
                        numpy_helper.from_array(np.array([1], "int64"), "axes")])
    pool = _model([helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                                    pads=[1, 1, 1, 1], name="avgpool"),
                   helper.make_node("BatchNormalization", ["p", "g", "be", "m", "v"], ["y"], name="bn")],
                  [("x", [1, 2, 6, 6])], [("y", [1, 2, 3, 3])],
                  [init("g", (2,)), init("be", (2,)), init("m", (2,)),
                   numpy_helper.from_array(np.ones(2, "float32"), "v")])
    return [conv, gemm, shape_ops, pool]


def _mutations():
    return [_rename_input, _drop_input, _drop_node, _move_node, _attribute_value, _attribute_type, _drop_attribute,
            _init_dims, _init_dtype, _init_data, _input_dims, _input_dtype, _opset, _bad_utf8, _op_type, _flip_byte]


def mutate(model, rng: random.Random):
    """A mutated copy of ``model`` and the mutation's description (a serialized model for ``_flip_byte``)."""
    mutation = rng.choice(_mutations())
    out = copy.deepcopy(model)
    return mutation(out, rng)


def _node(model, rng):
    return rng.choice(list(model.graph.node))


def _rename_input(model, rng):
    node = _node(model, rng)
    if not node.input:
        return model, "no-op"
    k = rng.randrange(len(node.input))
    node.input[k] = "no_such_value"
    return model, f"input {k} of {node.name} renamed to a value nothing produces"


def _drop_input(model, rng):
    node = _node(model, rng)
    if not node.input:
        return model, "no-op"
    del node.input[-1]
    return model, f"last input of {node.name} dropped"


def _drop_node(model, rng):
    k = rng.randrange(len(model.graph.node))
    name = model.graph.node[k].name
    del model.graph.node[k]
    return model, f"node {name} dropped"


def _move_node(model, rng):
    nodes = list(model.graph.node)
    k, j = rng.randrange(len(nodes)), rng.randrange(len(nodes))
    nodes.insert(j, nodes.pop(k))
    copies = [copy.deepcopy(n) for n in nodes]
    del model.graph.node[:]
    model.graph.node.extend(copies)
    return model, f"node {k} moved to position {j}"


# within int32: ONNX Runtime narrows int attributes, so larger values are judged by its truncation, not the model
_VALUES = [0, -1, -7, (1 << 31) - 1, 3]


def _attribute_value(model, rng):
    from onnx import AttributeProto

    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return model, "no-op"
    node = rng.choice(nodes)
    attr = rng.choice(list(node.attribute))
    value = rng.choice(_VALUES)
    if attr.type == AttributeProto.INTS and attr.ints:
        attr.ints[rng.randrange(len(attr.ints))] = value
    elif attr.type == AttributeProto.INT:
        attr.i = value
    elif attr.type == AttributeProto.FLOAT:
        attr.f = float(rng.choice([float("nan"), float("inf"), -1e30, 0.0]))
    else:
        return model, "no-op"
    return model, f"attribute {attr.name} of {node.name} set to {value}"


def _attribute_type(model, rng):
    from onnx import AttributeProto

    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return model, "no-op"
    node = rng.choice(nodes)
    attr = rng.choice(list(node.attribute))
    attr.type = rng.choice([AttributeProto.STRING, AttributeProto.FLOAT, AttributeProto.INTS, AttributeProto.INT])
    attr.s = b"abc"
    return model, f"attribute {attr.name} of {node.name} retyped to {attr.type}"


def _drop_attribute(model, rng):
    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return model, "no-op"
    node = rng.choice(nodes)
    name = node.attribute[-1].name
    del node.attribute[-1]
    return model, f"attribute {name} of {node.name} dropped"


def _init(model, rng):
    return rng.choice(list(model.graph.initializer)) if model.graph.initializer else None


def _init_dims(model, rng):
    init = _init(model, rng)
    if init is None or not init.dims:
        return model, "no-op"
    k = rng.randrange(len(init.dims))
    init.dims[k] = rng.choice([0, -2, init.dims[k] + 1, 1 << 40])
    return model, f"dim {k} of initializer {init.name} set to {init.dims[k]}"


def _init_dtype(model, rng):
    init = _init(model, rng)
    if init is None:
        return model, "no-op"
    init.data_type = rng.choice([2, 6, 7, 10, 11, 9, 0, 99])
    return model, f"initializer {init.name} declared as type {init.data_type}"


def _init_data(model, rng):
    init = _init(model, rng)
    if init is None or not init.raw_data:
        return model, "no-op"
    cut = rng.randrange(len(init.raw_data))
    init.raw_data = init.raw_data[:cut] if rng.random() < 0.5 else init.raw_data + b"\0" * (cut + 1)
    return model, f"raw data of initializer {init.name} resized to {len(init.raw_data)} bytes"


def _input_dims(model, rng):
    dims = model.graph.input[0].type.tensor_type.shape.dim
    k = rng.randrange(len(dims))
    dims[k].dim_value = rng.choice([0, 1 << 44, dims[k].dim_value + 1])
    return model, f"dim {k} of the graph input set to {dims[k].dim_value}"


def _input_dtype(model, rng):
    model.graph.input[0].type.tensor_type.elem_type = rng.choice([7, 9, 10, 11, 6, 8])
    return model, f"graph input declared as type {model.graph.input[0].type.tensor_type.elem_type}"


def _opset(model, rng):
    if rng.random() < 0.5:
        del model.opset_import[:]
        return model, "opset import removed"
    model.opset_import[0].version = rng.choice([1, 5, 7, 9, 10])
    return model, f"opset lowered to {model.opset_import[0].version}"


def _bad_utf8(model, rng):
    from onnx import helper

    node = _node(model, rng)
    node.attribute.append(helper.make_attribute("auto_pad", b"\xff\xfeSAME"))
    return model, f"attribute auto_pad of {node.name} is not UTF-8"


def _op_type(model, rng):
    node = _node(model, rng)
    node.op_type = rng.choice(["Relu", "Conv", "Gemm", "Slice", "Reshape", "MaxPool", "Concat", "Softmax"])
    return model, f"node {node.name} became a {node.op_type}"


def _flip_byte(model, rng):
    data = bytearray(model.SerializeToString())
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(len(data))
        data[k] ^= 1 << rng.randrange(8)
    return bytes(data), "bytes flipped in the serialized model"


UNJUDGED = "unjudged"
"""What :func:`_run_ort` returns when ONNX Runtime lacks a kernel for the model (old opsets): no verdict on it."""


def _run_ort(data, feeds):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    except Exception as exc:  # ONNX Runtime refused the model or failed to run it
        return UNJUDGED if "NOT_IMPLEMENTED" in str(exc) else None


def _inputs_of(model, rng):
    from onnx import helper

    feeds = {}
    inits = {i.name for i in model.graph.initializer}
    for info in model.graph.input:
        if info.name in inits:
            continue
        ttype = info.type.tensor_type
        dims = [d.dim_value for d in ttype.shape.dim]
        if any(d < 0 or d > 1 << 20 for d in dims):
            return None
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(ttype.elem_type)) if ttype.elem_type else np.float32
        except (KeyError, TypeError, ValueError):  # an element type numpy has no equivalent of: nothing to feed
            return None
        feeds[info.name] = (rng.standard_normal(dims) * 3).astype(dtype)
    return feeds


def run_case(seed: int, index: int) -> Outcome:
    """Mutate, import, build and run case ``(seed, index)`` in this process and classify it."""
    import warnings

    import onnx

    import kiln
    from kiln import relay
    from kiln.error import KilnError

    rng = random.Random(seed * 1_000_003 + index)
    seeds = seed_models()
    mutated, mutation = mutate(seeds[index % len(seeds)], rng)
    data = mutated if isinstance(mutated, bytes) else mutated.SerializeToString()
    try:
        model = onnx.load_from_string(data)
    except Exception:  # noqa: BLE001  (protobuf refuses the bytes: nothing reaches kiln's importer as a model)
        model = None
    feeds = _inputs_of(model, np.random.default_rng(index)) if model is not None else None
    want = _run_ort(data, feeds) if feeds is not None else None
    outcome = Outcome(seed, index, mutation, "ok")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = model if model is not None else data
            if isinstance(source, bytes):
                raise_from_bytes(source)
            mod, params = relay.frontend.from_onnx(source)
            with kiln.transform.PassContext(opt_level=3):
                lib = relay.build(mod, target="llvm", params=params)
            m = lib["default"](kiln.cpu(0))
            for name, value in (feeds or {}).items():
                m["set_input"](name, value)
            m["run"]()
            got = [m["get_output"](k).numpy() for k in range(m["get_num_outputs"]())]
    except KilnError as exc:
        verdict = "refused" if want is None else UNJUDGED if want is UNJUDGED else "strict"
        outcome.kind, outcome.detail = verdict, str(exc).splitlines()[0][:200]
        return outcome
    except Exception as exc:  # noqa: BLE001  (what the fuzzer is looking for)
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        outcome.kind, outcome.detail = "bare", f"{type(exc).__name__}: {first}"
        return outcome
    if want is None or want is UNJUDGED:
        outcome.kind = "silent" if want is None else UNJUDGED
        outcome.detail = "kiln ran a model ONNX Runtime refuses" if want is None else "ONNX Runtime has no kernel"
        return outcome
    for k, (g, w) in enumerate(zip(got, want, strict=False)):
        # where NaNs flow (a flipped byte in a weight), max and relu may keep or drop them: IEEE maxNum, numpy and
        # ONNX Runtime's vector kernels differ, so only positions finite on both sides are compared
        finite = np.isfinite(g) & np.isfinite(w) if g.shape == w.shape and g.dtype.kind == "f" else True
        if g.shape != w.shape or not np.allclose(np.where(finite, g, 0), np.where(finite, w, 0), rtol=1e-4, atol=1e-4):
            # a NaN weight meets padding: 0 * NaN is NaN where kiln multiplies the padded zeros, nothing where
            # ONNX Runtime skips them; both are right
            nonfinite = _has_nonfinite_weights(model)
            outcome.kind = UNJUDGED if nonfinite else "mismatch"
            outcome.detail = f"output {k} differs from ONNX Runtime's" + (" (NaN/inf weights)" if nonfinite else "")
    return outcome


def _has_nonfinite_weights(model) -> bool:
    from onnx import numpy_helper

    for init in model.graph.initializer:
        try:
            value = numpy_helper.to_array(init)
        except Exception:  # noqa: BLE001  (an initializer numpy cannot read has no finite values to speak of)
            return True
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            return True
    return False


def raise_from_bytes(data: bytes):
    """What ``from_onnx`` does with bytes protobuf cannot parse: refuse them (through kiln's own loader)."""
    import os
    import tempfile

    from kiln import relay

    fd, path = tempfile.mkstemp(suffix=".onnx")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        relay.frontend.from_onnx(path)
    finally:
        os.unlink(path)


def _isolated(seed, index) -> Outcome:
    cmd = [sys.executable, "-m", "kiln.relay.testing.onnx_fuzz", "--seed", str(seed), "--replay", str(index)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    mutation = lines[0].partition(": ")[2] if lines else "?"
    if proc.returncode != 0 or len(lines) < 2:
        return Outcome(seed, index, mutation, "crash", f"exit status {proc.returncode}: {proc.stderr.strip()[-300:]}")
    kind, _, detail = lines[-1].partition(" ")
    return Outcome(seed, index, mutation, kind, detail)


def fuzz(seed=0, cases=100, isolate=False, progress=None) -> list:
    """Run ``cases`` cases of ``seed``; returns their outcomes."""
    out = []
    for index in range(cases):
        outcome = _isolated(seed, index) if isolate else run_case(seed, index)
        out.append(outcome)
        if progress is not None:
            progress(outcome)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kiln.relay.testing.onnx_fuzz",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--replay", type=int, default=None, help="run only this case and print its outcome")
    parser.add_argument("--isolate", action="store_true", help="run every case in its own process (catches crashes)")
    args = parser.parse_args(argv)
    if args.replay is not None:
        outcome = run_case(args.seed, args.replay)
        print(f"case {args.seed}/{args.replay}: {outcome.mutation}")
        print(f"{outcome.kind} {outcome.detail}")
        return 0
    outcomes = fuzz(args.seed, args.cases, args.isolate)
    counts: dict = {}
    for o in outcomes:
        counts[o.kind] = counts.get(o.kind, 0) + 1
        if o.is_bug:
            print(f"{o.kind:9s} {o.mutation}: {o.detail}\n          replay: {o.replay()}")
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + f" ({len(outcomes)} cases)")
    return 1 if any(o.is_bug for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
