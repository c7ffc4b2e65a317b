"""ManifestLifetimes: a ``memory.kill(%v)`` right after the binding at which ``%v`` dies (TVM's VM pass).

The input is in A-normal form. First aliases go: ``let %y = %x`` is dropped and ``%y`` read as ``%x`` (the VM gives
both one register, so killing one would kill the other), likewise a match binding its whole value to a variable.
Then a control-flow graph is built with one node per let binding (and one for the final expression): a binding
whose value is an ``if`` or a ``match`` ends its basic block, each branch is a block of its own, and the bindings
after it start a block the branches flow into. Liveness is the classic backward dataflow fixpoint
(``live_in = use + (live_out - def)``, ``live_out`` the union of the successors' ``live_in``), where a node uses the
variables its value reads (only the condition of an ``if``, the scrutinee of a ``match``). After each binding the
variables in its ``live_in`` but not its ``live_out`` are killed, in the order they became live.

One difference from TVM: the bindings after an ``if`` nested in a branch flow on to what follows the outer one
(TVM links only the branch's first block there, so a variable used after the outer ``if`` could be killed inside).
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ..adt import Clause, Match, PatternVar
from ..expr import Call, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator, expr_children
from ..function import Function
from ..op.memory import kill
from .function_pass import FunctionPass


class _AliasEliminator(ExprMutator):
    """Read every alias of a variable as the variable itself and drop the alias bindings."""

    def __init__(self):
        super().__init__()
        self.alias: dict = {}

    def visit_var(self, var):
        return self.alias.get(var.vid, var)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        kept = []
        for binding in chain:
            if isinstance(binding.value, Var):
                self.alias[binding.var.vid] = self.visit(binding.value)
            else:
                kept.append((binding.var, self.visit(binding.value)))
        result = self.visit(body)
        for var, value in reversed(kept):
            result = Let(var, value, result)
        return result

    def visit_match(self, match):
        if not isinstance(match.data, Var):
            return super().visit_match(match)
        data = self.visit(match.data)
        clauses = []
        for clause in match.clauses:
            if isinstance(clause.lhs, PatternVar):
                self.alias[clause.lhs.var.vid] = data
            clauses.append(Clause(clause.lhs, self.visit(clause.rhs)))
        return match.with_fields(data=data, clauses=tuple(clauses))


class _Block:
    __slots__ = ("nodes", "succ", "pred")

    def __init__(self):
        self.nodes: list = []
        self.succ: list = []
        self.pred: list = []


class _Node:
    __slots__ = ("expr", "block", "index")

    def __init__(self, expr, block):
        self.expr, self.block, self.index = expr, block, len(block.nodes)
        block.nodes.append(self)

    def successors(self):
        if self.index + 1 < len(self.block.nodes):
            return [self.block.nodes[self.index + 1]]
        return [b.nodes[0] for b in self.block.succ if b.nodes]

    def predecessors(self):
        if self.index > 0:
            return [self.block.nodes[self.index - 1]]
        return [b.nodes[-1] for b in self.block.pred if b.nodes]


def _link(src, dst):
    src.succ.append(dst)
    dst.pred.append(src)


class _ControlFlowGraph:
    def __init__(self, func):
        self.let_nodes: dict = {}
        self.order: list = []
        self.build(func.body, _Block())

    def build(self, expr, block):
        """Add ``expr``'s nodes to ``block``; returns the block control leaves ``expr`` from."""
        while isinstance(expr, Let):
            node = _Node(expr, block)
            self.let_nodes[expr] = node
            self.order.append(node)
            value = expr.value
            branches = (value.true_branch, value.false_branch) if isinstance(value, If) else \
                tuple(c.rhs for c in value.clauses) if isinstance(value, Match) else ()
            if branches:
                after = _Block()
                for branch in branches:
                    start = _Block()
                    _link(block, start)
                    _link(self.build(branch, start), after)
                block = after
            expr = expr.body
        self.order.append(_Node(expr, block))
        return block


def _uses(expr) -> dict:
    """The variables ``expr`` reads (by identity, in order), for liveness: an if reads its condition, a match its
    scrutinee, a function nothing."""
    found: dict = {}
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Var):
            found.setdefault(e.vid, e)
        elif isinstance(e, Call):
            stack.extend(reversed((e.op, *e.args)))
        elif isinstance(e, Tuple):
            stack.extend(reversed(e.fields))
        elif isinstance(e, TupleGetItem):
            stack.append(e.tuple_value)
        elif isinstance(e, If):
            stack.append(e.cond)
        elif isinstance(e, Match):
            stack.append(e.data)
        elif isinstance(e, RefCreate | RefRead | RefWrite):
            stack.extend(reversed(expr_children(e)))
    return found


def _liveness(cfg):
    """``(live_in, live_out)`` of every node: dicts from node to ``{vid: var}``."""
    use, define = {}, {}
    for node in cfg.order:
        is_let = isinstance(node.expr, Let)
        use[node] = _uses(node.expr.value if is_let else node.expr)
        define[node] = node.expr.var.vid if is_let else None
    live_in: dict = {n: {} for n in cfg.order}
    live_out: dict = {n: {} for n in cfg.order}
    worklist = list(reversed(cfg.order))
    while worklist:
        node = worklist.pop(0)
        new_in = dict(use[node])
        for vid, var in live_out[node].items():
            if vid != define[node]:
                new_in.setdefault(vid, var)
        new_out: dict = {}
        for succ in node.successors():
            for vid, var in live_in[succ].items():
                new_out.setdefault(vid, var)
        changed = new_in.keys() != live_in[node].keys() or new_out.keys() != live_out[node].keys()
        live_in[node], live_out[node] = new_in, new_out
        if changed:
            worklist.extend(node.predecessors())
    return live_in, live_out


class _KillInserter(ExprMutator):
    def __init__(self, cfg, live_in, live_out):
        super().__init__()
        self.cfg, self.live_in, self.live_out = cfg, live_in, live_out

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = []
        for binding in chain:
            value = binding.value if isinstance(binding.value, Function) else self.visit(binding.value)
            bindings.append((binding.var, value))
            node = self.cfg.let_nodes[binding]
            out = self.live_out[node]
            bindings.extend((Var("x"), kill(var)) for vid, var in self.live_in[node].items() if vid not in out)
        result = self.visit(body)
        for var, value in reversed(bindings):
            result = Let(var, value, result)
        return result


def manifest_lifetimes(func):
    """``func`` (in A-normal form) with its aliases removed and a ``memory.kill`` after each variable's last use."""
    func = _AliasEliminator().visit(func)
    cfg = _ControlFlowGraph(func)
    live_in, live_out = _liveness(cfg)
    return func.with_fields(body=_KillInserter(cfg, live_in, live_out).visit(func.body))


@register_pass("ManifestLifetimes")
@dataclass(frozen=True)
class ManifestLifetimes(FunctionPass):
    """Insert ``memory.kill`` where each variable dies, so the VM frees registers early (TVM's pass of that name)."""

    info = PassInfo(0, "ManifestLifetimes")

    def transform_function(self, func, mod, ctx):
        return manifest_lifetimes(func)
