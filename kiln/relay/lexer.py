"""Tokenizer of the Relay text format.

One compiled regular expression with a named alternative per token kind is matched at the current position until
the text ends; whitespace and comments (``// ...`` and nested ``/* ... */``, which is how ``/* ty=... */`` type
annotations are skipped) produce no token. ``#[metadata]`` ends the token stream: the rest of the text is the
metadata JSON, returned as the last token. Each token is a tuple ``(kind, value, line, column, end_column)`` with
1-based positions; a token never spans lines.

Kinds: ``LOCAL`` (``%x``, ``%input.1``; value the name), ``QLOCAL`` (``%"a:b"``), ``GRAPH`` (``%3``; value the int),
``GLOBAL`` (``@main``), ``META`` (``meta[relay.Constant][0]``; value ``(key, index)``), ``NUM`` (raw text such as
``1e-05f``), ``STR`` (decoded string), ``IDENT`` (keywords, operator names, dtypes), ``PROJ`` (``.1``; value the int),
``VERSION``, ``METADATA`` (the JSON text), punctuation (kind and value are the text: ``(``, ``->``, ``=``...), and
three ``EOF`` tokens at the end, so that looking two tokens ahead never runs off the list.
"""

import json
import re

from ..error import DiagnosticError

# Leading blanks are part of every match, so they cost no iteration of the tokenizing loop.
_TOKEN_RE = re.compile(
    r"""[ \t\r\f]*(?:
     (?P<nl>\n)
    |(?P<eof>\Z)
    |(?P<punct>->|==|!=|<=|>=|[()\[\]{},;:=+\-*?<>]|/(?![/*]))
    |(?P<graph>%[0-9]+)
    |(?P<local>%[A-Za-z_/][A-Za-z0-9_/]*(?:\.[A-Za-z0-9_/]+)*)
    |(?P<meta>meta\[(?P<mkey>[A-Za-z0-9_.]+)\]\[(?P<midx>[0-9]+)\])
    |(?P<num>(?:inf|nan)f(?:16|32|64)?(?![A-Za-z0-9_])|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?(?:[fiu][0-9]*)?)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<proj>\.[0-9]+)
    |(?P<lc>//[^\n]*)
    |(?P<bc>/\*)
    |(?P<str>"(?:[^"\\\n]|\\.)*")
    |(?P<qlocal>%"(?:[^"\\\n]|\\.)*")
    |(?P<global>@[A-Za-z_][A-Za-z0-9_]*)
    |(?P<qglobal>@"(?:[^"\\\n]|\\.)*")
    |(?P<attr>\#\[[ \t]*(?:version[ \t]*=[ \t]*"(?P<ver>[^"\n]*)"|(?P<md>metadata))[ \t]*\])
    )""",
    re.VERBOSE,
)
_BLANKS = re.compile(r"[ \t\r\f]*")


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
    """Split ``text`` into tokens (see the module docstring); raises DiagnosticError on a character no token
    starts with."""
    tokens = []
    append = tokens.append
    match = _TOKEN_RE.match
    pos, line, line_start = 0, 1, 0
    while True:
        m = match(text, pos)
        if m is None:
            pos = _BLANKS.match(text, pos).end()
            raise DiagnosticError(f"unexpected character {text[pos]!r}", line, pos - line_start + 1)
        kind = m.lastgroup
        start, end = m.start(m.lastindex), m.end()
        col = start - line_start + 1
        end_col = end - line_start + 1
        if kind == "punct":
            value = m.group(kind)
            append((value, value, line, col, end_col))
        elif kind == "graph":
            append(("GRAPH", int(text[start + 1 : end]), line, col, end_col))
        elif kind == "local":
            append(("LOCAL", text[start + 1 : end], line, col, end_col))
        elif kind == "nl":
            line += 1
            line_start = end
        elif kind == "ident":
            append(("IDENT", text[start:end], line, col, end_col))
        elif kind == "num":
            append(("NUM", text[start:end], line, col, end_col))
        elif kind == "meta":
            append(("META", (m.group("mkey"), int(m.group("midx"))), line, col, end_col))
        elif kind == "proj":
            append(("PROJ", int(text[start + 1 : end]), line, col, end_col))
        elif kind == "eof":
            break
        elif kind == "lc":
            pass
        elif kind == "bc":
            end, line, line_start = _skip_block_comment(text, start, line, line_start)
        elif kind == "global":
            append(("GLOBAL", text[start + 1 : end], line, col, end_col))
        elif kind == "str":
            append(("STR", _decode(text[start:end], line, col), line, col, end_col))
        elif kind == "qlocal":
            append(("QLOCAL", _decode(text[start + 1 : end], line, col), line, col, end_col))
        elif kind == "qglobal":
            append(("GLOBAL", _decode(text[start + 1 : end], line, col), line, col, end_col))
        elif m.group("md") is not None:  # #[metadata]: the rest of the text is its JSON
            append(("METADATA", text[end:], line, col, end_col))
            break
        else:
            append(("VERSION", m.group("ver"), line, col, end_col))
        pos = end
    eof = ("EOF", None, line, col, col)
    tokens.extend((eof, eof, eof))  # lookahead past the end always finds EOF
    return tokens


def _decode(literal, line, col) -> str:
    try:
        return json.loads(literal)
    except json.JSONDecodeError as exc:
        raise DiagnosticError(f"invalid string literal {literal} ({exc.msg})", line, col) from None
