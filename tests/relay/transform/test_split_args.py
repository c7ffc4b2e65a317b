import numpy as np

import kiln
from kiln import relay
from kiln.contrib import graph_executor


def _concat(n):
    xs = [relay.var(f"x{i}", shape=(2, 3)) for i in range(n)]
    return relay.Function(xs, relay.concatenate(xs, axis=1))


def _concats(expr):
    found = []
    relay.post_order_visit(expr, lambda e: found.append(e) if getattr(getattr(e, "op", None), "name", "") ==
                           "concatenate" else None)
    return found


def test_long_concatenate_becomes_a_chain_within_the_limit(check_pass):
    after = check_pass(_concat(10), relay.transform.SplitArgs(5))
    # 4 inputs per kernel (one parameter is the output): 4, then the partial result and 3 more, twice, then 1 + 0
    assert [len(c.args[0].args[0].fields) for c in _concats(after)] == [4, 4, 4]
    assert check_pass(_concat(3), relay.transform.SplitArgs(5)).body.op.name == "concatenate"
    assert len(_concats(check_pass(_concat(10), relay.transform.SplitArgs(0)))) == 1  # no limit


def test_split_concatenate_builds_and_runs():
    func = _concat(10)
    mod = relay.transform.SplitArgs(5)(relay.transform.InferType()(kiln.IRModule.from_expr(func)))
    lib = relay.build(mod, target="llvm")
    runner = graph_executor.GraphModule(lib["default"](kiln.cpu()))
    values = [np.random.default_rng(i).standard_normal((2, 3)).astype("float32") for i in range(10)]
    runner.run(**{f"x{i}": v for i, v in enumerate(values)})
    np.testing.assert_array_equal(runner.get_output(0).numpy(), np.concatenate(values, axis=1))
