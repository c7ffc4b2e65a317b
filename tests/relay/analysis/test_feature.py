from kiln import relay
from kiln.relay.analysis import Feature, detect_feature

F = Feature


def test_tree_graph_and_let_features():
    x = relay.var("x", shape=(2,))
    y = relay.add(x, x)
    tree = relay.Function([x], relay.multiply(relay.add(x, x), relay.add(x, x)))
    graph = relay.Function([x], relay.multiply(y, y))
    assert detect_feature(tree) == {F.fVar, F.fFunction, F.fOp, F.fCall}
    assert detect_feature(graph) == {F.fVar, F.fFunction, F.fOp, F.fCall, F.fGraph}
    v = relay.var("v")
    assert F.fLet in detect_feature(relay.Let(v, relay.const(1.0), relay.Tuple([v, v])))
    assert F.fGraph not in detect_feature(relay.Let(v, relay.const(1.0), relay.Tuple([v, v])))  # vars are atoms


def test_recursive_let_and_module_functions():
    ftype = relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32"))
    f, n = relay.var("f", ftype), relay.var("n", shape=(), dtype="int32")
    loop = relay.Function([n], relay.If(relay.equal(n, relay.const(0)), n, relay.Call(f, [n - relay.const(1)])))
    found = detect_feature(relay.Let(f, loop, f))
    assert {F.fLetRec, F.fIf, F.fConstant} <= found
    mod = relay.parse("""
        #[version = "0.0.5"]
        def @g(%a: Tensor[(2), float32]) { (%a, %a).0 }
    """)
    assert {F.fTuple, F.fTupleGetItem} <= detect_feature(mod)
    assert detect_feature(relay.const(1), mod) == detect_feature(mod, relay.const(1)) == detect_feature(mod) | {
        F.fConstant}
