"""Systems of integer constraints and the linear-equation solver (TVM's ``arith.int_solver``:
``IntConstraints``, ``IntConstraintsTransform``, ``solve_linear_equations``).

The equations ``A x = y`` among a system's relations (linear with constant coefficients) are brought to Smith normal
form ``U A V = S`` (``S`` diagonal) by row and column operations, each applied to the right-hand sides ``y`` and to
the unknowns ``V^-1 x`` as it is applied to the matrix. Then ``S z = U y`` with ``z = V^-1 x`` is solved row by row:
a row ``s z_j = u`` needs ``u % |s| == 0`` (a relation of the solution) and gives ``z_j = u // s``; a zero row needs
``u == 0``; a ``z_j`` without a row is free and becomes a new variable ``n<k>``. ``x = V z`` expresses the old
variables by the new ones; the new variables' ranges follow from the old ones' by interval evaluation, and the old
ranges become relations of the solution. An unsatisfiable system gives the solution ``{false}``.
"""

from dataclasses import dataclass, field

from ..ir.node import IGNORE, Node
from ..tir import expr as E
from ..tir import op as _op
from ..tir.stmt_functor import substitute


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IntConstraints(Node):
    """Integer ``variables`` with ``ranges`` (``{Var: Range}``, for some of them) and ``relations`` (conditions
    on them) (TVM's ``arith.IntConstraints``)."""

    variables: tuple
    ranges: dict
    relations: tuple
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "arith.IntConstraints"

    def __post_init__(self):
        object.__setattr__(self, "variables", tuple(self.variables or ()))
        object.__setattr__(self, "ranges", dict(self.ranges or {}))
        object.__setattr__(self, "relations", tuple(E.convert(r) for r in (self.relations or ())))

    def __str__(self):
        return f"IntConstraints({list(self.variables)}, {self.ranges}, {list(self.relations)})"

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IntConstraintsTransform(Node):
    """Two equivalent systems and the maps between their variables (TVM's ``arith.IntConstraintsTransform``):
    ``src_to_dst`` expresses each source variable by destination variables, ``dst_to_src`` the reverse."""

    src: IntConstraints
    dst: IntConstraints
    src_to_dst: dict
    dst_to_src: dict
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "arith.IntConstraintsTransform"

    def __post_init__(self):
        object.__setattr__(self, "src_to_dst", dict(self.src_to_dst or {}))
        object.__setattr__(self, "dst_to_src", dict(self.dst_to_src or {}))

    def __str__(self):
        return f"IntConstraintsTransform({self.src} -> {self.dst}, {self.src_to_dst}, {self.dst_to_src})"

    __repr__ = __str__


def _ext_gcd(a, b):
    """``(g, x, y)`` with ``a * x + b * y == g == gcd(a, b)`` (g may be negative, as the rows it combines)."""
    x0, y0, x1, y1 = 1, 0, 0, 1
    while b:
        q = int(a / b)  # truncating, as C++'s
        a, b = b, a - q * b
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    return a, x0, y0


def _const(v, like):
    return _op.const(v, like.dtype)


def _combine(ca, a, cb, b, sign):
    """``ca * a + cb * b`` (``sign`` 1) or ``ca * a - cb * b`` (``sign`` -1)."""
    left, right = _op.multiply(_const(ca, a), a), _op.multiply(_const(cb, b), b)
    return _op.add(left, right) if sign > 0 else _op.subtract(left, right)


def smith_normal_form_diag(S, V, x, y):
    """Diagonalize ``S`` (m x n, lists of ints) in place, applying the row operations to ``y`` and the column
    operations to ``V`` (n x n) and the unknowns ``x``."""
    if not S or not V:
        return
    m, n = len(S), len(S[0])
    index = 0
    while index < min(m, n):
        best = index  # the row with the smallest nonzero entry in this column
        for i in range(index, m):
            if S[i][index] != 0 and (S[best][index] == 0 or abs(S[i][index]) < abs(S[best][index])):
                best = i
        S[index], S[best] = S[best], S[index]
        y[index], y[best] = y[best], y[index]
        if S[index][index] == 0:  # bring a nonzero column here
            for j in range(index + 1, n):
                if S[index][j] != 0:
                    for row in S[index:]:
                        row[index], row[j] = row[j], row[index]
                    x[index], x[j] = x[j], x[index]
                    for row in V:
                        row[index], row[j] = row[j], row[index]
                    break
        if S[index][index] == 0:
            index += 1
            continue
        for i in range(index + 1, m):  # clear the column below
            if S[i][index] != 0:
                p, q = S[index][index], S[i][index]
                g, a, b = _ext_gcd(p, q) if q % p else (p, 1, 0)
                mg, ng = p // g, q // g
                for j in range(index, len(S[i])):
                    S[index][j], S[i][j] = a * S[index][j] + b * S[i][j], ng * S[index][j] - mg * S[i][j]
                y[index], y[i] = _combine(a, y[index], b, y[i], 1), _combine(ng, y[index], mg, y[i], -1)
        changed = False
        for j in range(index + 1, n):  # clear the row to the right
            if S[index][j] != 0:
                p, q = S[index][index], S[index][j]
                if q % p:
                    g, a, b = _ext_gcd(p, q)
                    changed = True
                else:
                    g, a, b = p, 1, 0
                mg, ng = p // g, q // g
                for row in S[index:]:
                    row[index], row[j] = a * row[index] + b * row[j], ng * row[index] - mg * row[j]
                for row in V:
                    row[index], row[j] = a * row[index] + b * row[j], ng * row[index] - mg * row[j]
                x[index], x[j] = _combine(mg, x[index], ng, x[j], 1), _combine(b, x[index], a, x[j], -1)
        if not changed:  # a column operation can refill the column: then this index again
            index += 1


