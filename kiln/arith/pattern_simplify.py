"""TVM's ``RewriteSimplifier`` (``Analyzer.rewrite_simplify``): rule tables of pattern identities, tried in order.

The walk is TVM's: children first (a ``select``/``if_then_else`` branch under its condition as a constraint, a trivial
``let`` substituted), then constant folding (:func:`kiln.arith.pattern.try_const_fold`), then, for comparisons and
logic, a constraint in scope that states the expression or its negation, then the node kind's rule table of
:mod:`kiln.arith.rules`. A rule written as "recursive" simplifies its result again, at most
:data:`MAX_RECURSION` levels deep; the whole walk runs at most twice (:meth:`PatternSimplifier.__call__`).

Facts come from the owning :class:`kiln.arith.Analyzer`: bounds, modular sets, bound variables, and the constraints
of its ``constraint_scope``; each constraint is simplified by this simplifier the first time it is needed and kept as
its conjuncts and their negations (TVM's ``literal_constraints_``).

The lowering pipeline uses the analyzer's own simplifier (:mod:`kiln.arith.rewrite_simplify`, a canonical-form
engine); this one gives TVM's rewrite results for users who call ``rewrite_simplify``.
"""

from ..tir import expr as E
from ..tir import op as _op
from ..tir.functor import StmtExprMutator, _binary_mutate
from .linear import expr_key
from .pattern import make_const, try_const_fold
from .rules import RULES
from .rules.common import EQ_, GE_, GT_, LE_, LT_, NE_, UNKNOWN, is_index_type, run
from .rules.compare import apply_eq, apply_lt, apply_not

MAX_RECURSION = 5
"""How deep a recursive rule's result is simplified again (TVM's ``kMaxRecurDepth``)."""
LITERAL_CACHE_LIMIT = 4096
"""Simplified constraints kept before those of closed scopes are dropped."""


