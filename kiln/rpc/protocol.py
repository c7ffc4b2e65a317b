"""The wire format of kiln's RPC: framed messages of a JSON header and binary blobs, and how values are encoded.

A connection opens with the client sending :data:`MAGIC`; then each request gets one reply. A message is

    <u32 header length> <u32 blob count> <header: UTF-8 JSON> then per blob: <u64 length> <bytes>

(little-endian). Values inside a header are JSON trees; everything that is not a JSON scalar is a dict with a tag
``"t"``:

==============  ========================================================================================
``bytes``       a blob (``"b"``: its index among the message's blobs)
``tuple/list``  ``"v"``: the items; ``dict``: ``"k"`` and ``"v"``
``float``       ``"v"``: ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has none of them)
``dev``         a device as the server sees it (``"type"``, ``"id"``; the session bits removed)
``nd``          an array sent by value: ``"shape"``, ``"dtype"``, ``"b"``; ``"k"`` numbers the caller's arrays so
                the server can send back the contents of those a call wrote to (copy-in, copy-out)
``ref``         an object of the server, by handle (``"h"``), in a request
``nd_ref``      a server array in a reply: ``"h"``, ``"shape"``, ``"dtype"``, ``"dev"``
``mod_ref``     a server module: ``"h"``, ``"type_key"``; ``fn_ref`` a function: ``"h"``, ``"name"``
``obj_ref``     any other server object: ``"h"``, ``"type"`` (its class name), ``"repr"``
``bench``       timings (``"v"``: seconds), rebuilt as a ``BenchmarkResult``
==============  ========================================================================================

Nothing is ever unpickled: a peer can only name objects it was given handles to, call functions by name, and send
plain data.
"""

import json
import math
import socket
import struct

import numpy as np

from ..error import RPCError

MAGIC = b"KILNRPC1"
VERSION = 1
_FRAME = struct.Struct("<II")
_BLOB = struct.Struct("<Q")
_COALESCE = 1 << 20
_MAX_HEADER = 64 << 20  # a header is small; a larger length means the stream is not kiln's protocol


def send_message(sock, header: dict, blobs=()):
    """Send one message (header and blobs) on ``sock``."""
    data = json.dumps(header, separators=(",", ":")).encode()
    parts = [_FRAME.pack(len(data), len(blobs)), data]
    for blob in blobs:
        view = memoryview(blob).cast("B")
        parts += [_BLOB.pack(view.nbytes), view]
    if sum(memoryview(p).nbytes for p in parts) < _COALESCE:
        sock.sendall(b"".join(parts))  # one segment for a small message
    else:
        for part in parts:  # large arrays go out without being copied into one buffer
            sock.sendall(part)


def _recv_exact(sock, count) -> bytearray:
    buf = bytearray(count)
    view = memoryview(buf)
    got = 0
    while got < count:
        n = sock.recv_into(view[got:], count - got)
        if n == 0:
            raise ConnectionError("the peer closed the connection")
        got += n
    return buf


def recv_message(sock) -> tuple:
    """Receive one message: ``(header, blobs)``.

    Raises
    ------
    ConnectionError
        When the peer closed the connection.
    RPCError
        When the bytes are not a kiln RPC message.
    """
    header_len, count = _FRAME.unpack(_recv_exact(sock, _FRAME.size))
    if header_len > _MAX_HEADER:
        raise RPCError(f"RPC: malformed message (a header of {header_len} bytes)")
    try:
        header = json.loads(_recv_exact(sock, header_len))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RPCError(f"RPC: malformed message header ({exc})") from None
    blobs = []
    for _ in range(count):
        (size,) = _BLOB.unpack(_recv_exact(sock, _BLOB.size))
        blobs.append(_recv_exact(sock, size))
    return header, blobs


def connect_socket(host, port, timeout=None) -> socket.socket:
    """A TCP connection to ``host:port`` that has sent the protocol's magic bytes."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(MAGIC)
    return sock


# ---------------------------------------------------------------------------------------------------- values
def encode_plain(value, blobs, encode):
    """The tree of a plain value (scalars, bytes, sequences, dicts, numpy scalars); ``encode`` is called on the
    items, and for anything else (devices, arrays, objects) the caller's ``encode`` must handle it first."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else {"t": "float", "v": str(value)}
    if isinstance(value, bytes | bytearray | memoryview):
        blobs.append(value)
        return {"t": "bytes", "b": len(blobs) - 1}
    if isinstance(value, tuple | list):
        return {"t": "tuple" if isinstance(value, tuple) else "list", "v": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"t": "dict", "k": [encode(k) for k in value], "v": [encode(v) for v in value.values()]}
    raise RPCError(f"RPC: a value of type {type(value).__name__} cannot be sent")


def decode_plain(tree, blobs, decode):
    """The value of a plain tree; None when ``tree`` is tagged with a tag this function does not know."""
    tag = tree["t"]
    if tag == "bytes":
        return bytearray(blobs[tree["b"]])
    if tag == "float":
        return float(tree["v"])
    if tag in ("tuple", "list"):
        items = [decode(v) for v in tree["v"]]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {decode(k): decode(v) for k, v in zip(tree["k"], tree["v"], strict=True)}
    return None


def array_from_blob(blob, shape, dtype) -> np.ndarray:
    """A writable numpy array of ``shape`` and ``dtype`` over a received blob."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if len(blob) != count * dtype.itemsize:
        raise RPCError(f"RPC: an array of shape {tuple(shape)} and dtype {dtype} needs {count * dtype.itemsize} "
                       f"bytes, got {len(blob)}")
    return np.frombuffer(blob, dtype=dtype).reshape(tuple(shape))


def array_blob(arr) -> memoryview:
    """The bytes of a numpy array (contiguous, without a copy when it already is)."""
    return memoryview(np.ascontiguousarray(arr)).cast("B")
