"""Calibration: the second step of quantization (TVM's ``relay.quantize._calibrate`` and ``kl_divergence``).

Each ``simulated_quantize`` of an annotated ``@main`` gets its scale bound as constants: ``dom_scale = scale /
2^(nbit - sign)`` and the clip range ``[-(2^valid_bit - 1), 2^valid_bit - 1]``. A weight's scale comes from its
values (``weight_scale``: the absolute maximum, or that rounded up to a power of two); other values get
``global_scale``, or a scale measured on a dataset: the graph is run with every quantized value as an output
(:func:`collect_stats`) and the scale is a high percentile of their absolute values (``percentile``) or the
threshold minimizing the KL divergence between the values' histogram and its quantized version
(``kl_divergence``, TensorRT's entropy calibration).
"""

import math

import numpy as np

from ...error import KilnError
from ...ir.module import IRModule
from ...ir.transform import PassContext
from ...runtime.device import cpu
from ..analysis import free_vars
from ..expr import Call, Constant, Tuple, bind, const
from ..expr_functor import ExprMutator, post_order_visit
from ..function import Function
from .config import QAnnotateKind, current_qconfig
from .simulated_quantize import OP_NAME, SimulatedQuantizeAttrs

__all__ = ["calibrate", "collect_stats", "find_scale_by_kl", "find_scale_by_percentile"]


def _quantize_calls(func) -> list:
    """The simulated_quantize calls of ``func``, in post order."""
    calls: list = []
    post_order_visit(func, lambda e: calls.append(e) if isinstance(e, Call) and getattr(e.op, "name", "") == OP_NAME
                     else None)
    return calls


class _StatsCollector(ExprMutator):
    """Turns every simulated_quantize into the identity and records the non-weight ones (TVM's StatsCollector)."""

    def __init__(self):
        super().__init__()
        self.profile: list = []
        self.sources: list = []  # the original call of each profiled value

    def visit_call(self, call):
        new = super().visit_call(call)
        if getattr(new.op, "name", "") != OP_NAME:
            return new
        zero = const(0.0, "float32")
        attrs = SimulatedQuantizeAttrs(QAnnotateKind.IDENTITY, new.attrs.sign, new.attrs.rounding)
        identity = Call(new.op, (new.args[0], zero, zero, zero), attrs)
        if call.attrs.kind != QAnnotateKind.WEIGHT:
            self.profile.append(identity)
            self.sources.append(call)
        return identity


def collect_stats(mod, dataset, chunk_by=-1):
    """The values every non-weight ``simulated_quantize`` of ``mod["main"]`` sees on ``dataset`` (a list of dicts
    of inputs by name), flattened, in chunks of ``chunk_by`` quantized values (all at once when -1)."""
    yield from _stats(mod, dataset, chunk_by)[1]


def _stats(mod, dataset, chunk_by):
    """``(calls, chunks)``: the quantize calls profiled, in order, and the generator of their values."""
    collector = _StatsCollector()
    collector.visit(mod["main"])  # records the quantized values, each behind an identity simulated_quantize
    return collector.sources, _run_stats(collector.profile, dataset, chunk_by)


def _run_stats(profile, dataset, chunk_by):
    from ..build import build  # relay.build imports the whole backend: only when calibrating on data

    if not profile:
        return
    body = Tuple(profile)
    inputs = free_vars(body)
    dtypes = {v.name_hint: v.type_annotation.dtype for v in inputs}
    with PassContext(opt_level=3):
        lib = build(IRModule.from_expr(Function(inputs, body)), target="llvm")
    runtime = lib["default"](cpu(0))  # the graph executor module
    count = runtime.get_num_outputs()
    chunk_by = count if chunk_by == -1 else chunk_by
    for start in range(0, count, chunk_by):
        outputs: list = [[] for _ in range(min(chunk_by, count - start))]
        for batch in dataset:
            for name, value in batch.items():
                # as TVM's set_input(**batch): a name the profiled graph does not read is skipped, and values are
                # converted to the input's dtype (calibration data is often numpy's float64)
                if name in dtypes:
                    runtime.set_input(name, np.asarray(value, dtype=dtypes[name]))
            runtime.run()
            for j in range(len(outputs)):
                outputs[j].append(runtime.get_output(start + j).numpy())
        yield [np.concatenate([o.reshape(-1) for o in out]) for out in outputs]


def find_scale_by_percentile(arr, percentile=0.99999):
    """The ``percentile`` quantile of ``|arr|`` (TVM's ``_find_scale_by_percentile``)."""
    x = np.abs(np.asarray(arr).reshape(-1))
    k = int(x.size * percentile)
    return float(np.partition(x, k)[k])


def _smooth(p, eps=0.0001):
    """Move ``eps`` of mass onto the empty bins (taken evenly from the others); None when impossible."""
    zeros = p == 0
    n_zeros, n_nonzeros = int(zeros.sum()), int((~zeros).sum())
    if not n_nonzeros:
        return None
    eps1 = eps * n_zeros / n_nonzeros
    if eps1 >= 1.0:
        return None
    return p + eps * zeros - eps1 * (~zeros)


