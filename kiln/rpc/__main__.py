"""``python -m kiln.rpc --host H --port P --port-end E [--silent]``: run an RPC server until killed (what
:class:`kiln.rpc.Server` starts in a child process)."""

import sys

from .server import main

sys.exit(main())
