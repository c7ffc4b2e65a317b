"""Temporary directories (TVM's ``tvm.contrib.utils``): ``tempdir()`` gives a directory removed when it is no longer
used, with ``relpath(name)`` for the paths inside it.

Examples
--------
>>> from kiln.contrib import utils
>>> temp = utils.tempdir()
>>> path = temp.relpath("model.so")
>>> path.endswith("model.so")
True
"""

import os
import shutil
import tempfile

__all__ = ["TempDirectory", "tempdir"]


class TempDirectory:
    """A directory of its own, deleted with :meth:`remove`, on leaving a ``with`` block, or when collected (unless
    ``keep_for_debug``)."""

    def __init__(self, custom_path=None, keep_for_debug=False):
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = os.path.abspath(custom_path)
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="kiln_")
        self._keep = keep_for_debug

    def relpath(self, name) -> str:
        """The path of ``name`` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list:
        """The names in the directory."""
        return os.listdir(self.temp_dir)

    def remove(self):
        """Delete the directory and everything in it (again: nothing)."""
        if self.temp_dir and not self._keep:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __del__(self):
        self.remove()


def tempdir(custom_path=None, keep_for_debug=False) -> TempDirectory:
    """A new :class:`TempDirectory` (at ``custom_path`` when given)."""
    return TempDirectory(custom_path, keep_for_debug)
