"""What :mod:`kiln.testing.input_probe` throws bad input at: one :class:`ProbeTarget` per entry point.

A target knows how to write its valid artifact (an exported library, a package, a graph's JSON, a parameter file,
a VM executable, an ONNX model, Relay text) into a work directory, how to damage it, and how to hand the damaged
copy to kiln the way a user would: ``from_onnx``, ``relay.parse``, ``load_module``, ``load_package``,
``load_param_dict``, ``Executable.load_exec`` and the executors (``graph_executor.create``,
``GraphModule.set_input``/``run``, ``VirtualMachine.invoke``, the reference interpreter's ``evaluate()``). Anything
the entry point accepts is then run, so damage that slips past a loader still has to end in a
:class:`~kiln.error.KilnError` or a result, never another exception or a crash.

The artifacts are built once by the parent process (:func:`prepare`); the worker process that runs the cases only
loads them (:meth:`ProbeTarget.setup`).
"""

import json
import pathlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..error import KilnError

__all__ = ["ProbeTarget", "TARGETS", "prepare", "SilentAcceptance"]


class SilentAcceptance(Exception):
    """An entry point accepted a value its signature forbids (the probe's own finding, not a kiln error)."""


@dataclass(frozen=True)
class ProbeTarget:
    """One entry point: ``artifact`` names the file in the work directory the damage starts from, ``mutate(data,
    rng) -> (data, description)`` damages it, ``setup(workdir)`` loads what every case shares (once per worker) and
    ``consume(state, data, path)`` gives the damaged data to kiln (``path`` is a fresh file name it may write)."""

    name: str
    artifact: str
    mutate: Callable
    consume: Callable
    setup: Callable = lambda workdir: None


# ---------------------------------------------------------------- damage


def damage_bytes(data: bytes, rng: random.Random):
    """Truncate, overwrite, splice or replace ``data`` at random; returns the damaged bytes and what was done."""
    kind = rng.choice(["truncate", "flip", "flip", "random", "splice", "append", "empty", "zero_run"])
    n = len(data)
    if kind == "truncate":
        k = rng.randrange(n) if n else 0
        return data[:k], f"truncated to {k} of {n} bytes"
    if kind == "flip":
        out = bytearray(data)
        spots = sorted(rng.randrange(n) for _ in range(rng.randint(1, 4)))
        for k in spots:
            out[k] = rng.randrange(256)
        return bytes(out), f"bytes at {spots} overwritten"
    if kind == "random":
        k = rng.randrange(2 * n + 1)
        return bytes(rng.randrange(256) for _ in range(k)), f"{k} random bytes"
    if kind == "splice":
        a, b = sorted(rng.randrange(n + 1) for _ in range(2))
        at = rng.randrange(n + 1)
        return data[:at] + data[a:b] + data[at:], f"bytes {a}:{b} copied to {at}"
    if kind == "append":
        return data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))), "random bytes appended"
    if kind == "zero_run":
        a = rng.randrange(n) if n else 0
        b = min(n, a + rng.randint(1, 4096))
        return data[:a] + bytes(b - a) + data[b:], f"bytes {a}:{b} zeroed"
    return b"", "emptied"


_TOKENS = ["(", ")", "{", "}", "[", "]", ",", ";", ":", "=", "%", "@", "#", "-", ".", "0", "1e309", "-1",
           "\"", "'", "\\", "fn", "let", "if", "else", "Tensor", "meta", "float32", "int64", "\x00", "\u00e9", "\ud800",
           "\n", "/*", "*/", "//", "99999999999999999999999", "nan", "inf", "def", "type", "match", "ref"]


