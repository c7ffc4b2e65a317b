"""PartitionGraph: lift each annotated region into a global function for its external compiler (TVM's
``relay.transform.PartitionGraph``; after ``AnnotateTarget`` and ``MergeCompilerRegions``).

Four steps, as TVM's pass:

1. an end annotation of a tuple becomes a tuple of end annotations of its fields (no region returns a tuple of
   tuples);
2. the annotations of ``"default"`` (kiln's own code generator) are removed: those operators stay where they are;
3. each remaining region becomes a global function ``<compiler>_<function>_<region id>`` of the region's inputs
   (one parameter ``<compiler>_<id>_i<k>`` per distinct input; a constant input is bound into the body with
   ``bind_constants``) returning its outputs (a tuple when there are several), marked ``Primitive=1``,
   ``Inline=1``, ``Compiler=<compiler>`` and ``global_symbol``; the region is replaced by a call of it (and
   projections of the call for several outputs). A registered ``relay.ext.<compiler>.optimize`` function may
   rewrite each region function first;
4. the region functions are renamed ``tvmgen_<mod_name>_<name>`` with characters a C identifier cannot hold
   replaced by ``_``, which is the symbol the external code generator defines.
"""

import re
from dataclasses import dataclass

from ...error import KilnError
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...runtime.packed_func import get_global_func
from ..analysis.annotated_regions import AnnotatedRegionSet
from ..expr import Call, Constant, Tuple, TupleGetItem, Var, bind
from ..expr_functor import ExprMutator
from ..function import Function
from .infer_type import infer_type


def _is_annotation(expr, name):
    return type(expr) is Call and isinstance(expr.op, Op) and expr.op.name == "annotation." + name


def _compiler(call):
    return getattr(call.attrs, "compiler", None)


class _FlattenTupleEnds(ExprMutator):
    """``compiler_end((a, b))`` -> ``(compiler_end(a), compiler_end(b))``."""

    def visit_call(self, call):
        post = super().visit_call(call)
        if _is_annotation(call, "compiler_end") and type(post.args[0]) is Tuple:
            from ..op.annotation import compiler_end
            tup = post.args[0]
            return tup.with_fields(fields=tuple(compiler_end(f, _compiler(call)) for f in tup.fields))
        return post


class _RemoveDefault(ExprMutator):
    """Drops every annotation of the ``"default"`` compiler."""

    def visit_call(self, call):
        post = super().visit_call(call)
        if (_is_annotation(call, "compiler_begin") or _is_annotation(call, "compiler_end")) and \
                _compiler(call) == "default":
            return post.args[0]
        return post


class _RegionFunc:
    """What is known of one region's function: its parameters with their arguments, and its outputs."""

    def __init__(self):
        self.args: list = []  # (param, argument expression)
        self.param_of: dict = {}  # the value entering the region (annotations stripped) -> its parameter
        self.outputs: dict = {}  # the region's output expression (pre) -> what replaces it outside
        self.call = None


def _strip_annotations(expr):
    while _is_annotation(expr, "compiler_begin") or _is_annotation(expr, "compiler_end"):
        expr = expr.args[0]
    return expr


