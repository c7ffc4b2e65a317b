"""``PrimFunc``: a loop-level function, the unit TIR passes transform and code generators compile.

``params`` are ``Var``s: a handle parameter with an entry in ``buffer_map`` is a tensor argument accessed through that
buffer, any other parameter is a scalar. ``attrs`` holds TVM's function attributes: ``global_symbol`` (the exported
name), ``tir.noalias`` (buffers do not overlap), ``target``, ``calling_conv``. A PrimFunc sits in an ``IRModule``
beside Relay functions (it is a ``kiln.ir.BaseFunc``).
"""

from dataclasses import dataclass, field
from enum import IntEnum

from ..error import TIRError
from ..ir.attrs import DictAttrs
from ..ir.expr import BaseFunc
from ..ir.node import DEF, IGNORE
from ..ir.type import Type
from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


class CallingConv(IntEnum):
    """The ``calling_conv`` attribute (TVM's ``CallingConv``)."""

    DEFAULT = 0
    C_PACKED_FUNC = 1
    DEVICE_KERNEL_LAUNCH = 2


@dataclass(frozen=True, slots=True, eq=False, init=False, repr=False)
class PrimFunc(BaseFunc):
    """A loop-level function: ``PrimFunc(params, body, ret_type=None, buffer_map=None, attrs=None)``.

    Parameters
    ----------
    params : list of Var
        The parameters (handles for tensors, scalars otherwise).
    body : Stmt
        The body.
    ret_type : Type, optional
        The return type (None: returns nothing; the packed API returns an int32 error code).
    buffer_map : dict of Var to Buffer, optional
        The buffer each handle parameter is accessed through.
    attrs : dict or DictAttrs, optional
        Function attributes (``global_symbol``, ``tir.noalias`` ...).

    Examples
    --------
    >>> A = tir.decl_buffer((16,), "float32", "A")                                  # doctest: +SKIP
    >>> a = tir.Var("a", "handle")                                                  # doctest: +SKIP
    >>> f = tir.PrimFunc([a], body, buffer_map={a: A}).with_attr("global_symbol", "main")   # doctest: +SKIP
    """

    # declared in the order structural equality visits them: the parameters and the buffers (which bind the data
    # handles and symbolic shape variables) before the body; the constructor keeps TVM's argument order
    params: tuple = field(metadata=DEF)
    buffer_map: dict = field(default_factory=dict)
    ret_type: Type | None = None
    body: Stmt = None
    attrs: DictAttrs = field(default_factory=DictAttrs)
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "tir.PrimFunc"
    checked_type_ = None

    def __init__(self, params, body, ret_type=None, buffer_map=None, attrs=None, span=None):
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "ret_type", ret_type)
        object.__setattr__(self, "buffer_map", buffer_map)
        object.__setattr__(self, "attrs", attrs)
        object.__setattr__(self, "span", span)
        self.__post_init__()

    def __post_init__(self):
        buffer_map = dict(self.buffer_map or {})
        params = []
        for p in self.params:
            if isinstance(p, Buffer):  # a buffer parameter: a handle bound to it, as TVM's constructor makes
                handle = Var(p.name, "handle")
                buffer_map[handle] = p
                p = handle
            params.append(p)
        params = tuple(params)
        # in parameter order: TVM compares buffer maps by key, kiln's structural equality walks them in order
        ordered = {p: buffer_map[p] for p in params if p in buffer_map}
        ordered.update((k, v) for k, v in buffer_map.items() if k not in ordered)
        object.__setattr__(self, "buffer_map", ordered)
        for p in params:
            if not isinstance(p, Var):
                raise TIRError(f"tir.PrimFunc: every parameter must be a Var, got {type(p).__name__}")
        object.__setattr__(self, "params", params)
        if not isinstance(self.body, Stmt):
            raise TIRError(f"tir.PrimFunc: body must be a Stmt, got {type(self.body).__name__}")
        buffer_map = dict(self.buffer_map or {})
        for var, buf in buffer_map.items():  # a key that is not a parameter is kept, unused, as TVM keeps it
            if not isinstance(var, Var) or not isinstance(buf, Buffer):
                raise TIRError("tir.PrimFunc: buffer_map must map variables to Buffers")
        object.__setattr__(self, "buffer_map", buffer_map)
        object.__setattr__(self, "attrs", DictAttrs.make(self.attrs))

    def with_body(self, new_body, span=None) -> "PrimFunc":
        """A copy with ``body`` replaced."""
        return self.with_fields(body=new_body)

    def specialize(self, param_map) -> "PrimFunc":
        """Bind parameters to values or buffers (see :mod:`kiln.tir.specialize`).

        Examples
        --------
        >>> func.specialize({n: 128})                                           # doctest: +SKIP
        """
        from .specialize import specialize

        return specialize(self, param_map)

    def script(self, show_meta=False) -> str:
        """The function in TVMScript-like text (what ``str(func)`` prints)."""
        from .printer import script

        return script(self)

    def __str__(self):
        return self.script()

    def __repr__(self):
        return self.script()
