"""Runtime modules (kiln/runtime/module.py, library.py): functions by name, argument checks naming the argument,
numpy arrays, export_library/load_module round trips (import trees included), timing."""

import ctypes
import subprocess

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import KilnError, RuntimeArgumentError
from kiln.runtime import Module, load_module
from kiln.runtime.ndarray import NDArray
from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite

HAVE_CC = have_cc()
TARGETS = [
    pytest.param("c", marks=[pytest.mark.needs_cc, pytest.mark.skipif(not HAVE_CC, reason="no C compiler")]),
    pytest.param("llvm", marks=[pytest.mark.needs_cc, pytest.mark.needs_llvmlite,
                                pytest.mark.skipif(not (HAVE_CC and have_llvmlite()), reason="no llvmlite")]),
]


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


def _addone_module(n=16, dtype="float32"):
    A = te.placeholder((n,), dtype, name="A")
    B = te.compute((n,), lambda i: A[i] + tir.const(1, dtype), name="B")
    s = te.create_schedule(B.op)
    return kiln.lower(s, [A, B], name="addone")


def _two_function_module():
    mod = _addone_module()
    n = te.var("n")
    X = te.placeholder((n, 2), name="X")
    Y = te.compute((n, 2), lambda i, j: X[i, j] * 2.0, name="Y")
    mod.update(kiln.lower(te.create_schedule(Y.op), [X, Y], name="double"))
    return mod


def test_functions_by_name_and_entry(target):
    m = kiln.build(_two_function_module(), target=target)
    assert sorted(m.list_functions()) == ["addone", "double"]
    assert "addone" in m and "nothing" not in m
    a = kiln.nd.array(np.arange(16, dtype="float32"))
    b = kiln.nd.empty((16,))
    m["addone"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(16) + 1)
    x = np.ones((5, 2), "float32")
    y = kiln.nd.empty((5, 2))
    m["double"](x, y)
    np.testing.assert_array_equal(y.numpy(), 2 * x)
    with pytest.raises(KilnError, match="has no function 'nothing'; functions: addone, double"):
        m["nothing"]
    assert m.get_function("addone") is m["addone"]


@pytest.mark.parametrize("call, fragment", [
    (lambda f, a, b: f(a), "addone: expected 2 arguments (A, B)"),
    (lambda f, a, b: f(a, b, b), "addone: expected 2 arguments (A, B)"),
    (lambda f, a, b: f(a, kiln.nd.empty((15,))), "argument B.shape[0] must be 16"),
    (lambda f, a, b: f(a, kiln.nd.empty((16, 1))), "argument B must have 1 dimension"),
    (lambda f, a, b: f(kiln.nd.empty((16,), "float64"), b), "argument A must have dtype float32"),
    (lambda f, a, b: f(a, kiln.nd.empty((16,), "int32")), "argument B must have dtype float32"),
    (lambda f, a, b: f(a, 3), "argument B (#1) must be a tensor"),
    (lambda f, a, b: f("text", b), "argument 0 (A): cannot pass a str"),
    (lambda f, a, b: f(NDArray(np.zeros(17, "float32")[1:]), b), "argument A must be 64-byte aligned"),
    (lambda f, a, b: f(a, NDArray(np.zeros(32, "float32")[::2])), "argument B must be a compact"),
])
def test_wrong_arguments_raise_errors_naming_the_argument(target, call, fragment):
    m = kiln.build(_addone_module(), target=target)
    a, b = kiln.nd.array(np.zeros(16, "float32")), kiln.nd.empty((16,))
    with pytest.raises(RuntimeArgumentError) as info:
        call(m["addone"], a, b)
    assert fragment in str(info.value)
    assert isinstance(info.value, TypeError)  # as TVM's argument errors
    m["addone"](a, b)  # the process and the module are still fine
    assert (b.numpy() == 1).all()


def test_numpy_arrays_are_accepted_even_unaligned_or_strided(target):
    m = kiln.build(_addone_module(), target=target)
    base = np.zeros(40, "float32")
    a = base[1:17]  # 4-byte aligned: staged through an aligned copy
    a[:] = np.arange(16)
    out = np.zeros(32, "float32")[::2]  # not contiguous: staged and copied back
    m["addone"](a, out)
    np.testing.assert_array_equal(out, np.arange(16) + 1)


