"""``Stage.transform_layout``: store a stage's output in another layout (TVM's ``te.Stage.transform_layout``).

``s[B].transform_layout(lambda i, j: [j, i])`` makes B's buffer the transposed array: every access ``B[i, j]`` reads
or writes ``B_physical[j, i]``, and when B is a function argument its buffer has the physical shape. The map must be
a bijection of B's index space (no padding); it may return ``te.AXIS_SEPARATOR`` between groups of physical axes.

For a compute stage the loops follow the new layout as well: the data-parallel axes (which must still be the stage's
loops, untransformed) are replaced by one new axis per physical dimension, returned for further scheduling, and a
:class:`Transform` relation recovers the original axes from them through the inverse map (bound inference's
pass-up). The stage must compute its whole domain (not be attached inside another stage's loop).
"""

from dataclasses import dataclass

from ..error import TIRError
from ..tir import expr as E
from ..tir.expr_reduce import IterVar, IterVarType, Range
from ..tir.index_map import IndexMap
from .tensor import ComputeOp

__all__ = ["Transform", "transform_layout"]


@dataclass(eq=False)
class Transform:
    """``transformed = forward(original)`` and ``original = inverse(transformed)`` (TVM's Transform relation)."""

    original: tuple
    transformed: tuple
    forward: IndexMap
    inverse: IndexMap


def transform_layout(stage, mapping_function):
    """See the module docstring; returns the new axes of a compute stage (None for a placeholder)."""
    op = stage.op
    name = op.name
    if stage.layout_transforms:
        raise TIRError(f"transform_layout of stage {name}: the stage already has a layout transformation")
    shape = list(op.output(0).shape)
    index_dtype = shape[0].dtype if shape else "int32"
    try:
        index_map, separators = IndexMap.from_func_with_separators(mapping_function, len(shape),
                                                                   index_dtype=index_dtype)
        new_shape = index_map.map_shape(shape)
        inverse = index_map.inverse(shape)
    except TIRError as exc:
        raise TIRError(f"transform_layout of stage {name}: {exc}") from exc
    if not isinstance(op, ComputeOp):
        stage.layout_transforms, stage.axis_separators = [index_map], separators
        return None
    leaves = stage.leaf_iter_vars
    positions = [next((k for k, v in enumerate(leaves) if v is iv), None) for iv in op.axis]
    if not positions or None in positions or positions != list(range(positions[0], positions[0] + len(positions))):
        raise TIRError(f"transform_layout of stage {name}: its data-parallel axes must still be its loops, in order "
                       "(transform the layout before splitting, fusing or reordering them)")
    new_axes = tuple(IterVar(Range.from_min_extent(E.IntImm(e.dtype, 0), e), E.Var(f"ax{d}", e.dtype),
                             IterVarType.DataPar) for d, e in enumerate(new_shape))
    stage.layout_transforms, stage.axis_separators = [index_map], separators
    stage.leaf_iter_vars[positions[0]:positions[0] + len(positions)] = list(new_axes)
    stage.all_iter_vars += list(new_axes)
    stage.relations.append(Transform(tuple(op.axis), new_axes, index_map, inverse))
    return list(new_axes)


def physical_shape(stage, shape):
    """The shape of ``stage``'s buffer for a logical ``shape`` (itself without a layout transformation)."""
    if not stage.layout_transforms:
        return tuple(shape)
    return tuple(stage.layout_transforms[0].map_shape(list(shape)))


def physical_indices(stage, indices):
    """The buffer indices of the logical element ``indices`` of ``stage``'s output."""
    if not stage.layout_transforms:
        return tuple(indices)
    return tuple(stage.layout_transforms[0].map_indices(list(indices)))
