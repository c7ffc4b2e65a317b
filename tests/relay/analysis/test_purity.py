"""kiln/relay/analysis/purity.py: which let-bound values DeadCodeElimination may drop (TVM's purity rules)."""

from kiln import relay
from kiln.relay.analysis.purity import let_purity


def _purity_by_name(mod):
    names = {}

    def record(e):
        if isinstance(e, relay.Let):
            names[e.var.name_hint] = e.var.vid

    for func in mod.functions.values():
        relay.post_order_visit(func, record)
    purity = let_purity(mod)
    return {name: purity[vid] for name, vid in names.items()}


def test_effects_and_what_carries_them():
    mod = relay.parse("""#[version = "0.0.5"]
    def @writes(%r: ref(int32)) -> () { ref_write(%r, 1) }
    def @loops(%n: int32) -> int32 { if (%n == 0) { 0 } else { @loops(%n - 1) } }
    def @main(%x: Tensor[(2), float32], %g: fn (int32) -> int32) {
        let %r = ref(0);
        let %read = ref_read(%r);
        let %w = @writes(%r);
        let %l = @loops(3);
        let %pure = exp(%x);
        let %via_tuple = (%pure, %x);
        let %called_param = %g(1);
        let %alloc = memory.alloc_storage(8i64, alignment=64, dtype_hint="float32");
        let %f = fn (%a: int32) -> int32 { %a + 1 };
        let %call_f = %f(1);
        %pure
    }""")
    p = _purity_by_name(mod)
    assert p["r"] and p["pure"] and p["via_tuple"] and p["f"] and p["call_f"]
    assert p["l"]  # a recursive global function without effects is pure
    assert not p["read"] and not p["w"] and not p["alloc"]
    assert not p["called_param"]  # a parameter of function type may do anything