class PatternSimplifier(StmtExprMutator):
    """TVM's rewrite simplifier; use through :meth:`kiln.arith.Analyzer.rewrite_simplify`."""

    def __init__(self, analyzer):
        self.analyzer = analyzer
        self.recur_depth = 0
        self._literals: dict = {}  # id(raw constraint) -> (raw, its literal constraints)

    def __call__(self, expr):
        """Simplify ``expr``: the walk repeated while it changes, at most twice (as TVM's ``operator()``)."""
        res = E.convert(expr)
        for _ in range(2):
            new = self.visit_expr(res)
            if new is res:
                return res
            res = new
        return res

    # ---- services the rules use
    def recursive_rewrite(self, expr):
        """Simplify a rule's result again (up to :data:`MAX_RECURSION` levels)."""
        if self.recur_depth >= MAX_RECURSION:
            return expr
        self.recur_depth += 1
        try:
            return self.visit_expr(expr)
        finally:
            self.recur_depth -= 1

    def bound(self, e):
        """The analyzer's bound of ``e``, narrowed by constraints in scope that bound ``e`` (less a constant) by a
        constant, as TVM's const_int_bound records ``c <= expr`` constraints for any expression."""
        b = self.analyzer.const_int_bound(e)
        if not self.analyzer._scope_constraints:
            return b
        facts = self.analyzer._pattern_simplifier._literal_constraints()
        if not facts:
            return b
        from .const_int_bound import ConstIntBound
        from .rules.compare import constant_offset

        base, offset = constant_offset(e)
        key = expr_key(base)
        lo, hi = b.min_value, b.max_value
        for c in facts:
            kind = type(c)
            if kind not in (E.LT, E.LE, E.EQ):
                continue
            strict = 1 if kind is E.LT else 0
            if type(c.a) is E.IntImm and expr_key(c.b) == key:
                lo = max(lo, c.a.value + strict + offset)
                if kind is E.EQ:
                    hi = min(hi, c.a.value + offset)
            elif type(c.b) is E.IntImm and expr_key(c.a) == key:
                hi = min(hi, c.b.value - strict + offset)
                if kind is E.EQ:
                    lo = max(lo, c.b.value + offset)
        return b if (lo, hi) == (b.min_value, b.max_value) else ConstIntBound(lo, hi)

    def modular(self, e):
        return self.analyzer.modular_set(e)

    def can_prove_ge(self, e, value) -> bool:
        """TVM's ``CanProveGreaterEqual``: ``e >= value`` by the bounds of the simplified ``e``."""
        if type(e) is E.IntImm:
            return e.value >= value
        return self.bound(self.analyzer.rewrite_simplify(e)).min_value >= value

    def can_prove_less(self, e, value) -> bool:
        """TVM's ``CanProveLess``."""
        if type(e) is E.IntImm:
            return e.value < value
        return self.bound(self.analyzer.rewrite_simplify(e)).max_value < value

    def can_prove_equal(self, a, b) -> bool:
        """TVM's ``CanProveEqual``: ``a - b == 0`` proved by the analyzer."""
        a = E.convert(a)
        b = E.convert(b, a.dtype) if not isinstance(b, E.PrimExpr) else b
        if type(a) is E.IntImm and type(b) is E.IntImm:
            return a.value == b.value
        diff = self(_op.subtract(a, b))
        if type(diff) is E.IntImm:
            return diff.value == 0
        return self.analyzer.can_prove(_op.equal(_op.subtract(a, b), make_const(0, a.dtype)))

    def side_effect_free(self, e) -> bool:
        """No call in ``e`` writes state (TVM's ``SideEffect(e) <= kReadState``)."""
        from ..tir.stmt_functor import post_order_visit

        found = []
        post_order_visit(e, lambda n: found.append(n) if type(n) is E.Call and not _reads_only(n) else None)
        return not found

    def try_compare(self, a, b):
        """What the bounds say of ``a`` against ``b`` (TVM's ``TryCompare``): one of the ``CompareResult`` bits of
        :mod:`kiln.arith.rules.common`."""
        from .analyzer import Extension
        from .rules.product_sum import compare_product_and_sum

        out = UNKNOWN & self._compare_value(_op.subtract(a, b), 0)
        if out in (EQ_, LT_, GT_):
            return out
        out &= self._compare_known(a, b)
        if out in (EQ_, LT_, GT_) or not self.analyzer.enabled_extensions & Extension.ComparisonOfProductAndSum:
            return out
        return out & compare_product_and_sum(self, a, b)

    def _compare_value(self, e, val):
        diff = self.visit_expr(e)
        if type(diff) is E.IntImm:
            return EQ_ if diff.value == val else GT_ if diff.value > val else LT_
        b = self.bound(diff)
        if b.min_value == val == b.max_value:
            return EQ_
        if b.min_value > val:
            return GT_
        if b.max_value < val:
            return LT_
        if b.min_value >= val:
            return GE_
        if b.max_value <= val:
            return LE_
        if val == 0 and self.modular(diff).base != 0:
            return NE_
        return UNKNOWN

    def _compare_known(self, a, b):
        """What a constraint in scope states directly of ``a`` against ``b``."""
        ka, kb = expr_key(a), expr_key(b)
        out = UNKNOWN
        for c in self._literal_constraints():
            kind = type(c)
            if kind not in _FACTS:
                continue
            ca, cb = expr_key(c.a), expr_key(c.b)
            if (ca, cb) == (ka, kb):
                out &= _FACTS[kind]
            elif (ca, cb) == (kb, ka):
                out &= _FLIP[_FACTS[kind]]
        return out

    def known_literal(self, expr):
        """True/False (as a bool constant of ``expr``'s dtype) when a constraint in scope states ``expr`` or its
        negation (TVM's ``TryMatchLiteralConstraint``), else None."""
        literals = self._literal_constraints()
        if not literals:
            return None
        key = expr_key(expr)
        neg = expr_key(E.Not(expr)) if expr.dtype == "bool" else None
        for c in literals:
            k = expr_key(c)
            if k == key:
                return make_const(1, expr.dtype)
            if k == neg:
                return make_const(0, expr.dtype)
        return None

    def _literal_constraints(self):
        if len(self._literals) > LITERAL_CACHE_LIMIT:  # constraints of scopes long closed
            live = {id(raw) for raw in self.analyzer._scope_constraints}
            self._literals = {k: v for k, v in self._literals.items() if k in live}
        out = []
        for raw in self.analyzer._scope_constraints:
            entry = self._literals.get(id(raw))
            if entry is None or entry[0] is not raw:
                entry = (raw, None)
                self._literals[id(raw)] = entry  # a constraint being simplified does not consult itself
                entry = (raw, _literals_of(self(raw)))
                self._literals[id(raw)] = entry
            if entry[1]:
                out.extend(entry[1])
        return out

    # ---- the walk
    def _arith(self, op):
        ret = _binary_mutate(self, op)
        kind = type(ret)
        folded = try_const_fold(kind, ret.a, ret.b)
        if folded is not None:
            return folded
        return _run(RULES[kind], ret, self)

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = _arith
    visit_floor_div = visit_floor_mod = visit_min = visit_max = _arith

    def visit_eq(self, op):
        ret = _binary_mutate(self, op)
        folded = try_const_fold(E.EQ, ret.a, ret.b)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        return known if known is not None else apply_eq(ret, self)

    def visit_ne(self, op):
        ret = _binary_mutate(self, op)
        folded = try_const_fold(E.NE, ret.a, ret.b)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        if known is not None:
            return known
        if is_index_type(ret.a.dtype):
            result = self.try_compare(ret.a, ret.b)
            if result in (NE_, GT_, LT_):
                return make_const(1, ret.dtype)
            if result == EQ_:
                return make_const(0, ret.dtype)
            if result == GE_:
                return apply_lt(E.LT(ret.b, ret.a), self)
            if result == LE_:
                return apply_lt(E.LT(ret.a, ret.b), self)
        return apply_not(E.Not(apply_eq(E.EQ(ret.a, ret.b), self)), self)

    def visit_le(self, op):
        ret = _binary_mutate(self, op)
        folded = try_const_fold(E.LE, ret.a, ret.b)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        if known is not None:
            return known
        ret = apply_not(E.Not(apply_lt(E.LT(ret.b, ret.a), self)), self)
        if type(ret) is E.LE and is_index_type(ret.a.dtype):
            result = self.try_compare(ret.a, ret.b)
            if result in (LE_, LT_, EQ_):
                return make_const(1, ret.dtype)
            if result == GT_:
                return make_const(0, ret.dtype)
            if result == NE_:
                return apply_lt(E.LT(ret.a, ret.b), self)
            if result == GE_:
                return apply_eq(E.EQ(ret.a, ret.b), self)
        return ret

    def visit_gt(self, op):
        return self.visit_expr(E.LT(op.b, op.a))

    def visit_ge(self, op):
        return self.visit_expr(E.LE(op.b, op.a))

    def visit_lt(self, op):
        ret = _binary_mutate(self, op)
        folded = try_const_fold(E.LT, ret.a, ret.b)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        return known if known is not None else apply_lt(ret, self)

    def visit_not(self, op):
        ret = op.with_fields(a=self.visit_expr(op.a))
        folded = try_const_fold(E.Not, ret.a)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        return known if known is not None else apply_not(ret, self)

    def _logic(self, op):
        ret = self._branches(op)
        kind = type(ret)
        folded = try_const_fold(kind, ret.a, ret.b)
        if folded is not None:
            return folded
        known = self.known_literal(ret)
        return known if known is not None else _run(RULES[kind], ret, self)

    visit_and = visit_or = _logic

    def _branches(self, op):
        """The operands of ``&&``/``||``; with ``ApplyConstraintsToBooleanBranches`` each is simplified knowing
        the other holds (for ``&&``) or fails (for ``||``)."""
        from .analyzer import Extension

        if not self.analyzer.enabled_extensions & Extension.ApplyConstraintsToBooleanBranches:
            return _binary_mutate(self, op)
        operands = [op.a, op.b]
        since_update = 0
        for i in range(4):
            this, other = i % 2, 1 - i % 2
            constraint = operands[other] if type(op) is E.And else _normalize_not(E.Not(operands[other]))
            with self.analyzer.constraint_scope(constraint):
                updated = self.visit_expr(operands[this])
            if updated is not operands[this]:
                operands[this] = updated
                since_update = 0
            else:
                since_update += 1
                if since_update >= 2:
                    break
        if operands[0] is op.a and operands[1] is op.b:
            return op
        return type(op)(operands[0], operands[1])

    def visit_select(self, op):
        cond = self.visit_expr(op.condition)
        with self.analyzer.constraint_scope(cond):
            true_value = self.visit_expr(op.true_value)
        with self.analyzer.constraint_scope(self(E.Not(cond))):
            false_value = self.visit_expr(op.false_value)
        if type(cond) is E.IntImm:
            return true_value if cond.value else false_value
        if cond is op.condition and true_value is op.true_value and false_value is op.false_value:
            ret = op
        else:
            ret = E.Select(cond, true_value, false_value)
        if expr_key(ret.true_value) == expr_key(ret.false_value):
            return ret.true_value
        return ret

    def visit_call(self, op):
        from .rules.call import simplify_call

        if op.op.name == "tir.if_then_else":
            cond = self.visit_expr(op.args[0])
            with self.analyzer.constraint_scope(cond):
                true_value = self.visit_expr(op.args[1])
            with self.analyzer.constraint_scope(E.Not(cond)):
                false_value = self.visit_expr(op.args[2])
            if type(cond) is E.IntImm:
                return true_value if cond.value else false_value
            if cond is op.args[0] and true_value is op.args[1] and false_value is op.args[2]:
                ret = op
            else:
                ret = op.with_fields(args=(cond, true_value, false_value))
        else:
            ret = super().visit_call(op)
        if type(ret) is not E.Call:
            return ret
        return simplify_call(ret, self)

    def visit_reduce(self, op):
        for iv in op.axis:  # the reduction axes keep their domains (as TVM's IRMutatorWithAnalyzer)
            self.analyzer.bind(iv.var, iv.dom, allow_override=True)
        return super().visit_reduce(op)

    def visit_var(self, op):
        if op.dtype == "bool":
            known = self.known_literal(op)
            if known is not None:
                return known
        return self.analyzer._substitution(op)

    def visit_cast(self, op):
        ret = op.with_fields(value=self.visit_expr(op.value))
        return _op.cast(ret.value, ret.dtype)

    def visit_let(self, op):
        value = self.visit_expr(op.value)
        if type(value) in (E.IntImm, E.FloatImm) or isinstance(value, E.Var):
            with self.analyzer._temporary_binding(op.var, value):
                return self.visit_expr(op.body)
        body = self.visit_expr(op.body)
        if value is op.value and body is op.body:
            return op
        return E.Let(op.var, value, body)


