"""kiln.rpc.protocol: message framing over a real socket pair, value encoding round trips, malformed input."""

import socket
import struct
import threading

import numpy as np
import pytest

from kiln.error import RPCError
from kiln.rpc import protocol


def _pair():
    a, b = socket.socketpair()
    return a, b


def test_messages_round_trip_with_large_blobs():
    a, b = _pair()
    big = np.random.default_rng(0).standard_normal(300_000).astype("float32")  # over the coalescing size
    sender = threading.Thread(target=protocol.send_message, args=(a, {"op": "x", "n": [1, 2.5, None, "s"]},
                                                                  [b"abc", protocol.array_blob(big), b""]))
    sender.start()  # the message is larger than the socket buffer: the reader must run meanwhile
    header, blobs = protocol.recv_message(b)
    sender.join()
    assert header == {"op": "x", "n": [1, 2.5, None, "s"]}
    assert bytes(blobs[0]) == b"abc" and bytes(blobs[2]) == b""
    np.testing.assert_array_equal(protocol.array_from_blob(blobs[1], big.shape, "float32"), big)
    a.close()
    with pytest.raises(ConnectionError):
        protocol.recv_message(b)
    b.close()


def test_plain_values_round_trip():
    value = {"a": (1, 2.0, float("nan"), float("-inf")), "b": [True, None, "s"], 3: b"\x00\x01",
             "n": np.int64(7), "f": np.float32(0.5)}
    blobs: list = []

    def encode(v):
        return protocol.encode_plain(v, blobs, encode)

    def decode(t):
        return t if not isinstance(t, dict) else protocol.decode_plain(t, blobs, decode)

    import json

    back = decode(json.loads(json.dumps(encode(value))))
    assert back["a"][:2] == (1, 2.0) and np.isnan(back["a"][2]) and back["a"][3] == float("-inf")
    assert back["b"] == [True, None, "s"] and back[3] == bytearray(b"\x00\x01")
    assert back["n"] == 7 and back["f"] == 0.5 and isinstance(back["n"], int)


def test_unsendable_values_and_malformed_messages():
    with pytest.raises(RPCError, match="cannot be sent"):
        protocol.encode_plain(object(), [], lambda v: v)
    with pytest.raises(RPCError, match="needs 16 bytes, got 3"):
        protocol.array_from_blob(b"abc", (2, 2), "float32")
    a, b = _pair()
    a.sendall(struct.pack("<II", 1 << 30, 0))
    with pytest.raises(RPCError, match="malformed message"):
        protocol.recv_message(b)
    a.sendall(struct.pack("<II", 3, 0) + b"{x}")
    with pytest.raises(RPCError, match="malformed message header"):
        protocol.recv_message(b)
    a.close()
    b.close()
