"""The RPC server (TVM's ``tvm.rpc.Server``): listens on a TCP port and serves each connection as one session.

By default the server runs in a child process (``python -m kiln.rpc``), as TVM's does, so that what a
session loads and runs cannot disturb the client's process; ``process=False`` serves from a thread of this process
instead (quicker to start, for tests). Each connection is served by its own thread with its own
:class:`~kiln.rpc.endpoint.Endpoint` (objects, working directory); the session ends when the client closes it,
disconnects, or its ``session_timeout`` expires. The child process ends when the :class:`Server` is terminated or
garbage collected, or when the parent process dies (it watches its standard input).
"""

import argparse
import os
import select
import socket
import subprocess
import sys
import threading
import time

from ..error import KilnError, RPCError
from . import protocol
from .endpoint import Endpoint

__all__ = ["Server", "serve_connection"]


def _log(silent, message):
    if not silent:
        print(f"kiln.rpc.server: {message}", file=sys.stderr, flush=True)


def serve_connection(sock, addr=None, silent=True):
    """Serve one connection until the client closes it (or its session timeout expires)."""
    endpoint = Endpoint()
    timer = None
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        magic = sock.recv(len(protocol.MAGIC), socket.MSG_WAITALL)
        if magic != protocol.MAGIC:
            _log(silent, f"{addr}: not a kiln RPC client (bad magic bytes); closing")
            return
        hello, _ = protocol.recv_message(sock)
        if hello.get("op") != "hello" or hello.get("version") != protocol.VERSION:
            protocol.send_message(sock, {"ok": False, "message": f"expected protocol version {protocol.VERSION}"})
            return
        protocol.send_message(sock, {"ok": True, "server": "kiln", "version": protocol.VERSION})
        timeout = float(hello.get("timeout") or 0)
        if timeout > 0:  # end the session however busy it is, as TVM's server kills the session's process
            timer = threading.Timer(timeout, _shutdown, (sock,))
            timer.daemon = True
            timer.start()
        _log(silent, f"session from {addr} started")
        while True:
            header, blobs = protocol.recv_message(sock)
            if header.get("op") == "close":
                break
            reply, out = endpoint.handle(header, blobs)
            protocol.send_message(sock, reply, out)
    except (ConnectionError, OSError, RPCError):
        pass
    finally:
        if timer is not None:
            timer.cancel()
        endpoint.close()
        sock.close()
        _log(silent, f"session from {addr} ended")


def _shutdown(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _bind(host, port, port_end, reuse_addr=True) -> socket.socket:
    """A listening socket on the first free port of ``[port, port_end)``."""
    last_error = None
    for candidate in range(int(port), max(int(port_end), int(port) + 1)):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if reuse_addr:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((host, candidate))
        except OSError as exc:
            listener.close()
            last_error = exc
            continue
        listener.listen(16)
        return listener
    raise RPCError(f"rpc.Server: no free port in [{port}, {port_end}) on {host} ({last_error})")


def _accept_loop(listener, stop, silent):
    while not stop.is_set():
        try:
            conn, addr = listener.accept()
        except OSError:
            break  # the listener was closed
        threading.Thread(target=serve_connection, args=(conn, addr, silent), daemon=True).start()


class Server:
    """An RPC server on ``host`` at the first free port of ``[port, port_end)`` (TVM's ``rpc.Server``).

    Parameters
    ----------
    host : str
        The address to listen on (``"127.0.0.1"`` for this machine only).
    port, port_end : int
        The ports tried, in order.
    silent : bool
        Do not log sessions to standard error.
    process : bool
        Serve from a child process (the default, as TVM) or from a thread of this process.

    The other TVM parameters (``key``, ``no_fork``, ``reuse_addr``, ``timeout``...) are accepted; a proxy, a
    tracker and extra libraries are not supported.

    Attributes
    ----------
    host, port : the address clients connect to.

    Examples
    --------
    >>> server = Server("127.0.0.1")                       # doctest: +SKIP
    >>> remote = kiln.rpc.connect(server.host, server.port)   # doctest: +SKIP
    """

    def __init__(self, host="0.0.0.0", port=9091, port_end=9199, is_proxy=False, tracker_addr=None, key="",
                 load_library=None, custom_addr=None, silent=False, no_fork=False, server_init_callback=None,
                 reuse_addr=True, timeout=None, *, process=True):
        if is_proxy or tracker_addr or load_library or server_init_callback:
            raise KilnError("rpc.Server: proxies, trackers, load_library and server_init_callback are not "
                            "supported by kiln's RPC server")
        self.host, self.key, self.silent = host, key, silent
        self.proc = None
        self._listener = None
        self._stop = threading.Event()
        if process:
            self.proc, self.port = _spawn(host, port, port_end, silent, timeout)
        else:
            self._listener = _bind(host, port, port_end, reuse_addr)
            self.port = self._listener.getsockname()[1]
            threading.Thread(target=_accept_loop, args=(self._listener, self._stop, silent), daemon=True).start()

    def terminate(self):
        """Stop the server (sessions in progress end with it)."""
        self._stop.set()
        if self._listener is not None:
            _shutdown(self._listener)
            self._listener.close()
            self._listener = None
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def __del__(self):
        try:
            self.terminate()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    def __repr__(self):
        return f"rpc.Server({self.host}:{self.port}, {'process' if self.proc else 'thread'})"


def _spawn(host, port, port_end, silent, timeout):
    """Start ``python -m kiln.rpc`` (this module's :func:`main`) and read the port it listens on from its first
    line of output."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "kiln.rpc", "--host", host, "--port", str(port), "--port-end", str(port_end)]
    if silent:
        cmd.append("--silent")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    deadline = time.monotonic() + (timeout or 120)
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stdout.fileno(), 256) if ready else b""
        if not chunk:
            proc.kill()
            proc.wait()
            raise RPCError(f"rpc.Server: the server process did not start (exit code {proc.returncode}); "
                           f"its output: {line.decode(errors='replace')!r}")
        line += chunk
    text = line.decode().strip()
    if not text.startswith("listening "):
        proc.kill()
        raise RPCError(f"rpc.Server: the server process failed: {text}")
    return proc, int(text.split()[1])


def _watch_parent():
    """End this process when the parent dies (its end of our standard input closes)."""
    try:
        while sys.stdin.buffer.read(1):
            pass
    finally:
        os._exit(0)


def main(argv=None):
    """``python -m kiln.rpc --host H --port P --port-end E [--silent]``: serve until killed."""
    parser = argparse.ArgumentParser(prog="python -m kiln.rpc", description="kiln's RPC server")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=9091)
    parser.add_argument("--port-end", type=int, default=9199)
    parser.add_argument("--silent", action="store_true")
    args = parser.parse_args(argv)
    import kiln  # noqa: F401  (the whole package: every module loader and code generator registered)

    try:
        listener = _bind(args.host, args.port, args.port_end)
    except RPCError as exc:
        print(f"error {exc}", flush=True)
        return 1
    print(f"listening {listener.getsockname()[1]}", flush=True)
    os.dup2(2, 1)  # the parent reads one line only; anything else written to standard output goes to the log
    threading.Thread(target=_watch_parent, daemon=True).start()
    _log(args.silent, f"listening on {args.host}:{listener.getsockname()[1]}")
    _accept_loop(listener, threading.Event(), args.silent)
    return 0
