"""What every ``kiln`` command shares: the one-line usage errors, ``--verbose``, notes on stderr, and the parsers of
``--pass-config``, ``--disabled-pass`` and ``--input-shapes`` values."""

import argparse
import re
import sys

from ..error import KilnError
from ..ir.pass_context import parse_config_value
from ..ir.transform import get_pass_factory

__all__ = ["CommandParser", "add_verbose", "note", "one_line", "parse_pass_config", "parse_pass_names",
           "parse_input_shapes"]


class CommandParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line too."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_verbose(parser):
    """Add ``-v/--verbose``: on an error, print the traceback before the one-line message."""
    parser.add_argument("-v", "--verbose", action="store_true", help="on an error, print the Python traceback too")


def note(command, message):
    """Print ``kiln <command>: note: <message>`` on stderr (what a command chose for the user, or ignored)."""
    print(f"kiln {command}: note: {message}", file=sys.stderr)


def one_line(exc) -> str:
    """``exc`` as one line: its message with whitespace collapsed, kiln's notes (``add_note("kiln: ...")``) in
    parentheses, and the exception's class in front when it is not one of the errors bad input raises."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    notes = [n.removeprefix("kiln: ") for n in getattr(exc, "__notes__", ()) if n.startswith("kiln: ")]
    if notes:
        message = f"{message} ({'; '.join(notes)})"
    if not isinstance(exc, KilnError | ValueError | TypeError | OSError):
        message = f"{type(exc).__name__}: {message}"
    return message


def parse_pass_config(pairs, bisect_limit=None) -> dict:
    """The PassContext config of ``--pass-config KEY=VALUE`` options (values typed as the key is registered)."""
    config = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise KilnError(f"--pass-config expects KEY=VALUE, got {pair!r}")
        config[key.strip()] = parse_config_value(key.strip(), text.strip())
    if bisect_limit is not None:
        config["transform.max_passes"] = bisect_limit
    return config


def parse_pass_names(values) -> list:
    """The pass names of repeated and comma-separated options (``--disabled-pass A,B --disabled-pass C``), each
    checked against the pass registry (an unknown name raises a ValueError naming it)."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for name in names:
        get_pass_factory(name)
    return names


_SHAPE_ENTRY = re.compile(r"\s*(?P<name>[^\s\[\]]+?)\s*:\s*\[(?P<dims>[^\[\]]*)\]")


def parse_input_shapes(text) -> dict:
    """Shapes by input name from tvmc's ``--input-shapes`` syntax: ``"data:[1,3,224,224] mask:[1,128]"``.

    Entries are separated by spaces; a name may contain colons (``input:0:[1,10]``); dimensions are positive
    integers (kiln compiles for static shapes).

    Raises
    ------
    KilnError
        Naming the part of ``text`` that is not an entry, or the dimension that is not a positive integer.

    Examples
    --------
    >>> parse_input_shapes("data:[1,3,224,224] input:0:[1, 10]")
    {'data': (1, 3, 224, 224), 'input:0': (1, 10)}
    """
    shapes: dict = {}
    pos = 0
    while text[pos:].strip():
        match = _SHAPE_ENTRY.match(text, pos)
        if match is None:
            raise KilnError(f"--input-shapes: cannot read {text[pos:].strip()!r}; expected entries NAME:[D1,D2,...] "
                            f'separated by spaces, e.g. "data:[1,3,224,224]"')
        name, dims = match["name"], [d.strip() for d in match["dims"].split(",")] if match["dims"].strip() else []
        bad = [d for d in dims if not d.isdigit() or int(d) == 0]
        if bad:
            raise KilnError(f"--input-shapes: input {name!r}: dimension {bad[0]!r} is not a positive integer (kiln "
                            f"compiles for static shapes)")
        if name in shapes:
            raise KilnError(f"--input-shapes: input {name!r} is given twice")
        shapes[name] = tuple(int(d) for d in dims)
        pos = match.end()
    if not shapes:
        raise KilnError('--input-shapes: no shapes given; expected entries NAME:[D1,D2,...], e.g. "data:[1,3,224,224]"')
    return shapes
