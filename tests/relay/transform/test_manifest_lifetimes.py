import numpy as np

import kiln
from kiln import relay

ML = relay.transform.ManifestLifetimes


def _kills(expr):
    """The variable names killed, in program order."""
    names = []
    relay.analysis.post_order_visit(expr, lambda e: names.append(e.args[0].name_hint) if isinstance(e, relay.Call)
                                    and getattr(e.op, "name", "") == "memory.kill" else None)
    return names


def _main(text):
    return ML()(relay.parse(text))["main"]


def test_each_variable_dies_right_after_its_last_use():
    after = _main("""
        #[version = "0.0.5"]
        def @main(%x: Tensor[(3), float32]) {
          let %y = add(%x, %x);
          let %z = multiply(%y, %x);
          let %w = add(%z, %z);
          %w
        }""")
    assert sorted(_kills(after)) == ["x", "y", "z"]
    # the kill of %x comes after %z, its last use
    let = after.body
    seen = []
    while isinstance(let, relay.Let):
        seen.append(let.var.name_hint if not _kills(let.value) else "kill " + _kills(let.value)[0])
        let = let.body
    assert seen.index("kill x") > seen.index("z") and seen.index("kill y") > seen.index("z")


def test_aliases_are_read_as_the_variable_and_never_killed_on_their_own():
    after = _main("""
        #[version = "0.0.5"]
        def @main(%x: Tensor[(3), float32]) {
          let %a = %x;
          let %y = add(%a, %a);
          %y
        }""")
    assert _kills(after) == ["x"]


def test_a_variable_used_after_a_nested_if_is_not_killed_inside_it():
    text = """
        #[version = "0.0.5"]
        def @main(%c: bool, %d: bool, %x: Tensor[(3), float32]) {
          let %r = if (%c) {
            let %s = if (%d) { let %t = add(%x, %x); %t } else { %x };
            %s
          } else {
            let %u = negative(%x);
            %u
          };
          let %v = add(%r, %x);
          %v
        }"""
    mod = ML()(relay.parse(text))
    killed_inside = _kills(mod["main"].body.value)
    assert "x" not in killed_inside and _kills(mod["main"])[-1] == "x"
    data = np.arange(3, dtype="float32")
    for c in (True, False):
        for d in (True, False):
            got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(np.bool_(c), np.bool_(d), data)
            want = (2 * data if d else data) + data if c else -data + data
            np.testing.assert_allclose(got.numpy(), want)
    assert kiln.transform.get_pass("ManifestLifetimes").info.opt_level == 0
