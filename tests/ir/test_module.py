import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import GlobalVar, IRModule, structural_equal


def test_from_expr_wraps_free_vars_in_order():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = IRModule.from_expr(relay.add(x, y))
    main = mod["main"]
    assert isinstance(main, relay.Function)
    assert list(main.params) == [x, y]
    fn = relay.Function([x], x)
    assert IRModule.from_expr(fn)["main"] is fn


def test_lookup_set_update_and_attrs():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.exp(x))
    mod = IRModule({"main": f})
    gv = mod.get_global_var("main")
    assert mod[gv] is f and mod[GlobalVar("main")] is f
    mod["g"] = f
    assert "g" in mod and len(mod) == 2
    assert [g.name_hint for g in mod.get_global_vars()] == ["g", "main"]
    other = IRModule({"h": f})
    mod.update(other)
    assert set(g.name_hint for g in mod.functions) == {"main", "g", "h"}
    with pytest.raises(KilnError, match="no function @missing"):
        mod["missing"]
    with pytest.raises(KilnError, match="str or GlobalVar"):
        mod[3]
    tagged = mod.with_attr("executor", "graph")
    assert tagged.attrs["executor"] == "graph" and "executor" not in mod.attrs
    assert tagged["main"] is f


def test_module_structural_equality():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    assert structural_equal(IRModule({"main": relay.Function([x], x)}), IRModule({"main": relay.Function([y], y)}))
    assert not structural_equal(IRModule({"main": relay.Function([x], x)}), IRModule({"f": relay.Function([y], y)}))


def test_setting_an_expression_makes_a_function_of_its_free_variables():
    # TVM's Module_Add: mod["main"] = expr stores fn(free vars) { expr }
    x = relay.var("x", shape=(2,))
    mod = IRModule()
    mod["main"] = relay.add(x, x)
    main = mod["main"]
    assert isinstance(main, relay.Function) and list(main.params) == [x]
    mod["const"] = relay.const(1.0)
    assert isinstance(mod["const"], relay.Function) and not mod["const"].params