def damage_text(text: str, rng: random.Random):
    """Damage program text: cut, duplicate or delete a span, insert a token, change a number, nest deeply."""
    kind = rng.choice(["bytes", "delete", "duplicate", "insert", "insert", "number", "number", "nest"])
    n = len(text)
    if kind == "bytes":
        data, what = damage_bytes(text.encode("utf-8", "surrogatepass"), rng)
        return data.decode("utf-8", "replace"), what
    a, b = sorted(rng.randrange(n + 1) for _ in range(2))
    b = min(b, a + 200)
    if kind == "delete":
        return text[:a] + text[b:], f"characters {a}:{b} deleted"
    if kind == "duplicate":
        return text[:b] + text[a:b] + text[b:], f"characters {a}:{b} repeated"
    if kind == "insert":
        token = rng.choice(_TOKENS)
        return text[:a] + token + text[a:], f"{token!r} inserted at {a}"
    if kind == "number":
        numbers = list(re.finditer(r"-?\d+(\.\d+)?", text))
        if numbers:
            m = rng.choice(numbers)
            new = rng.choice(["0", "-1", "-7", str(1 << 40), str(1 << 63), "1e400", "0.5", "00", ""])
            return text[:m.start()] + new + text[m.end():], f"number {m.group()!r} at {m.start()} set to {new!r}"
        return text, "no number to change"
    depth = rng.choice([100, 2000, 200000])
    opener = rng.choice(["(", "[", "-", "fn () { ", "%x = "])
    return text[:a] + opener * depth + text[a:], f"{opener!r} repeated {depth} times at {a}"


_JSON_VALUES = [0, -1, 1, 7, 1 << 40, 1 << 62, -(1 << 63), 2.5, float("nan"), "", "float32", "int4", "x", None, True,
                [], [0], [-1], [1 << 40, 1 << 40], {}, {"a": 1}]


