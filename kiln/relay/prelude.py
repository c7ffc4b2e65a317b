"""The Relay standard library: ``IRModule.import_from_std`` and ``relay.prelude.Prelude`` (TVM's names).

The library is Relay text shipped with kiln (``kiln/relay/std/*.rly``): ``prelude.rly`` (lists, options, rose trees
and the functions over them) and ``nat.rly`` (unary natural numbers, for tests). Importing a file parses it with
the module's own definitions in scope, types the result and adds its type definitions and functions to the module.
"""

import pathlib

from ..error import KilnError
from ..ir.module import IRModule
from ..runtime.packed_func import register_func
from .parser import parse
from .transform.infer_type import infer_type

STD_DIR = pathlib.Path(__file__).resolve().parent / "std"

# the functions of prelude.rly, which Prelude exposes as attributes (``prelude.map``)
GLOBAL_DEFS = ("id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr", "foldr1", "concat",
               "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl", "unfoldr", "sum", "length", "tmap",
               "size", "iterate")


@register_func("relay.std.import_file")
def import_file(mod, path):
    """Add the definitions of the Relay text file ``path`` to ``mod`` (typed; its own definitions are in scope)."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise KilnError(f"cannot read the Relay file {path}: {exc}") from None
    mod.update(infer_type(parse(text, init_module=mod, source_name=str(path))))


@register_func("relay.std.import")
def import_std(mod, name):
    """Add the definitions of the standard library file ``name`` (``"prelude.rly"``) to ``mod``."""
    path = STD_DIR / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in STD_DIR.glob("*.rly")))
        raise KilnError(f"no standard library file {name!r}; kiln has {known}")
    import_file(mod, path)


class Prelude:
    """The prelude's definitions in a module, with Python names for them (TVM's ``relay.prelude.Prelude``).

    Attributes: ``mod``; ``l``, ``cons``, ``nil`` (the List type and its constructors); ``optional``, ``some``,
    ``none``; ``tree``, ``rose``; and a GlobalVar per function of :data:`GLOBAL_DEFS` (``prelude.map``...).

    Examples
    --------
    >>> p = Prelude()
    >>> p.mod[p.length]   # doctest: +SKIP
    """

    def __init__(self, mod=None):
        self.mod = IRModule() if mod is None else mod
        self.load_prelude()

    def load_prelude(self):
        """Import prelude.rly into the module (once) and bind the attributes."""
        self.mod.import_from_std("prelude.rly")
        self.l, self.cons, self.nil = self.mod.get_type("List")
        self.optional, self.some, self.none = self.mod.get_type("Option")
        self.tree, self.rose = self.mod.get_type("Tree")
        for name in GLOBAL_DEFS:
            setattr(self, name, self.mod.get_global_var(name))

    def get_global_var(self, name, dtype=None):
        """The GlobalVar of the prelude function ``name``."""
        return self.mod.get_global_var(name if dtype is None else f"{name}_{dtype}")

    def get_type(self, name, dtype=None):
        """The GlobalTypeVar of the prelude type ``name``."""
        return self.mod.get_global_type_var(name if dtype is None else f"{name}_{dtype}")

    def get_ctor(self, type_name, ctor_name, dtype=None):
        """The constructor ``ctor_name`` of the prelude type ``type_name``."""
        gtv = self.get_type(type_name, dtype)
        for ctor in self.mod[gtv].constructors:
            if ctor.name_hint == ctor_name:
                return ctor
        raise KilnError(f"type {gtv} has no constructor {ctor_name}")


__all__ = ["GLOBAL_DEFS", "Prelude", "import_file", "import_std"]
