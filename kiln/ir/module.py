"""IRModule: the unit every pass transforms, a mapping from GlobalVar to function (Relay ``Function`` or ``PrimFunc``).

Unlike expression nodes, a module can be updated in place (``mod["f"] = func``), as in TVM; passes return new modules.
"""

from dataclasses import dataclass, field

from ..error import KilnError
from ..runtime.packed_func import get_global_func
from .attrs import DictAttrs
from .expr import BaseFunc, GlobalVar, RelayExpr
from .node import Node


@dataclass(eq=False, slots=True)
class IRModule(Node):
    """A set of named functions plus module attributes.

    Examples
    --------
    >>> mod = IRModule.from_expr(relay.add(x, x))   # doctest: +SKIP
    >>> mod["main"]                                 # doctest: +SKIP
    """

    functions: dict = field(default_factory=dict)
    attrs: DictAttrs = field(default_factory=DictAttrs)

    type_key = "ir.IRModule"

    def __init__(self, functions=None, type_definitions=None, attrs=None):
        self.functions = {}
        self.attrs = DictAttrs.make(attrs)
        for key, func in (functions or {}).items():
            self[key] = func

    @classmethod
    def __from_json__(cls, fields):
        return cls(fields["functions"], attrs=fields["attrs"])

    @staticmethod
    def from_expr(expr, functions=None, type_defs=None) -> "IRModule":
        """Wrap ``expr`` in ``@main``: a function is used as is; any other expression becomes the body of a
        function over its free variables."""
        main = get_global_func("relay.ir.as_function")(expr)
        mod = IRModule(functions)
        mod["main"] = main
        return mod

    def _lookup(self, key) -> GlobalVar:
        if isinstance(key, GlobalVar):
            return key
        if isinstance(key, str):
            return self.get_global_var(key)
        raise KilnError(f"IRModule: a key must be a str or GlobalVar, not {type(key).__name__}")

    def __getitem__(self, key):
        gv = self._lookup(key)
        if gv not in self.functions:
            raise KilnError(f"IRModule has no function {gv}; it has {', '.join(map(str, self.functions)) or 'none'}")
        return self.functions[gv]

    def __setitem__(self, key, func):
        gv = key if isinstance(key, GlobalVar) else GlobalVar(str(key))
        if not isinstance(key, GlobalVar | str):
            raise KilnError(f"IRModule: a key must be a str or GlobalVar, not {type(key).__name__}")
        if isinstance(func, RelayExpr) and not isinstance(func, BaseFunc | GlobalVar):
            # an expression becomes a function of its free variables, as TVM's Module_Add does
            func = get_global_func("relay.ir.as_function")(func)
        self.functions[gv] = func

    def __contains__(self, key):
        name = key.name_hint if isinstance(key, GlobalVar) else key
        return any(gv.name_hint == name for gv in self.functions)

    def __iter__(self):
        return iter(self.functions.items())

    def __len__(self):
        return len(self.functions)

    def get_global_var(self, name: str) -> GlobalVar:
        """Return the GlobalVar named ``name``; raises KilnError naming the known functions when absent."""
        for gv in self.functions:
            if gv.name_hint == name:
                return gv
        raise KilnError(f"IRModule has no function @{name}; it has {', '.join(map(str, self.functions)) or 'none'}")

    def get_global_vars(self) -> list[GlobalVar]:
        """Return the GlobalVars of every function, sorted by name."""
        return sorted(self.functions, key=lambda gv: gv.name_hint)

    def update(self, other: "IRModule"):
        """Add (or replace) every function of ``other``."""
        for gv, func in other.functions.items():
            self[gv] = func

    def update_func(self, gv, func):
        """Replace the function ``gv``."""
        self[gv] = func

    def remove(self, key):
        """Remove the function ``key`` (a name or GlobalVar)."""
        del self.functions[self._lookup(key)]

    def with_attr(self, key, value) -> "IRModule":
        """Return a copy of the module whose attribute ``key`` is ``value``."""
        return IRModule(self.functions, attrs=self.attrs.with_attr(key, value))

    def shallow_copy(self) -> "IRModule":
        """Return a new module holding the same function objects."""
        return IRModule(self.functions, attrs=self.attrs)

    def astext(self, show_meta_data=True) -> str:
        """The module in the text format (what ``str(mod)`` prints); without the metadata section (constant
        tensors) when ``show_meta_data`` is False."""
        printer = get_global_func("relay.ir.astext", allow_missing=True)
        if printer is None:
            return f"IRModule({', '.join(map(str, self.functions))})"
        return printer(self, show_meta_data)

    def __str__(self):
        return self.astext()

    def __repr__(self):
        return self.astext()
