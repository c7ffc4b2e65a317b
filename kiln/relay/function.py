"""Relay ``Function``: parameters, a body, an optional return type and attributes (``Primitive=1`` marks a fused op)."""

from dataclasses import dataclass, field
from typing import Any

from ..error import KilnError
from ..ir.attrs import DictAttrs
from ..ir.expr import BaseFunc, RelayExpr
from ..ir.node import DEF, IGNORE, TYPE_DEF
from ..ir.type import Type
from ..ir.type_poly import TypeVar
from .expr import ExprWithOp, Var, _check_exprs


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Function(ExprWithOp, BaseFunc, RelayExpr):
    """``fn (%x: Tensor[...], ...) -> ret_type { body }``.

    Parameters
    ----------
    params : list of Var
        The parameters.
    body : RelayExpr
        The result.
    ret_type : Type, optional
        The declared return type.
    attrs : dict or DictAttrs, optional
        Attributes such as ``{"Primitive": 1}``; read with ``fn.attrs["Primitive"]``. A list here is taken as
        ``type_params`` (and the next argument as ``attrs``), TVM's order of the arguments.
    type_params : list of TypeVar, optional
        The type parameters of a polymorphic function (``fn [A](%x: A) -> A``).
    """

    params: tuple = field(metadata=DEF)
    body: RelayExpr
    ret_type: Type | None = None
    attrs: DictAttrs = field(default_factory=DictAttrs)  # SPEC's position: Function(params, body, ret_type, attrs)
    type_params: tuple = field(default=(), metadata=TYPE_DEF)
    # where the result lives (TVM's ``virtual_device_``, set by PlanDevices and printed as ``virtual_device=`` among
    # the parameters); as in TVM, structural equality does not compare it. None when unconstrained.
    virtual_device_: Any = field(default=None, kw_only=True, metadata=IGNORE, repr=False)

    def __post_init__(self):
        if isinstance(self.attrs, list | tuple):  # TVM's order: Function(params, body, ret_type, type_params, attrs)
            type_params, attrs = self.attrs, self.type_params
            object.__setattr__(self, "type_params", tuple(type_params))
            object.__setattr__(self, "attrs", attrs if isinstance(attrs, dict | DictAttrs) else None)
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "type_params", tuple(self.type_params))
        object.__setattr__(self, "attrs", DictAttrs.make(self.attrs))
        if "virtual_device" in self.attrs:  # the text form's `virtual_device=` is the field, not an attribute
            vd = self.attrs["virtual_device"]
            object.__setattr__(self, "attrs", DictAttrs.make({k: v for k, v in self.attrs.items()
                                                              if k != "virtual_device"}))
            object.__setattr__(self, "virtual_device_", vd)
        if getattr(self.virtual_device_, "is_fully_unconstrained", False):
            object.__setattr__(self, "virtual_device_", None)
        for p in self.params:
            if not isinstance(p, Var):
                raise KilnError(f"relay.Function: every parameter must be a Var, got {type(p).__name__}")
        for tv in self.type_params:
            if not isinstance(tv, TypeVar):
                raise KilnError(f"relay.Function: every type parameter must be a TypeVar, got {type(tv).__name__}")
        _check_exprs((self.body,), "relay.Function body")

    @property
    def virtual_device(self):
        """The VirtualDevice holding the function's result (fully unconstrained when unknown)."""
        if self.virtual_device_ is None:
            from ..target.virtual_device import VirtualDevice

            return VirtualDevice()
        return self.virtual_device_

    def is_primitive(self) -> bool:
        """Whether this is a fused operator (``Primitive=1``)."""
        return bool(self.attrs.get("Primitive", 0))
