"""IRModule: the unit every pass transforms, a mapping from GlobalVar to function (Relay ``Function`` or ``PrimFunc``)
plus the algebraic data types those functions use (GlobalTypeVar to ``TypeData``).

Unlike expression nodes, a module can be updated in place (``mod["f"] = func``), as in TVM; passes return new modules.
"""

from dataclasses import dataclass, field

from ..error import KilnError
from ..runtime.packed_func import get_global_func
from .adt import TypeData
from .attrs import DictAttrs
from .expr import BaseFunc, GlobalVar, RelayExpr
from .node import IGNORE, Node
from .type_poly import GlobalTypeVar


class _Definitions(dict):
    """The type definitions of a module: a dict whose ``items()`` is a list, as TVM's Map gives it
    (``mod.type_definitions.items()[0]``)."""

    def items(self):
        return list(super().items())


@dataclass(eq=False, slots=True)
class IRModule(Node):
    """A set of named functions plus module attributes.

    Examples
    --------
    >>> mod = IRModule.from_expr(relay.add(x, x))   # doctest: +SKIP
    >>> mod["main"]                                 # doctest: +SKIP
    """

    # type definitions come first: structural comparison binds their type variables before the functions'
    # constructors are compared
    type_definitions: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    attrs: DictAttrs = field(default_factory=DictAttrs)
    _std_imports: tuple = field(default=(), init=False, repr=False, metadata=IGNORE)  # files import_from_std read

    type_key = "ir.IRModule"

    def __init__(self, functions=None, type_definitions=None, attrs=None):
        self.type_definitions = _Definitions()
        self.functions = {}
        self.attrs = DictAttrs.make(attrs)
        self._std_imports = ()
        for key, data in (type_definitions or {}).items():
            self[key] = data
        for key, func in (functions or {}).items():
            self[key] = func

    @classmethod
    def __from_json__(cls, fields):
        return cls(fields["functions"], fields.get("type_definitions"), attrs=fields["attrs"])

    @staticmethod
    def from_expr(expr, functions=None, type_defs=None) -> "IRModule":
        """Wrap ``expr`` in ``@main``: a function is used as is; any other expression becomes the body of a
        function over its free variables. ``type_defs`` maps GlobalTypeVars to the TypeData ``expr`` uses."""
        # a PrimFunc (any function that is not a Relay expression) goes in as it is, as in TVM
        main = expr if isinstance(expr, BaseFunc) and not isinstance(expr, RelayExpr) else \
            get_global_func("relay.ir.as_function")(expr)
        mod = IRModule(functions, type_defs)
        mod["main"] = main
        return mod

    def _lookup(self, key) -> GlobalVar:
        if isinstance(key, GlobalVar):
            return key
        if isinstance(key, str):
            return self.get_global_var(key)
        raise KilnError(f"IRModule: a key must be a str or GlobalVar, not {type(key).__name__}")

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            return self.type_definitions[self.get_global_type_var(key.name_hint)]
        gv = self._lookup(key)
        if gv not in self.functions:
            raise KilnError(f"IRModule has no function {gv}; it has {', '.join(map(str, self.functions)) or 'none'}")
        return self.functions[gv]

    def __setitem__(self, key, func):
        if isinstance(key, GlobalTypeVar) or isinstance(func, TypeData):
            self.add_type_def(key, func)
            return
        gv = key if isinstance(key, GlobalVar) else GlobalVar(str(key))
        if not isinstance(key, GlobalVar | str):
            raise KilnError(f"IRModule: a key must be a str or GlobalVar, not {type(key).__name__}")
        if isinstance(func, RelayExpr) and not isinstance(func, BaseFunc | GlobalVar):
            # an expression becomes a function of its free variables, as TVM's Module_Add does
            func = get_global_func("relay.ir.as_function")(func)
        self.functions[gv] = func

    def _add(self, key, func, update=False):
        """Add the function ``func`` as ``key`` (TVM's ``IRModule._add``); an existing one is replaced only with
        ``update``."""
        if key in self and not update:
            raise KilnError(f"IRModule already has a function {key}; pass update=True to replace it")
        self[key] = func

    def add_type_def(self, key, data, update=True):
        """Define the data type ``key`` (a GlobalTypeVar or its name) as ``data`` (a TypeData); its constructors
        become reachable through :meth:`get_constructor` and :meth:`get_type`."""
        if not isinstance(data, TypeData):
            raise KilnError(f"IRModule: the definition of type {key} must be a TypeData, not {type(data).__name__}")
        gtv = key if isinstance(key, GlobalTypeVar) else GlobalTypeVar(str(key))
        if gtv != data.header:
            raise KilnError(f"IRModule: type {gtv} is defined by a TypeData of {data.header}")
        if not update and any(g.name_hint == gtv.name_hint for g in self.type_definitions):
            raise KilnError(f"IRModule already defines type {gtv}")
        self.type_definitions.pop(gtv, None)  # a redefinition takes the new header (its span)
        self.type_definitions[gtv] = data

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        """Return the GlobalTypeVar of the data type ``name``; raises KilnError naming the known types when absent."""
        for gtv in self.type_definitions:
            if gtv.name_hint == name:
                return gtv
        known = ", ".join(g.name_hint for g in self.type_definitions) or "none"
        raise KilnError(f"IRModule has no type definition {name}; it has {known}")

    def get_global_type_vars(self) -> list:
        """Return the GlobalTypeVars of every type definition, sorted by name."""
        return sorted(self.type_definitions, key=lambda gtv: gtv.name_hint)

    def get_type(self, name: str) -> tuple:
        """``(global_type_var, *constructors)`` of the data type ``name`` (TVM's ``IRModule.get_type``).

        Examples
        --------
        >>> list_type, cons, nil = mod.get_type("List")   # doctest: +SKIP
        """
        gtv = self.get_global_type_var(name)
        return (gtv, *self.type_definitions[gtv].constructors)

    def get_constructor(self, tag: int):
        """Return the constructor whose tag is ``tag``."""
        for data in self.type_definitions.values():
            for ctor in data.constructors:
                if ctor.tag == tag:
                    return ctor
        raise KilnError(f"IRModule has no constructor with tag {tag}")

    def import_from_std(self, file_to_import: str):
        """Add the definitions of the standard library file ``file_to_import`` (such as ``"prelude.rly"``) to
        this module; a file already imported is not read again."""
        if file_to_import in self._std_imports:
            return
        get_global_func("relay.std.import")(self, file_to_import)
        self._std_imports = (*self._std_imports, file_to_import)

    def import_(self, path: str):
        """Add the definitions of the Relay text file ``path`` to this module."""
        get_global_func("relay.std.import_file")(self, path)

    def __contains__(self, key):
        if isinstance(key, GlobalTypeVar):
            return any(g.name_hint == key.name_hint for g in self.type_definitions)
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
        """Add (or replace) every type definition and function of ``other``."""
        for gtv, data in other.type_definitions.items():
            self.add_type_def(gtv, data)
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
        return IRModule(self.functions, self.type_definitions, attrs=self.attrs.with_attr(key, value))

    def shallow_copy(self) -> "IRModule":
        """Return a new module holding the same function and type definition objects."""
        copy = IRModule(self.functions, self.type_definitions, attrs=self.attrs)
        copy._std_imports = self._std_imports
        return copy

    def astext(self, show_meta_data=True, annotate=None) -> str:
        """The module in the text format (what ``str(mod)`` prints); without the metadata section (constant
        tensors) when ``show_meta_data`` is False; ``annotate(expr) -> str`` replaces the type comments."""
        printer = get_global_func("relay.ir.astext", allow_missing=True)
        if printer is None:
            return f"IRModule({', '.join(map(str, self.functions))})"
        return printer(self, show_meta_data, annotate)

    def __str__(self):
        return self.astext()

    def __repr__(self):
        return self.astext()
