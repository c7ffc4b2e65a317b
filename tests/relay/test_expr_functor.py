from kiln import relay
from kiln.ir import Op
from kiln.relay import ExprMutator, ExprVisitor, post_order_visit


class CountCalls(ExprVisitor):
    def __init__(self):
        super().__init__()
        self.count = 0

    def visit_call(self, call):
        self.count += 1
        super().visit_call(call)


def test_visitor_visits_shared_once():
    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    e = relay.add(shared, shared)
    counter = CountCalls()
    counter.visit(e)
    assert counter.count == 2


def test_mutator_keeps_identity_and_rewrites():
    x = relay.var("x", shape=(2,))
    e = relay.nn.relu(relay.exp(x))
    assert ExprMutator().visit(e) is e

    class ReluToSigmoid(ExprMutator):
        def visit_call(self, call):
            call = super().visit_call(call)
            if call.op == Op.get("nn.relu"):
                return relay.sigmoid(call.args[0])
            return call

    out = ReluToSigmoid().visit(relay.Function([x], e))
    assert out.body.op.name == "sigmoid" and out.body.args[0] is e.args[0]


def test_chain_of_ten_thousand_without_recursion_error():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10000):
        y = relay.nn.relu(y)
    counter = CountCalls()
    counter.visit(y)
    assert counter.count == 10000

    class Swap(ExprMutator):
        def visit_call(self, call):
            call = super().visit_call(call)
            return relay.sigmoid(call.args[0])

    out = Swap().visit(y)
    assert out.op.name == "sigmoid"


def test_let_chain_mutator_and_visitor():
    x = relay.var("x", shape=(2,))
    body = x
    bindings = []
    for i in range(3000):
        v = relay.var(f"v{i}")
        bindings.append((v, relay.exp(body)))
        body = v
    for v, value in reversed(bindings):
        body = relay.Let(v, value, body)
    counter = CountCalls()
    counter.visit(body)
    assert counter.count == 3000
    assert ExprMutator().visit(body) is body


def test_post_order_visit_order():
    x = relay.var("x", shape=(2,))
    a = relay.exp(x)
    e = relay.add(a, relay.log(a))
    seen = []
    post_order_visit(e, lambda n: seen.append(n))
    assert seen.index(x) < seen.index(a) < seen.index(e.args[1]) < seen.index(e)
    assert seen.count(a) == 1
