"""TVM's ``tvm.rpc.base`` names kiln's RPC shares."""

from ..runtime.device import RPC_SESS_MASK

__all__ = ["RPC_SESS_MASK"]