def test_integer_dtypes_are_checked(target):
    m = kiln.build(_addone_module(dtype="int8"), target=target)
    a = np.arange(16, dtype="int8")
    b = np.zeros(16, "int8")
    m(a, b)
    np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(RuntimeArgumentError, match="argument A must have dtype int8"):
        m(a.astype("uint8"), b)


def test_export_library_and_load_module_round_trip(target, tmp_path):
    m = kiln.build(_two_function_module(), target=target)
    path = tmp_path / "lib.so"
    assert m.export_library(str(path)) == str(path)
    loaded = load_module(str(path))
    assert sorted(loaded.list_functions()) == ["addone", "double"]
    a = kiln.nd.array(np.arange(16, dtype="float32"))
    b = kiln.nd.empty((16,))
    loaded["addone"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(16) + 1)
    with pytest.raises(RuntimeArgumentError, match="double: argument Y.shape"):
        loaded["double"](np.zeros((3, 2), "float32"), np.zeros((4, 2), "float32"))
    # a loaded library exports again (a copy), and a new library written to the same path is loaded anew
    again = tmp_path / "again.so"
    loaded.export_library(again)
    assert load_module(again).list_functions() == loaded.list_functions()
    kiln.build(_addone_module(8), target=target).export_library(path)
    assert load_module(path).list_functions() == ["addone"]
    with pytest.raises(RuntimeArgumentError, match="must be 8"):
        load_module(path)["addone"](a, b)


def test_loaded_library_symbols(target, tmp_path):
    path = tmp_path / "sym.so"
    kiln.build(_addone_module(), target=target).export_library(path)
    lib = ctypes.CDLL(str(path))
    assert lib.addone and lib.KilnGetLastError  # exported by name, callable from C
    nm = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True)
    if nm.returncode == 0:
        exported = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
        assert "kiln_parallel_launch" not in exported and "KilnAPISetLastError" not in exported


class _Payload(Module):
    """A non-library module: a Python function plus bytes, serialized into an exported library."""

    type_key = "test_payload"

    def __init__(self, text):
        super().__init__()
        self.text = text

    def get_own_function(self, name):
        if name == "greet":
            return kiln.runtime.PackedFunc(lambda: self.text, "greet")
        return None

    def own_function_names(self):
        return ["greet"]

    def save_to_bytes(self):
        return self.text.encode()


kiln.register_func("runtime.module.loadbinary_test_payload", lambda data: _Payload(data.decode()), override=True)


def test_import_tree_round_trip(target, tmp_path):
    lib = kiln.build(_addone_module(), target=target)
    root = _Payload("hello " * 1000)
    root.import_module(lib)
    assert root["greet"]() == root.text
    assert "addone" in root.list_functions()
    path = tmp_path / "tree.so"
    root.export_library(path)
    loaded = load_module(path)
    assert isinstance(loaded, _Payload) and loaded["greet"]() == root.text
    assert loaded.imported_modules[0].list_functions() == ["addone"]
    b = kiln.nd.empty((16,))
    loaded["addone"](np.zeros(16, "float32"), b)
    assert (b.numpy() == 1).all()
    with pytest.raises(KilnError, match="can not be|cannot be re-linked"):
        mixed = _Payload("x")
        mixed.import_module(load_module(path).imported_modules[0])
        mixed.export_library(tmp_path / "mixed.so")


def test_module_without_a_loader_or_a_library(tmp_path):
    class Unknown(_Payload):
        type_key = "test_unregistered"

    with pytest.raises(KilnError, match="no function"):
        Unknown("x")["missing"]
    with pytest.raises(KilnError, match="has no entry function"):
        Module()()
    with pytest.raises(KilnError, match="kiln exports shared libraries only"):
        Unknown("x").export_library(tmp_path / "lib.tar")
    with pytest.raises(KilnError, match="no such file"):
        load_module(tmp_path / "missing.so")
    with pytest.raises(KilnError, match="is not a file"):  # found by probing the API: IsADirectoryError
        load_module(tmp_path)
    with pytest.raises(TypeError, match="load_module takes a path, not NoneType"):  # a KilnError too
        load_module(None)
    not_kiln = tmp_path / "plain.so"
    src = tmp_path / "plain.c"
    src.write_text("int f(void) { return 1; }\n")
    if HAVE_CC:
        subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(not_kiln)], check=True)
        with pytest.raises(KilnError, match="not a library built by kiln"):
            load_module(not_kiln)


