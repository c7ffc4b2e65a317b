"""kiln.rpc: remote procedure calls to a kiln process on this or another machine (TVM's ``tvm.rpc``).

* :class:`Server`: serves sessions on a TCP port, from a child process (or a thread);
* :func:`connect`: a session with a server; :class:`LocalSession`: a session served in this process;
* a session uploads files, loads modules (``remote.load_module("lib.so")``), makes remote devices
  (``remote.cpu(0)``) on which ``kiln.nd.array`` allocates in the server, and calls remote functions; graph
  executors (``graph_executor.create(json, rlib, remote.cpu())``) and VMs (``VirtualMachine(rexec, remote.cpu())``)
  run there through the modules' functions.

The protocol (:mod:`kiln.rpc.protocol`) is JSON headers and binary blobs over TCP; nothing is unpickled.
"""

from . import protocol
from .client import LocalSession, RPCSession, connect
from .remote import RemoteFunction, RemoteModule, RemoteNDArray, RemoteObject
from .server import Server

__all__ = ["LocalSession", "RPCSession", "Server", "connect", "RemoteFunction", "RemoteModule", "RemoteNDArray",
           "RemoteObject", "protocol"]