def damage_json(text: str, rng: random.Random):
    """Replace one value anywhere in a JSON document (half the time), or damage it as text."""
    if rng.random() < 0.5:
        return damage_text(text, rng)
    doc = json.loads(text)
    slots = []

    def walk(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            slots.append((node, key, path + [key]))
            walk(child, path + [key])

    walk(doc, [])
    container, key, path = rng.choice(slots)
    if isinstance(container, list) and rng.random() < 0.2:
        del container[key]
        return json.dumps(doc), f"{path} deleted"
    container[key] = rng.choice(_JSON_VALUES)
    return json.dumps(doc), f"{path} set to {container[key]!r}"


# ---------------------------------------------------------------- consumers


def _run_graph_module(module):
    """Set every input of a graph executor module to random data of its declared shape and dtype, run, read out."""
    shapes, dtypes = module.get_input_info()
    rng = np.random.default_rng(0)
    for name, shape in shapes.items():
        if int(np.prod(shape, dtype=np.float64)) > 1 << 24:
            raise KilnError(f"the graph declares input {name!r} of shape {shape}")  # not worth allocating to probe
        module.set_input(name, rng.standard_normal(shape).astype(dtypes[name]))
    module.run()
    for k in range(module.get_num_outputs()):
        module.get_output(k).numpy()


def _consume_onnx(state, data, path):
    from ..relay.frontend import from_onnx

    path.write_bytes(data)
    from_onnx(str(path))


def _consume_parse(state, data, path):
    from .. import parser
    from ..relay import transform

    mod = parser.parse(data)
    transform.InferType()(mod)


def _setup_graph(workdir):
    from ..runtime import load_module

    return load_module(str(workdir / "graph.so"))


def _consume_library(state, data, path):
    from .. import cpu
    from ..contrib import graph_executor
    from ..runtime import load_module

    path.write_bytes(data)
    factory = load_module(str(path))
    _run_graph_module(graph_executor.GraphModule(factory["default"](cpu(0))))


def _consume_graph_json(lib, data, path):
    from .. import cpu
    from ..contrib import graph_executor

    _run_graph_module(graph_executor.create(data, lib, cpu(0)))


def _consume_params(lib, data, path):
    from .. import cpu
    from ..contrib import graph_executor
    from ..runtime.params import load_param_dict

    load_param_dict(data)
    module = graph_executor.GraphModule(lib["default"](cpu(0)))
    module.load_params(data)
    _run_graph_module(module)


def _consume_package(state, data, path):
    from ..contrib import graph_executor
    from ..runtime.package import load_package

    path.write_bytes(data)
    package = load_package(path)
    module = graph_executor.create(package.graph, package.lib, _cpu())
    module.load_params(package.params)
    _run_graph_module(module)


def _setup_vm(workdir):
    from ..runtime import load_module
    from ..runtime.vm import Executable, VirtualMachine

    lib = load_module(str(workdir / "vm.so"))
    return lib, VirtualMachine(Executable.load_exec((workdir / "vm.code").read_bytes(), lib), _cpu())


def _cpu():
    from .. import cpu

    return cpu(0)


def _consume_vm_code(state, data, path):
    from ..runtime.vm import Executable, VirtualMachine

    exe = Executable.load_exec(data, state[0])
    VirtualMachine(exe, _cpu()).run(np.ones((3, 4), "float32")).numpy()


def _damage_resealed(data: bytes, rng: random.Random):
    """Damage a VM executable's header (JSON) or constants and seal it again with a valid digest: what a buggy
    writer would produce, which the digest cannot catch and the loader's checks must."""
    from ..runtime.vm import serialize

    fixed = serialize._FIXED
    _, _, _, header_size, _, _ = fixed.unpack_from(data)
    header, constants = data[fixed.size:fixed.size + header_size], data[fixed.size + header_size:]
    if rng.random() < 0.75:
        text, what = damage_json(header.decode(), rng)
        header, what = text.encode("utf-8", "surrogatepass"), f"header: {what}"
    else:
        constants, what = damage_bytes(constants, rng)
        what = f"constants: {what}"
    return serialize.pack(header, constants), f"{what}, sealed again"


# misuse of a built module: the value, name and call form are drawn by the case's random generator
_DTYPES = ["bool", "int8", "int32", "int64", "float16", "float32", "float64", "uint8"]


def _random_value(rng: random.Random):
    kind = rng.choice(["array", "array", "array", "list", "scalar", "str", "none", "object", "nested"])
    if kind == "array":
        shape = tuple(rng.choice([0, 1, 2, 3, 4, 8]) for _ in range(rng.randrange(6)))
        return np.ones(shape, rng.choice(_DTYPES))
    if kind == "list":
        return np.ones((rng.choice([1, 3]), 4)).tolist()
    if kind == "scalar":
        return rng.choice([1, 1.5, True, 1 << 70, float("nan")])
    if kind == "nested":
        return [[1, 2], [3]]
    return {"str": "data", "none": None, "object": object()}[kind]


def _mutate_misuse(data, rng):
    """The "damage" of a misuse case is a call: a name (or index) and a value drawn at random."""
    name = rng.choice(["x", "x", "x", "y", "", 0, 3, -1, None])
    value = _random_value(rng)
    form = rng.choice(["set_input", "run", "keyword"])
    return (form, name, value), f"{form}({name!r}, {type(value).__name__} {getattr(value, 'shape', value)!r:.60}"


def _accepts(value, shape, dtype, fixed_rank=None):
    """Whether a signature of ``shape`` (None: any extent) and ``dtype`` admits ``value`` (Python data takes the
    input's dtype)."""
    if isinstance(value, np.ndarray) and value.dtype != np.dtype(dtype):
        return False
    try:
        got = np.asarray(value, dtype=dtype).shape
    except (TypeError, ValueError, OverflowError):
        return False
    return len(got) == len(shape) and all(s is None or s == g for s, g in zip(shape, got, strict=True))


def _consume_graph_misuse(lib, call, path):
    from ..contrib import graph_executor

    form, name, value = call
    if form == "set_input" and name is None and value is None:
        return  # set_input() with nothing to set: a no-op, as in TVM
    module = graph_executor.GraphModule(lib["default"](_cpu()))
    if form == "keyword":
        module.set_input(**{str(name): value})
    elif form == "run":
        module.run(**{str(name): value})
    else:
        module.set_input(name, value)
    if name not in ("x", 0) or not _accepts(value, (1, 3, 8, 8), "float32"):
        if not (form == "keyword" and name != "x"):  # unknown keyword names are skipped with a warning, as in TVM
            raise SilentAcceptance(f"{form} accepted {name!r} = {value!r:.80} for input x: Tensor[(1, 3, 8, 8)]")


def _consume_vm_misuse(state, call, path):
    form, name, value = call
    vm = state[1]
    if form == "set_input":
        vm.set_input("main", value)
        vm.invoke("main").numpy()
    elif form == "keyword":
        vm.invoke("main", **{str(name): value}).numpy()
    else:
        vm.run(value).numpy()
    if (form == "keyword" and name != "x") or not _accepts(value, (None, 4), "float32"):
        raise SilentAcceptance(f"VM {form} accepted {name!r} = {value!r:.80} for %x: Tensor[(?, 4), float32]")


def _setup_interpreter(workdir):
    from .. import parser
    from ..relay import create_executor

    return create_executor("debug", mod=parser.parse((workdir / "vm.relay").read_text())).evaluate()


def _consume_interpreter_misuse(func, call, path):
    form, name, value = call
    (func(**{str(name): value}) if form == "keyword" else func(value)).numpy()
    if (form == "keyword" and name != "x") or not _accepts(value, (None, 4), "float32"):
        raise SilentAcceptance(f"the interpreter accepted {name!r} = {value!r:.80} for %x: Tensor[(?, 4), float32]")


TARGETS = {t.name: t for t in [
    ProbeTarget("from_onnx", "model.onnx", damage_bytes, _consume_onnx),
    ProbeTarget("relay.parse", "module.relay", damage_text, _consume_parse),
    ProbeTarget("load_module", "graph.so", damage_bytes, _consume_library),
    ProbeTarget("load_package", "graph.tar", damage_bytes, _consume_package),
    ProbeTarget("load_param_dict", "graph.params", damage_bytes, _consume_params, _setup_graph),
    ProbeTarget("graph_executor.create", "graph.json", damage_json, _consume_graph_json, _setup_graph),
    ProbeTarget("vm.load_exec", "vm.code", damage_bytes, _consume_vm_code, _setup_vm),
    ProbeTarget("vm.load_exec.resealed", "vm.code", _damage_resealed, _consume_vm_code, _setup_vm),
    ProbeTarget("graph_executor.inputs", "graph.json", _mutate_misuse, _consume_graph_misuse, _setup_graph),
    ProbeTarget("vm.inputs", "vm.code", _mutate_misuse, _consume_vm_misuse, _setup_vm),
    ProbeTarget("interpreter.inputs", "vm.relay", _mutate_misuse, _consume_interpreter_misuse, _setup_interpreter),
]}


def read_artifact(target: ProbeTarget, workdir: pathlib.Path) -> Any:
    """The valid artifact of ``target`` as its mutator takes it (text for the text formats)."""
    data = (workdir / target.artifact).read_bytes()
    return data.decode() if target.artifact.endswith((".relay", ".json")) else data


def _text_module(mod) -> str:
    """The text the parser target damages: ``mod`` (a constant in the metadata section) and a function with a
    branch, lets, a closure and a tuple."""
    from .. import relay
    from ..ir import GlobalVar

    a, b = relay.var("a", shape=(3,)), relay.var("b", shape=(), dtype="bool")
    t, y, f = relay.var("t", shape=(3,)), relay.var("y", shape=(3,)), relay.var("f")
    closure = relay.Function([y], relay.add(y, relay.const(1.0)))
    body = relay.Let(t, relay.If(b, relay.nn.relu(a), a),
                     relay.Let(f, closure, relay.Tuple([relay.Call(f, [t]), relay.const(3)])))
    mod[GlobalVar("g")] = relay.Function([a, b], body)
    return mod.astext()


def prepare(workdir: pathlib.Path) -> None:
    """Build every target's valid artifact into ``workdir``: a small convolutional network (as Relay text, as an
    exported graph-executor library with its JSON and parameters, and as an ONNX model) and a VM executable that
    branches at run time over an input of dynamic batch."""
    from .. import IRModule, relay, transform
    from ..relay.testing import onnx_fuzz
    from ..runtime.package import export_package
    from ..runtime.params import save_param_dict

    workdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))), pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.softmax(relay.reshape(y, (1, -1)))
    mod = IRModule.from_expr(relay.Function([x], y))
    (workdir / "module.relay").write_text(_text_module(mod))
    with transform.PassContext(opt_level=3):
        factory = relay.build(mod, target="llvm")
    factory.export_library(str(workdir / "graph.so"))
    export_package(factory, workdir / "graph.tar")
    (workdir / "graph.json").write_text(factory.get_graph_json())
    (workdir / "graph.params").write_bytes(bytes(save_param_dict(factory.get_params())))
    (workdir / "model.onnx").write_bytes(onnx_fuzz.seed_models()[0].SerializeToString())

    v = relay.var("x", shape=(relay.Any(), 4))
    cond = relay.greater(relay.sum(v), relay.const(0.0))
    body = relay.If(cond, relay.multiply(v, relay.const(2.0)), relay.add(v, relay.const(1.0)))
    branching = IRModule.from_expr(relay.Function([v], body))
    (workdir / "vm.relay").write_text(branching.astext())
    exe = relay.vm.compile(branching, target="llvm")
    code, lib = exe.save()
    lib.export_library(str(workdir / "vm.so"))
    (workdir / "vm.code").write_bytes(code)
