"""Tokenizer of the Relay text format.

One compiled regular expression with a named alternative per token kind is matched at the current position until
the text ends; whitespace and comments (``// ...`` and nested ``/* ... */``, which is how ``/* ty=... */`` type
annotations are skipped) produce no token. ``#[metadata]`` ends the token stream: the rest of the text is the
metadata JSON, returned as the last token. Each token is a tuple ``(kind, value, line, column, end_column)`` with
1-based positions; a token never spans lines.

Kinds: ``LOCAL`` (``%x``, ``%input.1``; value the name), ``QLOCAL`` (``%"a:b"``), ``GRAPH`` (``%3``; value the int),
``GLOBAL`` (``@main``), ``META`` (``meta[relay.Constant][0]``; value ``(key, index)``), ``NUM`` (raw text such as
``1e-05f``), ``STR`` (decoded string), ``IDENT`` (keywords, operator names, dtypes), ``PROJ`` (``.1``; value the int),
``VERSION``, ``METADATA`` (the JSON text), punctuation (kind and value are the text: ``(``, ``->``, ``=``...), ``EOF``.
"""

import json
import re

from ..error import DiagnosticError

_TOKEN_RE = re.compile(
    r"""
     (?P<ws>[ \t\r\f]+)
    |(?P<nl>\n)
    |(?P<lc>//[^\n]*)
    |(?P<bc>/\*)
    |(?P<attr>\#\[[ \t]*(?:version[ \t]*=[ \t]*"(?P<ver>[^"\n]*)"|(?P<md>metadata))[ \t]*\])
    |(?P<graph>%[0-9]+)
    |(?P<qlocal>%"(?:[^"\\\n]|\\.)*")
    |(?P<local>%[A-Za-z_/][A-Za-z0-9_/]*(?:\.[A-Za-z0-9_/]+)*)
    |(?P<qglobal>@"(?:[^"\\\n]|\\.)*")
    |(?P<global>@[A-Za-z_][A-Za-z0-9_]*)
    |(?P<meta>meta\[(?P<mkey>[A-Za-z0-9_.]+)\]\[(?P<midx>[0-9]+)\])
    |(?P<num>(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_])|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?(?:[fiu][0-9]*)?)
    |(?P<str>"(?:[^"\\\n]|\\.)*")
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<proj>\.[0-9]+)
    |(?P<punct>->|[()\[\]{},;:=+\-*/?])
    """,
    re.VERBOSE,
)


def _skip_block_comment(text, pos, line, line_start):
    """Skip a (nested) ``/* ... */`` starting at ``pos``; returns ``(pos, line, line_start)`` after it."""
    start_line, start_col = line, pos - line_start + 1
    depth = 0
    n = len(text)
    while pos < n:
        two = text[pos : pos + 2]
        if two == "/*":
            depth += 1
            pos += 2
        elif two == "*/":
            depth -= 1
            pos += 2
            if depth == 0:
                return pos, line, line_start
        else:
            if text[pos] == "\n":
                line += 1
                line_start = pos + 1
            pos += 1
    raise DiagnosticError("unterminated comment: expected `*/`", start_line, start_col)


def tokenize(text: str) -> list:
    """Split ``text`` into tokens (see the module docstring); raises DiagnosticError on a character no token starts with."""
    tokens = []
    append = tokens.append
    match = _TOKEN_RE.match
    pos, line, line_start = 0, 1, 0
    n = len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            col = pos - line_start + 1
            raise DiagnosticError(f"unexpected character {text[pos]!r}", line, col)
        kind = m.lastgroup
        end = m.end()
        col = pos - line_start + 1
        end_col = end - line_start + 1
        if kind == "ws" or kind == "lc":
            pass
        elif kind == "nl":
            line += 1
            line_start = end
        elif kind == "bc":
            end, line, line_start = _skip_block_comment(text, pos, line, line_start)
        elif kind == "local":
            append(("LOCAL", m.group()[1:], line, col, end_col))
        elif kind == "graph":
            append(("GRAPH", int(m.group()[1:]), line, col, end_col))
        elif kind == "ident":
            append(("IDENT", m.group(), line, col, end_col))
        elif kind == "punct":
            value = m.group()
            append((value, value, line, col, end_col))
        elif kind == "num":
            append(("NUM", m.group(), line, col, end_col))
        elif kind == "proj":
            append(("PROJ", int(m.group()[1:]), line, col, end_col))
        elif kind == "meta":
            append(("META", (m.group("mkey"), int(m.group("midx"))), line, col, end_col))
        elif kind == "global":
            append(("GLOBAL", m.group()[1:], line, col, end_col))
        elif kind == "str":
            append(("STR", _decode(m.group(), line, col), line, col, end_col))
        elif kind == "qlocal":
            append(("QLOCAL", _decode(m.group()[1:], line, col), line, col, end_col))
        elif kind == "qglobal":
            append(("GLOBAL", _decode(m.group()[1:], line, col), line, col, end_col))
        elif kind == "attr":
            if m.group("md") is not None:
                append(("METADATA", text[end:], line, col, end_col))
                return tokens + [("EOF", None, line, col, end_col)]
            append(("VERSION", m.group("ver"), line, col, end_col))
        pos = end
    col = pos - line_start + 1
    append(("EOF", None, line, col, col))
    return tokens


def _decode(literal, line, col) -> str:
    try:
        return json.loads(literal)
    except json.JSONDecodeError as exc:
        raise DiagnosticError(f"invalid string literal {literal} ({exc.msg})", line, col) from None
