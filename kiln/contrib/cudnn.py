"""TVM's ``contrib.cudnn`` on a compiler for CPUs: cuDNN never exists here, so the tests and scripts that check
``cudnn.exists()`` take their CPU path."""

__all__ = ["exists"]


def exists() -> bool:
    """Whether cuDNN can be used: never with kiln, which compiles for CPUs only."""
    return False