def find_scale_by_kl(arr, quantized_dtype="int8", num_bins=8001, num_quantized_bins=255):
    """The clipping threshold of ``arr`` whose quantization to ``num_quantized_bins`` levels loses the least
    information: the threshold minimizing KL(p || q) over symmetric histogram ranges, ``p`` the clipped histogram
    (outliers folded into its end bins) and ``q`` it merged into the quantized bins and spread back over the
    non-empty bins (TVM's ``_find_scale_by_kl``, after MXNet and TensorRT)."""
    arr = np.asarray(arr, dtype="float32").reshape(-1)
    lo, hi = float(arr.min()), float(arr.max())
    thres = max(abs(lo), abs(hi))
    if lo >= 0 and quantized_dtype == "uint8":
        num_quantized_bins = num_quantized_bins * 2 + 1
    if thres == 0:
        return 0.0
    hist, edges = np.histogram(arr, bins=num_bins, range=(-thres, thres))
    hist = hist.astype("float64")
    zero = num_bins // 2
    half = num_quantized_bins // 2
    best, best_threshold = math.inf, float(edges[-1])
    for i in range(half, zero + 1):
        start, stop = zero - i, zero + i + 1
        sliced = hist[start:stop].copy()
        sliced[0] = 0  # the first bin holds the outliers in p, so it is left out of q's mass
        p = hist[start:stop].copy()
        p[0] = hist[:start + 1].sum()  # the outliers fold into the end bins
        p[-1] += hist[stop:].sum()
        merged = len(sliced) // num_quantized_bins
        starts = np.arange(num_quantized_bins) * merged  # the last quantized bin also takes the remainder
        quantized = np.add.reduceat(sliced, starts)
        norm = np.add.reduceat((sliced != 0).astype("float64"), starts)
        level = np.where(norm > 0, quantized / np.maximum(norm, 1), 0.0)
        q = np.repeat(level, np.diff(np.append(starts, len(sliced))))
        q[p == 0] = 0.0  # spread over the bins p has values in
        ps, qs = _smooth(p), _smooth(q)
        if ps is None or qs is None:
            continue
        ps, qs = ps / ps.sum(), qs / qs.sum()
        divergence = float(np.sum(ps * np.log(ps / qs)))
        if divergence < best:
            best, best_threshold = divergence, float(edges[stop])
    return best_threshold


def _power2_scale(call):
    value = float(np.amax(np.abs(call.args[0].data.numpy())))
    return 2.0 ** math.ceil(math.log2(value)) if value > 0 else 1.0


def _max_scale(call):
    return float(np.amax(np.abs(call.args[0].data.numpy())))


def _dataset_scales(mod, dataset, find) -> dict:
    """The scale of every non-weight simulated_quantize of ``mod["main"]``, measured on ``dataset``."""
    if dataset is None:
        raise KilnError(f"calibrate: calibrate_mode {current_qconfig().calibrate_mode!r} needs a dataset (a list "
                        f"of dicts of inputs by name)")
    calls, chunks = _stats(mod, list(dataset), current_qconfig().calibrate_chunk_by)
    scales: list = []
    for samples in chunks:
        scales.extend(find(s) for s in samples)
    return dict(zip(calls, scales, strict=True))


def _set_params(mod, input_scale, weight_scale):
    """``mod`` with every simulated_quantize's scale and clip range bound as constants."""
    cfg = current_qconfig()
    binds = {}
    for call in _quantize_calls(mod["main"]):
        _, dom_scale, clip_min, clip_max = call.args
        kind = call.attrs.kind
        valid_bit = cfg.get_nbit_by_kind(kind) - int(call.attrs.sign)
        if kind == QAnnotateKind.WEIGHT:
            if not isinstance(call.args[0], Constant):
                raise KilnError("calibrate: a WEIGHT simulated_quantize must quantize a constant (bind the "
                                "parameters before quantizing)")
            scale = weight_scale(call)
        else:
            scale = input_scale(call)
        valid_range = 2.0 ** valid_bit
        for var, value in ((dom_scale, scale / valid_range), (clip_min, -(valid_range - 1)),
                           (clip_max, valid_range - 1)):
            if not isinstance(var, Constant):
                binds[var] = const(np.float32(value), "float32")
    main = bind(mod["main"], binds)
    if isinstance(main, Function):
        main = main.with_fields(params=tuple(p for p in main.params if p not in binds))
    functions = {gv.name_hint: f for gv, f in mod.functions.items() if gv.name_hint != "main"}
    out = IRModule.from_expr(main)
    for name, func in functions.items():
        out[name] = func
    return out


def calibrate(dataset=None):
    """The calibration step, as a module-pass function ``(mod, ctx) -> mod`` (TVM's ``calibrate``): the scales
    of ``current_qconfig()`` (``calibrate_mode``, ``weight_scale``, ``global_scale``) bound into ``mod``."""

    def wrapped(mod, ctx):
        cfg = current_qconfig()
        weight_scale = _max_scale if cfg.weight_scale == "max" else _power2_scale
        if cfg.calibrate_mode == "global_scale":
            def input_scale(call):
                return cfg.global_scale
        else:
            find = find_scale_by_kl if cfg.calibrate_mode == "kl_divergence" else find_scale_by_percentile
            scales = _dataset_scales(mod, dataset, find)

            def input_scale(call):
                return scales[call]
        return _set_params(mod, input_scale, weight_scale)

    return wrapped
