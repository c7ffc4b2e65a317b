"""Diagnostics (TVM's ``ir.diagnostics``): errors in source text are emitted into a :class:`DiagnosticContext`,
rendered by the current renderer, then raised as a :class:`~kiln.error.DiagnosticError`.

The default renderer prints each diagnostic with its source position to stderr; ``override_renderer(f)`` installs
``f(ctx)`` instead (how tests capture messages) and ``override_renderer(None)`` restores the default. The Relay
parser reports its errors this way.
"""

import enum
import sys

from ..error import DiagnosticError
from ..runtime.object import Object

__all__ = ["DiagnosticLevel", "Diagnostic", "DiagnosticRenderer", "DiagnosticContext", "get_renderer",
           "override_renderer", "report"]


class DiagnosticLevel(enum.IntEnum):
    """How serious a diagnostic is (TVM's levels)."""

    BUG = 10
    ERROR = 20
    WARNING = 30
    NOTE = 40
    HELP = 50


class Diagnostic(Object):
    """One message at a source ``span`` (None when unknown)."""

    __slots__ = ("level", "span", "message")

    def __init__(self, level, span, message):
        self.level, self.span, self.message = DiagnosticLevel(level), span, str(message)

    def __str__(self):
        where = f"{self.span}: " if self.span is not None else ""
        return f"{where}{self.level.name.lower()}: {self.message}"


class DiagnosticRenderer(Object):
    """Renders a context with ``render_func(ctx)``."""

    __slots__ = ("render_func",)

    def __init__(self, render_func):
        self.render_func = render_func

    def render(self, ctx):
        """Render the diagnostics of ``ctx``."""
        self.render_func(ctx)


class DiagnosticContext(Object):
    """The diagnostics of one task on ``module`` (may be None), rendered by ``renderer``."""

    __slots__ = ("module", "renderer", "diagnostics")

    def __init__(self, module, renderer):
        self.module, self.renderer, self.diagnostics = module, renderer, []

    def emit(self, diagnostic):
        """Add ``diagnostic``."""
        self.diagnostics.append(diagnostic)

    def render(self):
        """Render the diagnostics, then raise DiagnosticError when one of them is an error (or a bug)."""
        self.renderer.render(self)
        errors = [d for d in self.diagnostics if d.level <= DiagnosticLevel.ERROR]
        self.diagnostics = []
        if errors:
            raise DiagnosticError("\n".join(d.message for d in errors))


def _print(ctx):
    for diagnostic in ctx.diagnostics:
        print(diagnostic, file=sys.stderr)


_DEFAULT = DiagnosticRenderer(_print)
_current = [_DEFAULT]


def get_renderer() -> DiagnosticRenderer:
    """The renderer diagnostics go to now."""
    return _current[0]


def override_renderer(render_func):
    """Render with ``render_func(ctx)`` from now on; None restores the default renderer."""
    _current[0] = _DEFAULT if render_func is None else DiagnosticRenderer(render_func)


def report(error, module=None):
    """Emit ``error`` (a DiagnosticError from parsing) as an error diagnostic, render it with the current renderer
    and raise it again."""
    ctx = DiagnosticContext(module, get_renderer())
    ctx.emit(Diagnostic(DiagnosticLevel.ERROR, getattr(error, "span", None), str(error)))
    try:
        ctx.render()
    except DiagnosticError:
        pass
    raise error