_FACTS = {E.LT: LT_, E.LE: LE_, E.EQ: EQ_, E.NE: NE_, E.GT: GT_, E.GE: GE_}
_FLIP = {LT_: GT_, LE_: GE_, EQ_: EQ_, NE_: NE_, GT_: LT_, GE_: LE_}


def _reads_only(call) -> bool:
    from ..tir.expr import CallEffectKind

    effect = getattr(call.op, "effect", None)
    return effect is None or effect <= CallEffectKind.READ_STATE


def _run(table, node, s):
    out = run(table, node, s)
    return node if out is None else out


def _normalize_not(expr):
    """TVM's ``NormalizeBooleanOperators`` of a negation: pushed inward through ``!``, ``&&``, ``||`` and
    comparisons, so it can be compared with simplified expressions."""
    while type(expr) is E.Not:
        a = expr.a
        kind = type(a)
        if kind is E.Not:
            expr = a.a
            continue
        if kind is E.Or:
            return E.And(_normalize_not(E.Not(a.a)), _normalize_not(E.Not(a.b)))
        if kind is E.And:
            return E.Or(_normalize_not(E.Not(a.a)), _normalize_not(E.Not(a.b)))
        if kind in (E.LT, E.GT):
            return E.LE(a.b, a.a) if kind is E.LT else E.LE(a.a, a.b)
        if kind in (E.LE, E.GE):
            return E.LT(a.b, a.a) if kind is E.LE else E.LT(a.a, a.b)
        if kind is E.EQ:
            return E.NE(a.a, a.b)
        if kind is E.NE:
            return E.EQ(a.a, a.b)
        return expr
    if type(expr) is E.GE:
        return E.LE(expr.b, expr.a)
    if type(expr) is E.GT:
        return E.LT(expr.b, expr.a)
    return expr


def _literals_of(constraint):
    """The conjuncts of a simplified constraint and the negations of their negations (TVM's ``EnterConstraint``)."""
    out, stack = [], [constraint]
    while stack:
        c = stack.pop()
        if type(c) is E.And:
            stack.extend((c.b, c.a))
            continue
        out.append(c)
        if c.dtype == "bool":
            out.append(E.Not(_normalize_not(E.Not(c))))
        else:
            out.append(E.Not(E.EQ(c, make_const(0, c.dtype))))
    return out
