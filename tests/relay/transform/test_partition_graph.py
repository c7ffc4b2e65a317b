"""PartitionGraph: each annotated region becomes a global function for its compiler, called where the region was;
the partitioned program computes the same values through the interpreter, relay.build and the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import CodegenError
from kiln.ir import assert_structural_equal
from kiln.relay.op.annotation import compiler_begin as cb
from kiln.relay.op.annotation import compiler_end as ce
from kiln.relay.testing.temp_op_attr import TempOpAttr


def _partition(func, **kwargs):
    return relay.transform.PartitionGraph(**kwargs)(kiln.IRModule.from_expr(func))


def _interpret(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def _built(mod, *args, target="llvm"):
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target)
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.run(**{f"p{i}": a for i, a in enumerate(args)})
    return m.get_output(0).numpy()


def _region_function(params, body, compiler, symbol):
    func = relay.Function(params, body)
    return func.with_attrs({"Primitive": 1, "Inline": 1, "Compiler": compiler, "global_symbol": symbol})


def test_region_becomes_a_global_function_with_mangled_symbol():
    x, y = relay.var("p0", shape=(4, 3)), relay.var("p1", shape=(4, 3))
    add = relay.add(cb(x, "ccompiler"), cb(y, "ccompiler"))
    part = _partition(relay.Function([x, y], relay.exp(ce(add, "ccompiler"))))
    a, b = relay.var("a", shape=(4, 3)), relay.var("b", shape=(4, 3))
    expected = kiln.IRModule()
    gv = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
    expected[gv] = _region_function([a, b], relay.add(a, b), "ccompiler", gv.name_hint)
    x2, y2 = relay.var("p0", shape=(4, 3)), relay.var("p1", shape=(4, 3))
    expected["main"] = relay.Function([x2, y2], relay.exp(relay.Call(gv, [x2, y2])))
    assert_structural_equal(part, relay.transform.InferType()(expected), map_free_vars=True)
    assert [p.name_hint for p in part[gv.name_hint].params] == ["ccompiler_0_i0", "ccompiler_0_i1"]
    data = [np.random.uniform(-1, 1, (4, 3)).astype("float32") for _ in range(2)]
    want = np.exp(data[0] + data[1])
    np.testing.assert_allclose(_interpret(part, *data), want, rtol=1e-5)
    for target in ("llvm", "c"):
        np.testing.assert_allclose(_built(part, *data, target=target), want, rtol=1e-5)


def test_full_flow_annotate_merge_partition_runs_like_the_original():
    x, w = relay.var("p0", shape=(6,)), relay.var("p1", shape=(6,))
    before = relay.Function([x, w], relay.tanh(relay.multiply(relay.subtract(relay.add(x, w), w), x)))
    mod = kiln.IRModule.from_expr(before)
    with TempOpAttr("add", "target.ccompiler", lambda c: True), \
            TempOpAttr("subtract", "target.ccompiler", lambda c: True), \
            TempOpAttr("multiply", "target.ccompiler", lambda c: True):
        part = kiln.transform.Sequential([relay.transform.AnnotateTarget("ccompiler"),
                                          relay.transform.MergeCompilerRegions(),
                                          relay.transform.PartitionGraph()])(mod)
    externals = [gv.name_hint for gv, f in part.functions.items() if "Compiler" in f.attrs]
    assert externals == ["tvmgen_default_ccompiler_main_0"]  # the three operators form one region
    data = [np.random.uniform(-1, 1, 6).astype("float32") for _ in range(2)]
    want = np.tanh((data[0] + data[1] - data[1]) * data[0])
    np.testing.assert_allclose(_interpret(part, *data), want, rtol=1e-5)
    np.testing.assert_allclose(_built(part, *data), want, rtol=1e-5)
    exe = relay.vm.compile(part, target="llvm")
    vm = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0))
    np.testing.assert_allclose(vm.run(*data).numpy(), want, rtol=1e-5)


def test_two_outputs_become_a_tuple_and_a_constant_input_is_bound():
    x = relay.var("p0", shape=(3,))
    r = relay.nn.relu(relay.add(cb(x, "ccompiler"), cb(relay.const(np.ones(3, "float32")), "ccompiler")))
    n = relay.negative(r)
    out = relay.subtract(ce(r, "ccompiler"), ce(n, "ccompiler"))
    part = _partition(relay.Function([x], out))
    region = part["tvmgen_default_ccompiler_main_0"]
    assert len(region.params) == 1 and isinstance(region.body, relay.Tuple)  # the constant is inside
    unbound = _partition(relay.Function([x], out), bind_constants=False)
    assert len(unbound["tvmgen_default_ccompiler_main_0"].params) == 2
    data = np.random.uniform(-1, 1, 3).astype("float32")
    want = 2 * np.maximum(data + 1, 0)
    for mod in (part, unbound):
        np.testing.assert_allclose(_interpret(mod, data), want, rtol=1e-6)
        np.testing.assert_allclose(_built(mod, data), want, rtol=1e-6)


def test_default_regions_stay_and_names_are_sanitized():
    x = relay.var("p0", shape=(2,))
    body = ce(relay.abs(cb(ce(relay.nn.relu(cb(x, "my-lib++")), "my-lib++"), "default")), "default")
    part = _partition(relay.Function([x], body))
    assert [gv.name_hint for gv in part.functions if gv.name_hint != "main"] == ["tvmgen_default_my_lib___main_0"]
    assert part["main"].body.op.name == "abs"  # the default annotations are gone


def test_a_compiler_without_code_generator_cannot_be_built():
    x = relay.var("p0", shape=(2,))
    part = _partition(relay.Function([x], ce(relay.nn.relu(cb(x, "nowhere")), "nowhere")))
    with pytest.raises(CodegenError, match="relay.ext.nowhere"):
        relay.build(part, target="llvm")
