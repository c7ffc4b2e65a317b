"""Source locations attached to IR nodes, reported in diagnostics."""

from dataclasses import dataclass

from .node import Node


@dataclass(frozen=True, slots=True)
class SourceName(Node):
    """The name of a source (a file path or ``"<string>"``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Span(Node):
    """A region of source text: 1-based ``line``/``column`` to ``end_line``/``end_column``."""

    source_name: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self):
        return f"{self.source_name}:{self.line}:{self.column}"