class _Partitioner(ExprMutator):
    """Replaces the regions of one function by calls of new global functions added to ``self.mod``."""

    def __init__(self, mod, regions, bind_constants):
        super().__init__()
        self.mod = mod
        self.regions = regions
        self.bind_constants = bind_constants
        self.meta: dict = {}  # region id -> _RegionFunc

    def visit_call(self, call):
        post = super().visit_call(call)
        if _is_annotation(call, "compiler_begin"):
            region = self.regions.get_region(call)
            meta = self.meta.setdefault(region.id, _RegionFunc())
            source = _strip_annotations(call.args[0])
            if source in meta.param_of:
                return meta.param_of[source]
            index = next(i for i, begin in enumerate(region.ins) if begin is call)
            param = Var(f"{_compiler(call)}_{region.id}_i{index}", call.checked_type)
            meta.args.append((param, post.args[0]))
            meta.param_of[source] = param
            return param
        if _is_annotation(call, "compiler_end"):
            region = self.regions.get_region(call)
            if region is None:
                raise KilnError(f"PartitionGraph: this end annotation closes no region: {call}")
            meta = self.meta.setdefault(region.id, _RegionFunc())
            if meta.call is None:
                self.create_function(region, meta, call)
            return meta.outputs[call.args[0]]
        return post

    def create_function(self, region, meta, end):
        """Build the region's global function and the call replacing the region."""
        fields: list = []
        index_of: dict = {}
        for out in region.outs:
            value = out.args[0]
            if value not in index_of:
                index_of[value] = len(fields)
                fields.append(self.visit(value))
        params = [p for p, _ in meta.args]
        binds = {p: a for p, a in meta.args if self.bind_constants and _is_constant(a)}
        call_args = [a for p, a in meta.args if p not in binds]
        body = fields[0] if len(fields) == 1 else Tuple(tuple(fields))
        func = Function(tuple(params), body)
        if binds:
            func = bind(func, binds)
        compiler = _compiler(end)
        name = f"{compiler}_{self.regions.func_name}_{region.id}"
        optimize = get_global_func(f"relay.ext.{compiler}.optimize", allow_missing=True)
        if optimize is not None:
            func = optimize(infer_type(IRModule.from_expr(func)))["main"]
        func = func.with_attrs({"global_symbol": name, "Primitive": 1, "Compiler": compiler, "Inline": 1})
        if any(gv.name_hint == name for gv in self.mod.functions):
            raise KilnError(f"PartitionGraph: the module already has a function {name}")
        gv = GlobalVar(name)
        self.mod[gv] = func
        meta.call = Call(gv, call_args)
        if len(index_of) == 1:
            meta.outputs[next(iter(index_of))] = meta.call
        else:
            for value, i in index_of.items():
                meta.outputs[value] = TupleGetItem(meta.call, i)


def _is_constant(expr):
    return type(expr) is Constant or (type(expr) is Tuple and all(type(f) is Constant for f in expr.fields))


def _each_function(mod, rewrite):
    """``mod`` with ``rewrite(func)`` applied to every Relay function's body, typed after each."""
    out = mod.shallow_copy()
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function):
            out[gv] = func.with_fields(body=rewrite(func.body))
            out = infer_type(out)
    return out


def mangle_name(mod_name, name):
    """The symbol of region function ``name`` in module ``mod_name``: ``tvmgen_<mod_name>_<name>``, made a C
    identifier (TVM's ``runtime::get_name_mangled`` then ``SanitizeName``)."""
    prefix = f"tvmgen_{mod_name}" if mod_name else "tvmgen"
    return re.sub(r"[^0-9A-Za-z_]", "_", f"{prefix}_{name}")


def _mangle(mod, mod_name):
    renamed = {gv: GlobalVar(mangle_name(mod_name, gv.name_hint)) for gv, f in mod.functions.items()
               if isinstance(f, Function) and f.attrs.get("Compiler", None) is not None}

    class _Renamer(ExprMutator):
        def visit_global_var(self, gv):
            return renamed.get(gv, gv)

    out = mod.shallow_copy()
    out.functions = {}
    for gv, func in mod.functions.items():
        if gv in renamed:
            func = func.with_attr("global_symbol", renamed[gv].name_hint)
        if isinstance(func, Function):
            func = func.with_fields(body=_Renamer().visit(func.body))
        out[renamed.get(gv, gv)] = func
    return out


@register_pass("PartitionGraph")
@dataclass(frozen=True)
class PartitionGraph(ModulePass):
    """Lift every annotated region into a global function for its compiler (see the module docstring).

    Parameters
    ----------
    mod_name : str
        The module name in the region functions' symbols (``tvmgen_<mod_name>_...``).
    bind_constants : bool
        Whether constant inputs of a region are bound into its function instead of passed as arguments.
    """

    mod_name: str = "default"
    bind_constants: bool = True
    info = PassInfo(0, "PartitionGraph")

    def transform_module(self, mod, ctx):
        mod = infer_type(mod)
        mod = _each_function(mod, lambda body: _FlattenTupleEnds().visit(body))
        mod = _each_function(mod, lambda body: _RemoveDefault().visit(body))
        # each function's regions are found in the module as it is before any function is partitioned
        names, region_sets = set(), {}
        for gv, func in mod.functions.items():
            name = gv.name_hint
            while name in names:
                name += "_a"
            names.add(name)
            region_sets[gv] = AnnotatedRegionSet(func, func_name=name) if isinstance(func, Function) else None
        for gv, func in list(mod.functions.items()):
            if isinstance(func, Function):
                body = _Partitioner(mod, region_sets[gv], self.bind_constants).visit(func.body)
                mod = mod.shallow_copy()
                mod[gv] = func.with_fields(body=body)
                mod = infer_type(mod)
        return infer_type(_mangle(mod, self.mod_name))
