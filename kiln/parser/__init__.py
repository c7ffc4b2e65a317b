"""kiln.parser: the Relay text format's parser at TVM's module path ``tvm.parser`` (``parse``, ``parse_expr``,
``fromtext``); the parser itself lives in :mod:`kiln.relay.parser`.

Examples
--------
>>> import kiln
>>> mod = kiln.parser.parse('#[version = "0.0.5"]\\ndef @main(%x: float32) { %x }')
>>> mod["main"].params[0].name_hint
'x'
"""

from ..relay.parser import fromtext, parse, parse_expr

__all__ = ["parse", "parse_expr", "fromtext"]
