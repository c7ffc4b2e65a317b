"""x86 matrix products (TVM's ``topi/x86/dense.py`` and ``batch_matmul.py``): packed and split-K dense, matmul and
batch_matmul computes, and the register-tiled schedule they share.

Computes:

* :func:`dense_pack` (tag ``dense_pack``): the weight ``(N, K)`` is repacked at run time into
  ``packed[N / bn, K, bn]`` so the ``bn`` outputs of a tile read consecutive weights at each ``k`` (one vector load);
  ``matmul`` with an untransposed ``(K, N)`` right operand reads it directly (tag ``matmul_tile``), and
  ``batch_matmul`` packs per batch (tag ``batch_matmul_pack``);
* :func:`dense_nopack` (tag ``dense_nopack``) for few rows, where repacking would cost as much as the product: the
  reduction is split in two stages, ``partial[i, j, kv] = sum_ko data[i, ko * v + kv] * weight[j, ko * v + kv]``
  (both operands read contiguously, ``kv`` vectorized) and ``out[i, j] = sum_kv partial[i, j, kv]``.

Schedule (:func:`schedule_gemm`): the last two output axes are tiled ``mr x bn``; each tile accumulates in a local
buffer computed inside the tile loop with ``k`` outermost, the ``mr`` rows unrolled and the ``bn`` columns
vectorized (the GEMM of :mod:`kiln.te.examples`), so the tile stays in vector registers. The accumulator is the
product's own stage when element-wise consumers follow (they are inlined into the tile's write-out), else a
``cache_write`` copy. Column panels are the outer tile loop and row blocks the inner one, so one ``K x bn`` panel of
the packed weight stays in L2 while every row block streams past it (rows outer would stream the whole weight from
memory once per row block: 64 against 160 GFLOP/s on a 197 x 768 x 3072 product); batches, panels and row blocks
run in parallel as one loop, and so does the packing.

Tuning (:mod:`kiln.autotvm`): the templates ``dense_pack.x86`` (the product AlterOpLayout packs, whose panel width
is the layout's and so not a knob) and ``batch_matmul_pack.x86`` declare a 2-D register tile, ``tile_y`` rows x
``tile_x`` columns (whole vectors, a split of the panel; rows times vectors within the register budget), ``tile_k``
(the reduction unrolled by that factor, 1: not split) and ``panel_outer`` (column panels outside row blocks, or
inside); ``dense_nopack.x86`` declares ``tile_x`` (columns per parallel block). Their fallback values are the
choices above.
"""


from ...autotvm.task import (
    FallbackConfigEntity,
    OtherOptionEntity,
    SplitEntity,
    register_topi_compute,
    register_topi_schedule,
)
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...te.tensor import ComputeOp
from ...tir import op as _op
from ...tir.expr import IntImm
from ...tir.intrin import if_then_else
from ..nn.conv2d import _acc_dtype, _finish
from ..nn.dense import crop_columns
from ..nn.dense import dense_pack as nn_dense_pack
from ..utils import (
    create_schedule_for,
    fused_output,
    get_const_tuple,
    largest_divisor,
    output_ops,
    resolve_target,
    schedule_anchored,
    traverse_inline,
    vector_lanes,
)
from .injective import PARALLEL_MIN_ELEMENTS, schedule_injective_from_existing, vector_factor, worth_parallel
from .micro_kernel import accumulator_budget

__all__ = ["dense_pack", "dense_nopack", "matmul_tile", "batch_matmul_pack", "schedule_gemm", "schedule_dense_nopack",
           "gemm_blocking", "dense_form", "dense_alter_layout", "NOPACK_MAX_ROWS"]

GEMM_TAGS = ("dense_pack", "matmul_tile", "batch_matmul_pack")

NOPACK_MAX_ROWS = 16
"""Dense products with at most this many rows skip packing the weight (repacking would dominate)."""


