"""kiln.relay.dataflow_pattern: TVM's pattern language for Relay dataflow graphs.

* :mod:`.patterns`: pattern nodes and their builders (``is_op``, ``wildcard``, ``is_constant``, ``has_attr``...);
* :mod:`.matcher`: ``match(pattern, expr)`` and the matcher behind it;
* :mod:`.rewrite`: ``rewrite(callbacks, expr)`` with :class:`DFPatternCallback`, and ``partition``.

Examples
--------
>>> pattern = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
>>> pattern.match(relay.nn.relu(x + relay.const(1.0)))   # doctest: +SKIP
True
"""

from .matcher import DFPatternMatcher, match
from .patterns import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)
from .rewrite import DFPatternCallback, partition, rewrite

__all__ = ["AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DataTypePattern", "DFPattern",
           "DFPatternCallback", "DFPatternMatcher", "DominatorPattern", "ExprPattern", "FunctionPattern", "IfPattern",
           "LetPattern", "ShapePattern", "TupleGetItemPattern", "TuplePattern", "TypePattern", "VarPattern",
           "WildcardPattern", "dominates", "has_attr", "has_dtype", "has_shape", "has_type", "is_constant",
           "is_expr", "is_if", "is_let", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match", "partition",
           "rewrite", "wildcard"]
