"""The operator registry: one ``Op`` object per name, with attributes set by ``register_op_attr``.

Attributes are how layers attach behaviour to operators without the operator knowing them: Relay sets
``TOpPattern`` and ``FInferType``, the interpreter ``FEvaluate``, ``topi`` the ``FTVMCompute`` used by lowering.
"""

from dataclasses import dataclass

from ..error import KilnError
from .node import Node

_OPS: dict[str, "Op"] = {}
_OP_ATTRS: dict[str, dict[str, tuple[int, object]]] = {}


@dataclass(frozen=True, slots=True, eq=False)
class Op(Node):
    """A primitive operator, such as ``nn.conv2d``. Get one with :meth:`Op.get`."""

    name: str

    checked_type_ = None
    span = None

    @staticmethod
    def get(op_name: str) -> "Op":
        """Return the operator registered as ``op_name``.

        Examples
        --------
        >>> Op.get("nn.conv2d").get_attr("TOpPattern")   # doctest: +SKIP
        <OpPattern.OUT_ELEMWISE_FUSABLE: 4>
        """
        op = _OPS.get(op_name)
        if op is None:
            raise KilnError(f"operator {op_name!r} is not registered")
        return op

    @classmethod
    def __from_json__(cls, fields):
        return cls.get(fields["name"])

    def astext(self, show_meta_data=True) -> str:
        """The operator in the text format (its name, after the version header)."""
        return f'#[version = "0.0.5"]\n{self.name}'

    def get_attr(self, attr_name: str):
        """Return the attribute ``attr_name`` of this operator, or None when unset."""
        entry = _OP_ATTRS.get(self.name, {}).get(attr_name)
        return None if entry is None else entry[1]

    def has_attr(self, attr_name: str) -> bool:
        """Whether the attribute ``attr_name`` is set."""
        return attr_name in _OP_ATTRS.get(self.name, {})

    def set_attr(self, attr_name: str, value, plevel: int = 10):
        """Set an attribute (see :func:`register_op_attr`)."""
        register_op_attr(self.name, attr_name, value, plevel)

    def get_attr_level(self, attr_name: str):
        """The level the attribute ``attr_name`` was registered at, or None when unset."""
        entry = _OP_ATTRS.get(self.name, {}).get(attr_name)
        return None if entry is None else entry[0]

    def reset_attr(self, attr_name: str):
        """Remove the attribute ``attr_name`` (TVM's ``Op.reset_attr``), so any level may set it again."""
        _OP_ATTRS.get(self.name, {}).pop(attr_name, None)

    # TVM's builder API for operators registered from Python (``relay.op.op.register(...)``)
    def _put(self, attr_name, value):
        _OP_ATTRS.setdefault(self.name, {})[attr_name] = (10, value)

    def set_num_inputs(self, num_inputs: int):
        """Set how many arguments the operator takes."""
        self._put("num_inputs", int(num_inputs))

    def add_argument(self, name: str, type_info: str, description: str = ""):
        """Document an argument (kept in the ``arguments`` attribute)."""
        self._put("arguments", (*(self.get_attr("arguments") or ()), (name, type_info, description)))

    def set_support_level(self, level: int):
        """Set the support level (TVM's documentation grouping)."""
        self._put("support_level", int(level))

    def set_attrs_type_key(self, key: str):
        """Name the attribute record calls of the operator carry."""
        self._put("attrs_type_key", key)

    def add_type_rel(self, rel_name: str, type_rel_func=None):
        """Set the type relation: ``type_rel_func(arg_types, attrs) -> result type``, or without one the relation
        registered as ``tvm.relay.type_relation.<rel_name>`` (``"Identity"``, ``"Broadcast"``)."""
        if type_rel_func is None:
            from .env_func import EnvFunc

            type_rel_func = EnvFunc.get(f"tvm.relay.type_relation.{rel_name}")
        self._put("FTypeRelation", type_rel_func)

    def __str__(self):
        return self.name


def register_op(op_name: str) -> Op:
    """Create (or return, if it exists) the operator ``op_name``."""
    op = _OPS.get(op_name)
    if op is None:
        op = _OPS[op_name] = Op(op_name)
    return op


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Set attribute ``attr_key`` of operator ``op_name``; usable as a decorator when ``value`` is omitted.

    A later registration replaces an earlier one only with a higher ``level`` (as in TVM).

    Examples
    --------
    >>> register_op_attr("nn.relu", "TOpPattern", OpPattern.ELEMWISE, level=11)   # doctest: +SKIP
    """

    def register(val):
        register_op(op_name)
        attrs = _OP_ATTRS.setdefault(op_name, {})
        old = attrs.get(attr_key)
        if old is not None and old[0] >= level:
            raise KilnError(
                f"attribute {attr_key} of operator {op_name} is already registered at level {old[0]}; "
                f"use a higher level to override it"
            )
        attrs[attr_key] = (level, val)
        return val

    return register if value is None else register(value)


def has_op(op_name: str) -> bool:
    """Whether the operator ``op_name`` is registered."""
    return op_name in _OPS


def list_op_names() -> list[str]:
    """Return the names of every registered operator."""
    return sorted(_OPS)
