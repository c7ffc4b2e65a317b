"""``Executor`` and ``Runtime`` descriptions passed to ``relay.build`` (TVM's ``relay.backend.Executor/Runtime``).

kiln has one executor, the graph executor (``Executor("graph")``), and one runtime, the Python runtime standing in
for TVM's C++ one (``Runtime("cpp")``). They are accepted so that TVM scripts passing them run unchanged; any other
kind is refused by ``relay.build`` with a :class:`~kiln.error.KilnError` naming it. Options are kept for reading
back (``executor["link-params"]``); the graph executor ignores ``link-params`` (parameters always stay in
``get_params()``, and the ``relay.FuseOps.link_params`` config key controls fusion).
"""

from dataclasses import dataclass, field

from ...error import KilnError

__all__ = ["Executor", "Runtime"]


def _options(kind, name, options):
    if options is not None and not isinstance(options, dict):
        raise KilnError(f"{kind}({name!r}): options must be a dict, got {type(options).__name__}")
    return dict(options or {})


@dataclass(frozen=True)
class Executor:
    """An executor kind with options: ``Executor("graph")``, ``Executor("graph", {"link-params": True})``."""

    name: str = "graph"
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "options", _options("Executor", self.name, self.options))

    def __getitem__(self, key):
        return self.options[key]

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Runtime:
    """A runtime kind with options: ``Runtime("cpp")``."""

    name: str = "cpp"
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "options", _options("Runtime", self.name, self.options))

    def __getitem__(self, key):
        return self.options[key]

    def __str__(self):
        return self.name
