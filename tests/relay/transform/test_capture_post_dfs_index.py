"""CapturePostDfsIndexInSpans: post-dfs indices and post-dominators in spans."""

import kiln
from kiln import relay


def test_indices_follow_post_dfs_order_and_columns_name_post_dominators():
    x = relay.var("x", shape=(3,))
    a = relay.add(x, x)
    body = relay.subtract(relay.negative(a), relay.exp(a))
    mod = relay.transform.CapturePostDfsIndexInSpans()(kiln.IRModule.from_expr(relay.Function([x], body)))
    main = mod["main"]
    # %x 0, subtract op 1, negative op 2, add op 3, add 4, negative 5, exp op 6, exp 7, subtract 8, fn 9
    assert (main.span.line, main.span.column) == (9, -1)
    assert (main.params[0].span.line, main.params[0].span.column) == (0, 4)  # every use of %x goes through add
    sub = main.body
    assert (sub.span.line, sub.span.column) == (8, 9)
    neg, exp = sub.args
    assert (neg.span.line, exp.span.line) == (5, 7)
    add = neg.args[0]
    assert (add.span.line, add.span.column) == (4, 8)  # its two uses meet again at the subtract
    assert add is exp.args[0] and add.args[0] is main.params[0]  # sharing and the parameter are kept
