"""Textual pipelines: ``parse_pipeline("InferType,FuseOps(fuse_opt_level=2),sequential(DeadCodeElimination)")``.

Grammar (a Python expression, so it is read with :mod:`ast` and needs no hand-written lexer)::

    pipeline := item ("," item)*
    item     := NAME                        a registered pass with its default options
              | NAME "(" args ")"           options as literals: FuseOps(fuse_opt_level=2), PrintIR("after")
              | "sequential(" pipeline ["," option=literal]* ")"
                                            a nested Sequential; its options are opt_level, name, required
    NAME     := identifier ("." identifier)*

Option values are Python literals (numbers, strings, True/False/None, lists, tuples, dicts); a bare identifier is
read as a string. Every name is resolved through the pass registry; an unknown pass or option, or a malformed text,
raises :class:`PipelineError` (a ``ValueError``) naming it. A value that does not fit the option's declared type
(``FuseOps(fuse_opt_level="0")``) raises :class:`~kiln.ir.pass_context.ConfigError` (a ``ValueError`` too) from the
pass's constructor, naming the pass and the option.

The reverse, :func:`pass_to_text` (what ``str(pass)`` prints), writes a dataclass pass as its name followed by the
options that differ from their defaults, and a ``Sequential`` as its members joined by commas (nested ones inside
``sequential(...)``), so ``str(parse_pipeline(text))`` gives back ``text`` in canonical form (no spaces).
"""

import ast
import dataclasses
import inspect

from ..error import KilnError
from .pass_context import ConfigError

_SEQUENTIAL_NAMES = ("sequential", "Sequential")
_SEQUENTIAL_OPTIONS = ("opt_level", "name", "required")


class PipelineError(KilnError, ValueError):
    """A pipeline text that does not parse, or names an unknown pass or option."""


def parse_pipeline(text):
    """Build a ``Sequential`` from a textual pipeline (see the module docstring for the grammar).

    Parameters
    ----------
    text : str
        Such as ``"InferType,FoldConstant,FuseOps(fuse_opt_level=2),sequential(DeadCodeElimination)"``.

    Returns
    -------
    Sequential
        Named ``"sequential"``, opt_level 0; ``str()`` of it prints ``text`` back.

    Examples
    --------
    >>> seq = parse_pipeline("InferType, FuseOps(fuse_opt_level=2)")   # doctest: +SKIP
    >>> str(seq)
    'InferType,FuseOps(fuse_opt_level=2)'
    """
    from .transform import Sequential

    if not isinstance(text, str):
        raise TypeError(f"parse_pipeline expects a str, not {type(text).__name__}")
    if not text.strip():
        return Sequential([])
    source = _Source(text)
    try:
        tree = ast.parse(source.code, mode="eval").body
    except SyntaxError as exc:
        column = source.lead + (exc.offset or 1)
        raise PipelineError(f"malformed pipeline {text!r}: {exc.msg} at column {column}") from None
    items = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    return Sequential([_build(item, source) for item in items])


class _Source:
    """The pipeline text as one line without leading blanks (what ``ast`` parses), and how to point into it."""

    def __init__(self, text):
        line = " ".join(text.splitlines())
        self.code = line.lstrip()
        self.lead = len(line) - len(self.code)
        self.text = text

    def where(self, node):
        return f" at column {self.lead + node.col_offset + 1}"

    def show(self, node):
        return ast.get_source_segment(self.code, node) or ast.dump(node)


def _dotted_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _literal(node, what, source):
    if isinstance(node, ast.Name):  # a bare word is a string: ConvertLayout(layout=NHWC)
        return node.id
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        raise PipelineError(f"{what}: {source.show(node)!r} is not a literal value{source.where(node)}") from None


def _build(node, source):
    from .transform import Sequential, get_pass_factory

    if isinstance(node, ast.Call):
        name = _dotted_name(node.func)
        args, keywords = node.args, node.keywords
    else:
        name = _dotted_name(node)
        args, keywords = [], []
    if name is None:
        raise PipelineError(
            f"malformed pipeline {source.text!r}: expected a pass name, got {source.show(node)!r}{source.where(node)}"
        )
    named: list[tuple[str, ast.keyword]] = []
    for kw in keywords:
        if kw.arg is None:
            raise PipelineError(f"pass {name}: '**' is not allowed in a pipeline{source.where(kw)}")
        named.append((kw.arg, kw))
    if name in _SEQUENTIAL_NAMES:
        options = {}
        for key, kw in named:
            if key not in _SEQUENTIAL_OPTIONS:
                raise PipelineError(
                    f"sequential has no option {key!r}; its options are {', '.join(_SEQUENTIAL_OPTIONS)}"
                    f"{source.where(kw)}"
                )
            options[key] = _literal(kw.value, f"sequential option {key}", source)
        try:
            return Sequential([_build(arg, source) for arg in args], **options)
        except TypeError as exc:
            raise PipelineError(f"sequential: {exc}") from None
    factory = get_pass_factory(name)
    _check_arguments(name, factory, len(args), [key for key, _ in named])
    values = [_literal(arg, f"pass {name}", source) for arg in args]
    kwvalues = {key: _literal(kw.value, f"pass {name} option {key}", source) for key, kw in named}
    try:
        return factory(*values, **kwvalues)
    except ConfigError:
        raise  # an option of the wrong type: the message names the pass and the option
    except (TypeError, ValueError) as exc:
        raise PipelineError(f"pass {name}: {exc}") from None


def _check_arguments(name, factory, num_args, keywords):
    """Raise PipelineError naming an option ``factory`` does not accept (before calling it)."""
    if dataclasses.is_dataclass(factory):
        accepted = [f.name for f in dataclasses.fields(factory) if f.init and not f.name.startswith("_")]
    else:
        try:
            params = inspect.signature(factory).parameters.values()
        except (TypeError, ValueError):
            return
        if any(p.kind == p.VAR_KEYWORD for p in params):
            return
        accepted = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in keywords:
        if key not in accepted:
            options = ", ".join(accepted) if accepted else "none"
            raise PipelineError(f"pass {name} has no option {key!r}; its options are: {options}")
    if num_args > len(accepted):
        raise PipelineError(f"pass {name} takes at most {len(accepted)} positional options, got {num_args}")


def pass_to_text(p, nested=False) -> str:
    """The pipeline text of pass ``p`` (what ``str(p)`` prints; :func:`parse_pipeline` reads it back)."""
    from .transform import _PASSES, Sequential, pass_fields

    if isinstance(p, Sequential):
        info = p.info
        if info.name not in _SEQUENTIAL_NAMES and info.name in _PASSES and not dataclasses.is_dataclass(p):
            return info.name  # a registered composite such as FoldScaleAxis
        items = [pass_to_text(q, nested=True) for q in p.passes]
        options = []
        if info.opt_level != 0:
            options.append(f"opt_level={info.opt_level!r}")
        if info.name != "sequential":
            options.append(f"name={info.name!r}")
        if info.required:
            options.append(f"required={list(info.required)!r}")
        if not nested and not options:
            return ",".join(items)
        return f"sequential({','.join(items + options)})"
    changed = pass_fields(p)
    name = p.info.name
    if not changed:
        return name
    return f"{name}({','.join(f'{key}={value!r}' for key, value in changed.items())})"