def test_plain_calling_convention_checks_in_python(target):
    """A PrimFunc compiled without MakePackedAPI is called with data pointers; Python checks its arguments."""
    mod = _addone_module()
    build = kiln.get_global_func(f"target.build.{target}")
    m = build(mod, kiln.target.Target(target))
    a, b = np.arange(16, dtype="float32"), kiln.nd.empty((16,))
    m["addone"](a, b)
    np.testing.assert_array_equal(b.numpy(), a + 1)
    with pytest.raises(RuntimeArgumentError, match=r"addone: argument 1 \(B\): expected shape \(16,\), got \(4,\)"):
        m["addone"](a, kiln.nd.empty((4,)))
    with pytest.raises(RuntimeArgumentError, match="expects 2 arguments"):
        m["addone"](a)
    with pytest.raises(RuntimeArgumentError, match=r"argument 0 \(A\): expected dtype float32, got int32"):
        m["addone"](a.astype("int32"), b)


def test_time_evaluator(target):
    m = kiln.build(_addone_module(), target=target)
    a, b = kiln.nd.array(np.zeros(16, "float32")), kiln.nd.empty((16,))
    result = m.time_evaluator("addone", kiln.cpu(0), number=3, repeat=2)(a, b)
    assert len(result.results) == 2 and all(r > 0 for r in result.results)
    assert result.min <= result.mean <= result.max
    assert "mean (ms)" in str(result)
    timed = m.time_evaluator(m.entry_name, kiln.cpu(0), number=1, repeat=1, min_repeat_ms=5)(a, b)
    assert timed.mean > 0


def test_get_source(target):
    m = kiln.build(_addone_module(), target=target)
    if target == "c":
        assert "int32_t addone(" in m.get_source() and m.get_source("c") == m.get_source()
        assert m.get_source("ll") == ""
    else:
        assert "define" in m.get_source() and "@addone" in m.get_source("ll")
        assert m.get_source("c") == ""


@pytest.mark.parametrize("damage", ["truncate", "flip", "append", "not_kiln"])
def test_damaged_libraries_are_refused_before_loading(tmp_path, damage):
    """A library cut short (which dlopen would map and crash on with SIGBUS), altered, or not exported by kiln is
    refused by load_module with a KilnError, never mapped."""
    import subprocess
    import sys

    from kiln import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    path = str(tmp_path / "lib.so")
    kiln.build(te.create_schedule(B.op), [A, B], target="c", name="twice").export_library(path)
    data = open(path, "rb").read()
    damaged = {"truncate": data[: len(data) // 2], "flip": data[:100] + bytes([data[100] ^ 1]) + data[101:],
               "append": data + b"more", "not_kiln": data[:-48]}[damage]
    bad = tmp_path / "bad.so"
    bad.write_bytes(damaged)
    with pytest.raises(KilnError, match="load_module: .*bad.so"):
        kiln.runtime.load_module(str(bad))
    # and in a fresh process, which must not die of a signal either
    code = f"import kiln\ntry:\n    kiln.runtime.load_module({str(bad)!r})\nexcept kiln.error.KilnError:\n    print('refused')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "refused", done.stderr


def test_corrupt_parameter_files_raise_kiln_errors():
    """Random damage to a saved parameter dictionary (cut short, bytes changed) loads or raises KilnError, never
    another exception."""
    import random

    blob = bytes(kiln.relay.save_param_dict({"w": np.ones((3, 4), "float32"), "b": np.arange(5),
                                             "mask": np.array([True, False])}))
    rng = random.Random(0)
    for _ in range(3000):
        data = bytearray(blob)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            kiln.relay.load_param_dict(bytes(data))
        except KilnError:
            pass