def gemm_blocking(m, n, target=None, dtype="float32", pad=False):
    """``(mr, bn)``: rows and columns of a register tile of ``dtype`` on ``target``. ``bn``, the width of a column
    panel, is a power of two up to two vectors; it divides ``n`` unless ``pad`` (the operand is packed, so its panels
    can be padded with zeros): then a column count without a whole vector dividing it (197, 257, 1000) gets panels
    of whole vectors and a padded last panel. ``mr`` is a divisor of ``m`` that keeps the accumulators within the
    register budget of :func:`~kiln.topi.x86.micro_kernel.accumulator_budget`."""
    lanes = resolve_target(target).vector_lanes(dtype)
    bn = vector_factor(n, 2 * lanes) if n >= 2 * lanes else vector_factor(n, lanes)
    if pad and bn < lanes <= n:
        bn = 2 * lanes if n >= 2 * lanes else lanes
    vectors = max(1, bn // lanes)
    rows = max(1, accumulator_budget(target) // vectors)
    if not isinstance(m, int):  # rows known only at run time: full tiles and a guarded last one
        return rows, bn
    mr = largest_divisor(m, rows)
    if mr < min(m, 4):  # no useful divisor (197 rows): full tiles and a guarded last one
        mr = min(m, rows)
    return mr, bn


def pack_columns(n, k, bn, read, name, batch=None):
    """``packed[(b,) jo, kk, ji] = read((b,) jo * bn + ji, kk)`` of shape ``((batch,) ceil(n / bn), k, bn)``, zero
    past column ``n`` (the padding of the last panel)."""
    def fcompute(*index):
        *lead, jo, kk, ji = index
        j = jo * bn + ji
        value = read(*lead, j, kk)
        return value if n % bn == 0 else if_then_else(j < n, value, _op.const(0, value.dtype))

    shape = (-(-n // bn), k, bn)
    return compute(shape if batch is None else (batch, *shape), fcompute, name=name, tag="injective,packed_weight")


def dense_pack(data, weight, out_dtype=None, target=None):
    """``data @ weight.T`` through a weight packed at run time (see the module docstring); ``data`` is 2-D. A
    constant weight is packed at compile time instead: AlterOpLayout turns the call into ``nn.contrib_dense_pack``
    (:func:`dense_alter_layout`), computed by :func:`kiln.topi.nn.dense_pack`."""
    m, _ = get_const_tuple(data.shape)
    n, k = get_const_tuple(weight.shape)
    _, bn = gemm_blocking(m, n, target, out_dtype or data.dtype, pad=True)
    packed = pack_columns(n, k, bn, lambda j, kk: weight[j, kk], "T_packed_weight")
    return nn_dense_pack(data, packed, n, out_dtype)


def dense_form(rows, reduced, units, target=None, dtype="float32"):
    """How the x86 strategy computes a product of ``rows`` rows, ``reduced`` summed terms and ``units`` columns:
    ``"nopack"`` (:func:`dense_nopack`) for at most :data:`NOPACK_MAX_ROWS` rows when ``K`` has a block of four
    lanes or more, else ``"pack"`` (:func:`dense_pack`) when the panels are at least four lanes wide (padded ones
    included), else None (the generic compute)."""
    lanes = vector_lanes(target, dtype)
    if not isinstance(reduced, int) or not isinstance(units, int):
        return None  # the generic product: no static panel or reduction block to plan
    if not isinstance(rows, int):  # a batch known only at run time: packed weights serve every size
        rows = NOPACK_MAX_ROWS + 1
    if rows <= NOPACK_MAX_ROWS and vector_factor(reduced, lanes) >= 4:
        return "nopack"
    if gemm_blocking(rows, units, target, dtype, pad=True)[1] >= 4:
        return "pack"
    return None


def dense_alter_layout(data_shape, weight_shape, target=None, dtype="float32"):
    """The ``weight_layout`` (``"NC{b}n"``) :func:`dense_pack` packs a ``(N, K)`` weight into for 2-D ``data`` of
    ``data_shape`` on ``target`` (the last panel padded with zeros when ``b`` does not divide ``N``), or None when
    the product is not computed packed (:func:`dense_form`)."""
    if len(data_shape) != 2 or len(weight_shape) != 2:
        return None
    (rows, reduced), units = data_shape, weight_shape[0]
    if not all(isinstance(d, int) for d in (reduced, units)):
        return None  # a weight known only at run time is not packed ahead
    if dense_form(rows, reduced, units, target, dtype) != "pack":
        return None
    return f"NC{gemm_blocking(rows, units, target, dtype, pad=True)[1]}n"


def matmul_tile(a, b, transpose_a=False, out_dtype=None):
    """``a @ b`` for a 2-D ``a`` (``(K, M)`` when ``transpose_a``) and an untransposed ``(K, N)`` ``b``, read
    directly by the tiled schedule."""
    out_dtype = out_dtype or a.dtype
    m, k = get_const_tuple(a.shape)[::-1] if transpose_a else get_const_tuple(a.shape)
    _, n = get_const_tuple(b.shape)
    acc = _acc_dtype(out_dtype)
    r = reduce_axis((0, k), name="k")

    def fcompute(i, j):
        av = a[r, i] if transpose_a else a[i, r]
        return _te_sum(_op.cast(av, acc) * _op.cast(b[r, j], acc), axis=r)

    return _finish(compute((m, n), fcompute, name="T_matmul", tag="matmul_tile"), out_dtype, "T_matmul")


def batch_matmul_pack(x, y, transpose_a=False, transpose_b=True, out_dtype=None, target=None):
    """Batched product with ``y`` packed per batch into ``(B, N / bn, K, bn)`` blocks (read directly when it is
    not transposed and its rows are whole vectors); a batch of 1 broadcasts."""
    out_dtype = out_dtype or x.dtype
    xs, ys = get_const_tuple(x.shape), get_const_tuple(y.shape)
    bx, m, k = (xs[0], xs[2], xs[1]) if transpose_a else xs
    by, n, _ = ys if transpose_b else (ys[0], ys[2], ys[1])
    acc = _acc_dtype(out_dtype)
    r = reduce_axis((0, k), name="k")
    _, bn = gemm_blocking(m, n, target, out_dtype, pad=True)
    packed_y = transpose_b or n % bn != 0  # rows of y without whole vectors (197 columns) are packed and padded
    if packed_y:
        read = (lambda b, j, kk: y[b, j, kk]) if transpose_b else (lambda b, j, kk: y[b, kk, j])
        packed = pack_columns(n, k, bn, read, "T_packed_y", batch=by)

        def read_y(b, j):
            return packed[b, j // bn, r, j % bn]
    else:
        def read_y(b, j):
            return y[b, r, j]

    def fcompute(b, i, j):
        bxi, byi = (b if bx != 1 else 0), (b if by != 1 else 0)
        xv = x[bxi, r, i] if transpose_a else x[bxi, i, r]
        return _te_sum(_op.cast(xv, acc) * _op.cast(read_y(byi, j), acc), axis=r)

    columns = -(-n // bn) * bn if packed_y else n
    out = compute((max(bx, by), m, columns), fcompute, name="T_batch_matmul", tag="batch_matmul_pack",
                  attrs={"panel": bn} if packed_y else None)
    return _finish(crop_columns(out, n), out_dtype, "T_batch_matmul")


def dense_nopack(data, weight, out_dtype=None, target=None):
    """``data @ weight.T`` for few rows: a split reduction whose inner part is vectorized (module docstring)."""
    out_dtype = out_dtype or data.dtype
    m, k = get_const_tuple(data.shape)
    n, _ = get_const_tuple(weight.shape)
    v = vector_factor(k, vector_lanes(target, out_dtype))
    acc = _acc_dtype(out_dtype)
    ko = reduce_axis((0, k // v), name="ko")
    partial = compute((m, n, v), lambda i, j, kv: _te_sum(_op.cast(data[i, ko * v + kv], acc)
                                                          * _op.cast(weight[j, ko * v + kv], acc), axis=ko),
                      name="T_dense_partial", tag="dense_nopack_partial")
    kv = reduce_axis((0, v), name="kv")
    out = compute((m, n), lambda i, j: _te_sum(partial[i, j, kv], axis=kv), name="T_dense_nopack",
                  tag="dense_nopack")
    return _finish(out, out_dtype, "T_dense")


def _schedule_packing(s, tensor):
    op = tensor.op
    if isinstance(op, ComputeOp) and op.tag.endswith("packed_weight"):
        axes = list(s[op].op.axis)
        s[op].vectorize(axes[-1])
        outer = s[op].fuse(*axes[:-2]) if len(axes) > 3 else axes[0]
        s[op].parallel(outer)


def _tile(stage, axes, mr, bn, cols=None, panels_outer=True, row_group=1):
    """Tile the last two of ``axes`` by ``mr x bn``, column panels outside row blocks (module docstring; row blocks
    outside when not ``panels_outer``, in groups of ``row_group`` blocks that sweep the panels together when above
    1); fuse the leading axes, panels and row blocks into one parallel loop. With a
    row count known only at run time the row blocks go outside: the panel is then the fused index modulo the static
    panel count, which the simplifier bounds, so the column guards fold away and the panel's vectors stay whole.
    With ``cols`` below ``bn`` a panel is computed in register tiles of ``mr x cols``. Returns the loop the
    accumulator tile is computed in, and the tile's row and column loops."""
    *lead, yi, xi = axes
    mo, no, mi, ni = stage.tile(yi, xi, mr, bn)
    order = (no, mo) if isinstance(yi.dom.extent, IntImm) and panels_outer else (mo, no)
    if row_group > 1 and not panels_outer:
        # a group's rows of the left operand stay in cache while every panel streams past them
        mog, moi = stage.split(mo, factor=row_group)
        order = (mog, no, moi)
    stage.reorder(*order, mi, ni)
    outer = stage.fuse(*lead, *order)
    stage.parallel(outer)
    if cols is not None and cols < bn:
        nio, nii = stage.split(ni, factor=cols)
        stage.reorder(nio, mi, nii)
        return nio, mi, nii
    return outer, mi, ni


def _divisors_upto(n, limit) -> list:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def _gemm_knobs(cfg, rows, reduced, mr, bn, target, dtype):
    """Declare the GEMM knobs on ``cfg`` and return their values ``(rows, columns, k_unroll, panels_outer,
    row_group)`` (the fallback: ``mr x bn`` tiles, ``k`` not split, panels outside row blocks, no row groups).

    The register tile is ``tile_y`` rows x ``tile_x`` columns (whole vectors, a split of the panel); ``multi_filter``
    keeps the tiles whose accumulators fit the register budget of
    :func:`~kiln.topi.x86.micro_kernel.accumulator_budget` (and today's tile, whatever its size)."""
    budget = max(1, accumulator_budget(target))
    lanes = resolve_target(target).vector_lanes(dtype)
    # rows known only at run time (a dynamic batch) are not a task: the hand-chosen tile is the only choice
    rows_known = isinstance(rows, int)
    cfg.define_knob("tile_y", sorted(set(_divisors_upto(rows, budget)) | {mr}) if rows_known else [mr])
    cfg.define_knob("tile_k", _divisors_upto(reduced, 8) if reduced % 2 == 0 else [1])
    cfg.define_split("tile_x", bn, num_outputs=2, filter=lambda e: e.size[-1] % lanes == 0 or e.size[-1] == bn)
    cfg.define_knob("panel_outer", [True, False] if rows_known else [True])
    cfg.define_knob("row_group", [1, 2, 4, 8, 16] if rows_known else [1])

    def tile(e):
        return e["tile_y"].val, e["tile_x"].size[-1]

    def valid(e):
        fits = tile(e)[0] * max(1, tile(e)[1] // lanes) <= budget or tile(e) == (mr, bn)
        group = e["row_group"].val
        return fits and (group == 1 or not e["panel_outer"].val and group < -(-rows // tile(e)[0]))

    cfg.multi_filter(valid)
    if cfg.is_fallback:
        cfg["tile_y"] = OtherOptionEntity(mr)
        cfg["tile_k"] = OtherOptionEntity(1)
        cfg["tile_x"] = SplitEntity([-1, bn])
        cfg["panel_outer"] = OtherOptionEntity(True)
        cfg["row_group"] = OtherOptionEntity(1)
    return (*tile(cfg), cfg["tile_k"].val, cfg["panel_outer"].val, cfg["row_group"].val)


def _schedule_gemm_op(s, op, outs, target, cfg):
    out = op.output(0)
    for t in op.input_tensors:
        _schedule_packing(s, t)
    shape = get_const_tuple(out.shape)
    panel = op.attrs.get("panel")  # the width the operand was packed with (its last panel padded)
    mr, bn = gemm_blocking(shape[-2], shape[-1], target, pad=panel is not None)
    bn = panel or bn
    (k,) = op.reduce_axis
    mr, cols, k_unroll, panels_outer, row_group = _gemm_knobs(cfg, shape[-2], get_const_tuple((k.dom.extent,))[0],
                                                              mr, bn, target, out.dtype)
    panels = -(-shape[-1] // bn)
    last = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape)[:-1] == shape[:-1]
                        and -(-get_const_tuple(t.shape)[-1] // bn) == panels)  # the same tiles, cropped or not
    if last is None or last.op is op:
        acc, stage = s.cache_write(out, "local"), s[out]
    else:
        acc, stage = out, s[last]
        s[out].set_scope("local")
    no, mi, ni = _tile(stage, list(stage.op.axis), mr, bn, cols, panels_outer, row_group)
    stage.unroll(mi)
    stage.vectorize(ni)
    s[acc].compute_at(stage, no)
    (k,) = s[acc].op.reduce_axis
    *_, mc, nc = s[acc].op.axis
    if k_unroll > 1:  # a tuned choice: a few steps of k per loop iteration, unrolled
        ko, ki = s[acc].split(k, factor=k_unroll)
        s[acc].reorder(ko, ki, mc, nc)
        s[acc].unroll(ki)
    else:
        s[acc].reorder(k, mc, nc)
    s[acc].unroll(mc)
    s[acc].vectorize(nc)
    for o in output_ops(outs):
        if o is not op and (last is None or o is not last.op):
            schedule_injective_from_existing(s, o.output(0), target)


def schedule_gemm(outs, target=None, cfg=None):
    """Schedule a group anchored by a ``dense_pack``, ``matmul_tile`` or ``batch_matmul_pack`` stage, with the
    knobs' values ``cfg`` (:mod:`kiln.autotvm`; the hand-chosen schedule when None).

    Returns
    -------
    s : Schedule
    """
    cfg = FallbackConfigEntity() if cfg is None else cfg
    return schedule_anchored(outs, GEMM_TAGS, lambda s, op: _schedule_gemm_op(s, op, outs, target, cfg))


def schedule_dense_nopack(outs, target=None, cfg=None):
    """Schedule a group anchored by ``dense_nopack``: rows x column blocks in parallel, the partial sums of a block
    of four columns computed together in vector registers, reduced and written by the block's loop. ``cfg``: the
    knobs' values (:mod:`kiln.autotvm`; the hand-chosen schedule when None).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    cfg = FallbackConfigEntity() if cfg is None else cfg

    def callback(op):
        if op.tag != "dense_nopack":
            return
        partial = op.input_tensors[0]
        shape = get_const_tuple(op.output(0).shape)
        last = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape) == shape) or op.output(0)
        stage = s[last]
        i, j = stage.op.axis
        cfg.define_knob("tile_x", _divisors_upto(shape[1], 16))
        if cfg.is_fallback:
            cfg["tile_x"] = OtherOptionEntity(largest_divisor(shape[1], 4))
        jo, ji = stage.split(j, factor=cfg["tile_x"].val)
        fused = stage.fuse(i, jo)
        if worth_parallel((*shape, partial.shape[2]), PARALLEL_MIN_ELEMENTS // 16):
            stage.parallel(fused)
        if op is not last.op:
            s[op].compute_at(stage, ji)
        s[partial.op].compute_at(stage, fused)
        pi, pj, pv = s[partial.op].op.axis
        (ko,) = s[partial.op].op.reduce_axis
        s[partial.op].reorder(pi, ko, pj, pv)
        s[partial.op].unroll(pj)
        s[partial.op].vectorize(pv)
        for o in output_ops(outs):
            if o is not last.op and o is not op:
                schedule_injective_from_existing(s, o.output(0), target)

    traverse_inline(s, output_ops(outs), callback)
    return s


@register_topi_compute("dense_pack.x86")
def dense_pack_template(cfg, data, packed_weight, units, out_dtype):
    """The compute of the tuning template ``dense_pack.x86``: ``topi.nn.dense_pack`` on a weight AlterOpLayout
    packed (``nn.contrib_dense_pack``)."""
    return nn_dense_pack(data, packed_weight, units, out_dtype)


@register_topi_schedule("dense_pack.x86")
def schedule_dense_pack_template(cfg, outs, target):
    """The schedule of the tuning template ``dense_pack.x86``."""
    return schedule_gemm(outs, target, cfg)


@register_topi_compute("dense_nopack.x86")
def dense_nopack_template(cfg, data, weight, out_dtype):
    """The compute of the tuning template ``dense_nopack.x86`` (the vector width from the current target)."""
    return dense_nopack(data, weight, out_dtype)


@register_topi_schedule("dense_nopack.x86")
def schedule_dense_nopack_template(cfg, outs, target):
    """The schedule of the tuning template ``dense_nopack.x86``."""
    return schedule_dense_nopack(outs, target, cfg)


@register_topi_compute("batch_matmul_pack.x86")
def batch_matmul_pack_template(cfg, x, y, transpose_a, transpose_b, out_dtype):
    """The compute of the tuning template ``batch_matmul_pack.x86`` (the panel width from the current target)."""
    return batch_matmul_pack(x, y, transpose_a, transpose_b, out_dtype)


@register_topi_schedule("batch_matmul_pack.x86")
def schedule_batch_matmul_pack_template(cfg, outs, target):
    """The schedule of the tuning template ``batch_matmul_pack.x86`` (the GEMM schedule)."""
    return schedule_gemm(outs, target, cfg)
