"""Deployable packages (tvmc's ``module.tar``): a compiled model as one tar file.

The archive holds tvmc's three members, the parts of a :class:`~kiln.runtime.graph_executor_factory.
GraphExecutorFactoryModule`:

* ``mod.so``: the kernels, a shared library exported by :meth:`~kiln.runtime.module.Module.export_library`;
* ``mod.json``: the graph JSON;
* ``mod.params``: the parameters in kiln's (TVM's) binary format (:func:`~kiln.runtime.params.save_param_dict`).

No pickle: nothing in a package is executed on loading except the library, which is native code by nature.
:func:`load_package` reads the members' bytes with ``tarfile.extractfile`` and writes only the library, under a name
of its own choosing in a private temporary directory, so member names such as ``../../x`` or links cannot reach
outside it; a member that is not a regular file, a missing or repeated member, or a file that is not a tar archive
raises a :class:`~kiln.error.KilnError` naming the package and the member.
"""

import io
import lzma
import os
import pathlib
import re
import tarfile
import tempfile
import time
import zlib

from ..error import KilnError
from .module import load_module
from .params import save_param_dict

__all__ = ["Package", "export_package", "load_package", "LIBRARY", "GRAPH", "PARAMS"]

LIBRARY, GRAPH, PARAMS = "mod.so", "mod.json", "mod.params"


class Package:
    """A loaded package (tvmc's ``TVMCPackage``).

    Attributes
    ----------
    path : str
        The archive.
    lib : Module
        The kernels, loaded.
    graph : str
        The graph JSON.
    params : bytes
        The serialized parameters (``GraphModule.load_params(package.params)``).
    """

    def __init__(self, path, lib, graph, params):
        self.path = path
        self.lib = lib
        self.graph = graph
        self.params = params

    def __repr__(self):
        return f"Package({self.path!r}, {len(self.params)} bytes of params)"


def export_package(factory, path) -> str:
    """Write ``factory`` (what ``relay.build`` returns) as a package at ``path`` (see the module docstring).

    Parameters
    ----------
    factory : GraphExecutorFactoryModule
        The built model.
    path : str or os.PathLike
        The archive to write (``module.tar``); replaced atomically when it exists.

    Returns
    -------
    str
        ``path``.

    Examples
    --------
    >>> with kiln.transform.PassContext(opt_level=3):            # doctest: +SKIP
    ...     lib = relay.build(mod, target="llvm", params=params)
    >>> export_package(lib, "module.tar")                        # doctest: +SKIP
    """
    path = os.fspath(path)
    if factory.get_lib() is None:
        raise KilnError(f"export_package: {path}: the model has no kernels to package")
    with tempfile.TemporaryDirectory(prefix="kiln-package-") as tmp:
        library = factory.get_lib().export_library(os.path.join(tmp, LIBRARY))
        members = {LIBRARY: pathlib.Path(library).read_bytes(), GRAPH: factory.get_graph_json().encode(),
                   PARAMS: save_param_dict(factory.get_params())}
    partial = f"{path}.{os.getpid()}.partial"  # renamed into place once complete: readers never see half a package
    try:
        with tarfile.open(partial, mode="w") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
                tar.addfile(info, io.BytesIO(data))
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return path


def _read_members(path) -> dict:
    try:
        tar = tarfile.open(path, mode="r:*")
    except (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise KilnError(f"{path} is not a kiln package (not a tar archive); make one with kiln compile") from exc
    found: dict = {}
    try:
        with tar:
            for member in tar.getmembers():
                name = member.name.removeprefix("./")
                if name not in (LIBRARY, GRAPH, PARAMS):
                    continue  # never extracted, so harmless whatever its name or kind
                if not member.isfile():
                    raise KilnError(f"{path}: package member {member.name!r} is not a regular file")
                if name in found:
                    raise KilnError(f"{path}: package member {name!r} appears twice")
                found[name] = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        # a member's header or data cut short or damaged (and, in a compressed archive, the stream itself)
        raise KilnError(f"{path}: the package is damaged or cut short ({type(exc).__name__}: {exc})") from exc
    missing = [n for n in (LIBRARY, GRAPH, PARAMS) if n not in found]
    if missing:
        raise KilnError(f"{path}: not a kiln package: it lacks {', '.join(missing)} (a package holds {LIBRARY}, "
                        f"{GRAPH} and {PARAMS}; make one with kiln compile)")
    return found


def load_package(path) -> Package:
    """Read a package written by :func:`export_package` (or tvmc with a shared library); see the module docstring.

    Parameters
    ----------
    path : str or os.PathLike
        The archive.

    Returns
    -------
    Package
        ``lib``, ``graph`` and ``params``, ready for ``graph_executor.create(pkg.graph, pkg.lib, dev)`` and
        ``load_params(pkg.params)``.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise KilnError(f"no package file at {path}" if not os.path.exists(path) else f"{path} is not a file")
    members = _read_members(path)
    try:
        graph = members[GRAPH].decode()
    except UnicodeDecodeError as exc:
        raise KilnError(f"{path}: {GRAPH} is not UTF-8 text ({exc})") from exc
    with tempfile.TemporaryDirectory(prefix="kiln-package-") as tmp:
        library = os.path.join(tmp, LIBRARY)
        with open(library, "wb") as f:
            f.write(members[LIBRARY])
        try:
            lib = load_module(library)  # loads a private copy, so the file can go
        except KilnError as exc:
            where = re.sub(rf"\S*/{re.escape(LIBRARY)}\b", LIBRARY, str(exc))  # the temporary copies' paths
            raise KilnError(f"{path}: {LIBRARY}: {where}") from exc
    lib.path = f"{path}:{LIBRARY}"
    return Package(path, lib, graph, members[PARAMS])
