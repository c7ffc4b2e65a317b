"""The parallel-op combiner shared by CombineParallelConv2D, CombineParallelDense and CombineParallelBatchMatmul.

How it works (TVM's ``combine_parallel_op.cc``):

1. Find groups. A walk over the function records, for every expression, the calls that use it (its "children");
   a call of the combined operator is recorded only as a child of its first argument, which thereby becomes a
   "root". For every root, its children that call the operator are grouped by ``can_ops_be_combined`` (compared
   with the group's first member). Each such call starts a *branch*: the call, then as long as the last element
   has exactly one child and that child is element-wise or broadcast, that child.
2. Combine each group with at least ``min_num_branches`` branches: ``make_combined_op`` builds one call of the
   operator over the concatenated (or stacked) weights. Then, level by level, the ops that follow in every branch
   are combined too while they agree (same operator and attributes, fed by the previous level at the same argument
   position, the other arguments compatible per ``is_arg_compatible``), their other arguments concatenated or
   stacked by ``make_combined_call_from_following_ops``. The level stops at the shortest branch.
3. ``update_group_output`` cuts the combined result back into one expression per branch (strided slices, or a
   split), which replaces the last combined element of each branch when the whole function is substituted.

A subclass supplies the five decisions named above; the group finding, level checks and substitution live here.
"""

from ...ir.op import Op
from ...ir.structural import structural_equal
from ..expr import Call
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.op import OpPattern


def dim_equal(a, b) -> bool:
    """Whether two shape dimensions (ints or symbolic expressions) are the same."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return structural_equal(a, b)


def shapes_equal(a, b) -> bool:
    """Whether two shapes have the same rank and the same dimensions."""
    return len(a) == len(b) and all(dim_equal(x, y) for x, y in zip(a, b, strict=True))


def _pattern(call) -> int:
    """The fusion pattern of a call's operator (OPAQUE for a call of anything but an operator)."""
    if not isinstance(call.op, Op):
        return OpPattern.OPAQUE
    pattern = call.op.get_attr("TOpPattern")
    return OpPattern.OPAQUE if pattern is None else int(pattern)


class _BranchGroupFinder(ExprVisitor):
    """Records who uses what, then cuts the uses of each root into groups of combinable branches."""

    def __init__(self, op, is_supported, compatible):
        super().__init__()
        self.op = op
        self.is_supported = is_supported
        self.compatible = compatible
        self.roots: dict = {}  # insertion-ordered set: results are deterministic
        self.children: dict = {}  # expr -> the calls using it, in visit order (identity keys)

    def visit_call(self, call):
        super().visit_call(call)
        if call.op is self.op and self.is_supported(call):
            self.roots[call.args[0]] = None
            self.children.setdefault(call.args[0], []).append(call)
        else:
            for arg in call.args:
                self.children.setdefault(arg, []).append(call)

    def find(self, expr) -> list:
        """The groups of branches in ``expr``; a branch is a list of calls starting with the operator's call."""
        self.visit(expr)
        groups: list = []
        for root in self.roots:
            first = len(groups)
            for child in self.children[root]:
                if child.op is not self.op:
                    continue
                branch = self._branch(child)
                for group in groups[first:]:
                    if self.compatible(child, group[0][0]):
                        group.append(branch)
                        break
                else:
                    groups.append([branch])
        return groups

    def _branch(self, call) -> list:
        branch = [call]
        users = self.children.get(call)
        while users is not None and len(users) == 1 and _pattern(users[0]) <= OpPattern.BROADCAST:
            branch.append(users[0])
            users = self.children.get(users[0])
        return branch


class _Substituter(ExprMutator):
    """Rebuilds an expression with some subexpressions replaced (TVM's ``ExprSubst``): a replaced node's
    replacement is itself visited, so nested replacements compose."""

    def __init__(self, subst):
        super().__init__()
        self.subst = subst

    def _dispatch(self, expr):
        replacement = self.subst.get(expr)
        return super()._dispatch(expr) if replacement is None else self.visit(replacement)

    def prune(self, expr) -> bool:
        # the children of a replaced node need no visit: only its replacement's do
        return expr in self.subst


class ParallelOpCombiner:
    """Combine parallel calls of one operator that share their first argument (see the module docstring).

    Parameters
    ----------
    op_name : str
        The operator to combine.
    min_num_branches : int
        The smallest group that is combined.
    """

    def __init__(self, op_name: str, min_num_branches: int):
        self.op = Op.get(op_name)
        self.min_num_branches = int(min_num_branches)
        self.subst: dict = {}

    # --- the decisions a subclass makes -------------------------------------------------------------------------
    def is_supported_op(self, call) -> bool:
        """Whether ``call`` of the operator may be combined at all."""
        raise NotImplementedError

    def can_ops_be_combined(self, a, b) -> bool:
        """Whether two calls of the operator on the same input can become one."""
        raise NotImplementedError

    def make_combined_op(self, branches) -> Call:
        """The one call replacing the first call of every branch."""
        raise NotImplementedError

    def is_arg_compatible(self, a, b, index: int) -> bool:
        """Whether argument ``index`` (not the one fed by the branch) of two following calls can be combined."""
        raise NotImplementedError

    def make_combined_call_from_following_ops(self, data, branches, depth: int, parent_index: int) -> Call:
        """The call combining level ``depth`` of every branch, with ``data`` in place of the branch's input."""
        raise NotImplementedError

    def update_group_output(self, data, branches, depth: int, subst: dict) -> None:
        """Map the element ``depth`` of every branch to its part of the combined result ``data``."""
        raise NotImplementedError

    # --- the shared algorithm -----------------------------------------------------------------------------------
    def combine(self, expr):
        """``expr`` with every group of at least ``min_num_branches`` parallel branches combined."""
        groups = _BranchGroupFinder(self.op, self.is_supported_op, self.can_ops_be_combined).find(expr)
        for group in groups:
            if len(group) >= self.min_num_branches:
                self._combine_branches(group)
        if not self.subst:
            return expr
        return _Substituter(self.subst).visit(expr)

    def _combine_branches(self, branches) -> None:
        combined = self.make_combined_op(branches)
        depth = min(len(branch) for branch in branches)
        level = 1
        while level < depth:
            call, parent = branches[0][level], branches[0][level - 1]
            parent_index = next(i for i, arg in enumerate(call.args) if arg is parent)
            if not self._check_level(branches, level, parent_index):
                break
            combined = self.make_combined_call_from_following_ops(combined, branches, level, parent_index)
            level += 1
        self.update_group_output(combined, branches, level - 1, self.subst)

    def _check_level(self, branches, depth: int, parent_index: int) -> bool:
        call = branches[0][depth]
        for branch in branches[1:]:
            other = branch[depth]
            if (other.op is not call.op or other.attrs != call.attrs
                    or len(other.args) != len(call.args) or other.args[parent_index] is not branch[depth - 1]):
                return False
            if not all(self.is_arg_compatible(call, other, i) for i in range(len(call.args)) if i != parent_index):
                return False
        return True


def tensor_type(expr):
    """The checked tensor type of ``expr`` (the combiners run on typed functions only)."""
    return expr.checked_type
