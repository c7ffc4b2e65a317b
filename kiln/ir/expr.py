"""Expression bases shared by Relay and TIR: ``RelayExpr`` (with span and inferred type), ``GlobalVar``,
``BaseFunc``."""

from dataclasses import dataclass, field

from ..error import TypeInferenceError
from .attrs import DictAttrs
from .node import IGNORE, Node


@dataclass(frozen=True, slots=True, eq=False)
class RelayExpr(Node):
    """Base of Relay expressions: a source ``span`` and the type ``InferType`` filled in (``checked_type``)."""

    span: object = field(default=None, kw_only=True, metadata=IGNORE)
    checked_type_: object = field(default=None, kw_only=True, metadata=IGNORE, repr=False)

    @property
    def checked_type(self):
        """The type inferred for this expression; raises TypeInferenceError before type inference ran."""
        if self.checked_type_ is None:
            raise TypeInferenceError(
                f"the type of this {type(self).__name__} is not known: run relay.transform.InferType() first"
            )
        return self.checked_type_


@dataclass(frozen=True, slots=True)
class GlobalVar(Node):
    """The name of a function in an :class:`IRModule` (``@main``). Two GlobalVars with one name are equal."""

    name_hint: str
    span: object = field(default=None, kw_only=True, compare=False, metadata=IGNORE)

    checked_type_ = None

    def __str__(self):
        return f"@{self.name_hint}"

    def astext(self, show_meta_data=True) -> str:
        """The global variable in the text format (``@name``, after the version header)."""
        return f'#[version = "0.0.5"]\n@{self.name_hint}'


    def __call__(self, *args):
        from ..runtime.packed_func import get_global_func

        return get_global_func("relay.Call")(self, list(args))


class BaseFunc(Node):
    """Base of Relay ``Function`` and TIR ``PrimFunc``: both carry ``attrs`` and support ``with_attr``."""

    __slots__ = ()
    attrs: DictAttrs  # a dataclass field of each subclass

    def with_attr(self, key, value=None):
        """Return a copy with the attribute ``key`` set to ``value`` (or, given a dict, every ``key: value`` of it,
        as TVM's ``with_attr`` takes either).

        Examples
        --------
        >>> fn.with_attr("Primitive", 1).attrs["Primitive"]   # doctest: +SKIP
        1
        """
        if isinstance(key, dict):
            return self.with_attrs(key)
        return self.with_fields(attrs=DictAttrs.make(self.attrs).with_attr(key, value))

    def with_attrs(self, mapping):
        """Return a copy with every ``key: value`` of ``mapping`` set."""
        attrs = DictAttrs.make(self.attrs)
        for key, value in mapping.items():
            attrs = attrs.with_attr(key, value)
        return self.with_fields(attrs=attrs)