def _infer_ranges(new_to_old, old_vars, old_ranges, ana):
    from .int_set import eval_set

    old_ids = {id(v) for v in old_vars}
    ranges = {v: r for v, r in old_ranges.items() if id(v) not in old_ids}
    for var, expr in new_to_old.items():
        s = eval_set(expr, old_ranges, ana)
        if s.is_bounded():
            ranges[var] = E.Range.from_min_extent(s._min, ana.simplify(_op.subtract(_op.add(s._max, 1), s._min)))
    return ranges


def solve_linear_equations(equations, variables=None, ranges=None) -> IntConstraintsTransform:
    """Solve the linear equations among ``equations`` (a list of conditions, or an :class:`IntConstraints`) for
    ``variables`` with ``ranges``: the result's ``dst`` has the free variables left (none when the system has full
    rank), the relations a solution needs, and ``src_to_dst`` the old variables in terms of the new ones.

    Examples
    --------
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> sol = solve_linear_equations([tir.EQ(x + y, 20), tir.EQ(x - y, 10)], [x, y])
    >>> int(sol.src_to_dst[x]), int(sol.src_to_dst[y])
    (15, 5)
    """
    from .analyzer import Analyzer
    from .detect_linear import detect_linear_equation

    system = equations if isinstance(equations, IntConstraints) else IntConstraints(variables, ranges, equations)
    ana = Analyzer()
    for v, r in system.ranges.items():
        ana.bind(v, r)
    nvars = len(system.variables)
    V = [[int(i == j) for j in range(nvars)] for i in range(nvars)]
    x = list(system.variables)
    S, y, rest = [], [], []
    for eq in system.relations:
        if isinstance(eq, E.EQ):
            coeffs = detect_linear_equation(ana.simplify(_op.subtract(eq.a, eq.b)), list(system.variables))
            if len(coeffs) > 1 and all(isinstance(c, E.IntImm) for c in coeffs[:-1]):
                S.append([c.value for c in coeffs[:-1]])
                y.append(_op.subtract(_op.const(0, coeffs[-1].dtype), coeffs[-1]))
                continue
        rest.append(eq)
    smith_normal_form_diag(S, V, x, y)
    new_vars, relations, new_to_old, old_to_new = [], [], {}, {}
    for j, row in enumerate(S):
        if j >= nvars or row[j] == 0:
            rel = ana.simplify(_op.equal(y[j], 0))
        else:
            rel = ana.simplify(_op.equal(_op.floormod(y[j], abs(row[j])), 0))
        if _op.is_const_int(rel, 0):
            return IntConstraintsTransform(system, IntConstraints((), {}, (_op.const(False),)), {}, {})
        if not _op.is_const_int(rel, 1):
            relations.append(rel)
    solution_z = []
    for j in range(nvars):
        if j >= len(S) or S[j][j] == 0:
            to_old = ana.simplify(x[j])
            name = f"n{len(new_vars)}" + (f"_{to_old.name_hint}" if isinstance(to_old, E.Var) else "")
            v = E.Var(name, x[j].dtype)
            solution_z.append(v)
            new_vars.append(v)
            new_to_old[v] = to_old
        else:
            s = S[j][j]
            rhs = y[j] if s >= 0 else _op.subtract(_op.const(0, y[j].dtype), y[j])
            solution_z.append(ana.simplify(_op.floordiv(rhs, _const(abs(s), rhs))))
    for i, var in enumerate(system.variables):
        e = _op.const(0, var.dtype)
        for j in range(nvars):
            e = _op.add(e, _op.multiply(_op.const(V[i][j], var.dtype), solution_z[j]))
        old_to_new[var] = ana.simplify(e)
    new_ranges = _infer_ranges(new_to_old, system.variables, system.ranges, ana)
    sol_ana = Analyzer()
    for v, r in new_ranges.items():
        sol_ana.bind(v, r)
    for var in system.variables:
        rng = system.ranges.get(var)
        if rng is None:
            continue
        expr = old_to_new[var]
        for cond in (_op.less_equal(rng.min, expr), _op.less(expr, _op.add(rng.min, rng.extent))):
            cond = sol_ana.simplify(cond)
            if not _op.is_const_int(cond, 1):
                relations.append(cond)
    relations.extend(substitute(c, old_to_new) for c in rest)
    return IntConstraintsTransform(system, IntConstraints(new_vars, new_ranges, relations), old_to_new, new_to_old)
