"""``relay.backend.runtime``: TVM's module of the ``Runtime`` description ``relay.build`` accepts (kept beside
``Executor`` in :mod:`.executor`)."""

from .executor import Runtime

__all__ = ["Runtime"]
