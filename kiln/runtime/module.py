"""Runtime modules (TVM's ``tvm.runtime.Module``): compiled functions by name, exported to and loaded from ``.so``.

A :class:`Module` gives its functions by name (``m["addone"]``, searching imported modules too), calls its entry
function (``m(*args)``), prints its source (``m.get_source()``) and exports itself (``m.export_library(path)``).
:class:`LibraryModule` is a compiled shared library; other modules (a graph executor factory, say) subclass
:class:`Module` and hold a library among their ``imported_modules``.

Exported file format: one shared library holding the native code of every library module of the import tree, linked
with a generated object that defines

* ``__kiln_metadata``: a JSON string ``{"kiln_library": 1, "functions": [...], "entry": name, "tree": [...],
  "targets": [...], "cpu_features": [...]}``, ``functions`` as :func:`kiln.target.codegen_common.function_info`
  describes, ``tree`` the import tree in pre-order: ``{"type_key": "library"}`` for the library itself, or
  ``{"type_key", "offset", "size"}`` of a module's bytes (``save_to_bytes()``) inside the blob, each with the indices
  of its ``imports``; ``targets`` what the code was compiled for and ``cpu_features`` the CPU features it may use;
* ``__kiln_blob``/``__kiln_blob_end``: those bytes, included by the assembler.

:func:`load_module` reads both back, first refusing a library whose ``cpu_features`` the host lacks (its code would
die with an illegal instruction; a library built in this process for another CPU can be exported but not called);
a serialized module of type key ``K`` is rebuilt by the global function ``"runtime.module.loadbinary_K"``
(``f(data: bytes) -> Module``), registered by whoever defines that module kind, as in TVM. Linking needs the system
C compiler and goes through the global function ``"target.link_library"`` (``kiln.target`` registers it), since this
layer sits below the code generators.
"""

import json
import os
import pathlib
import shutil
import tempfile
import time

from ..error import ArgumentTypeError, KilnError
from .host import host_cpu_name, missing_features
from .library import LibraryFunction, SharedLibrary
from .packed_func import PackedFunc, get_global_func


class BenchmarkResult:
    """Timings in seconds of repeated runs (TVM's ``runtime.module.BenchmarkResult``): ``results`` and their
    ``mean``, ``median``, ``max``, ``min`` and ``std`` (the population standard deviation, as numpy's).

    Examples
    --------
    >>> r = BenchmarkResult([1, 2, 2, 5])
    >>> r.mean, r.median, r.std
    (2.5, 2.0, 1.5)
    """

    __slots__ = ("results", "mean", "median", "max", "min", "std")

    def __init__(self, results):
        values = tuple(float(r) for r in results)
        if not values:
            raise KilnError("BenchmarkResult: no results")
        ordered = sorted(values)
        half = len(ordered) // 2
        self.results = values
        self.mean = sum(values) / len(values)
        self.median = ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2
        self.max, self.min = ordered[-1], ordered[0]
        self.std = (sum((v - self.mean) ** 2 for v in values) / len(values)) ** 0.5

    def __eq__(self, other):
        return isinstance(other, BenchmarkResult) and self.results == other.results

    def __hash__(self):
        return hash(self.results)

    def __repr__(self):
        return (f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, max={self.max}, "
                f"std={self.std}, results={list(self.results)})")

    def __str__(self):
        ms = 1e3
        return (f"Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                f" {self.mean * ms:10.4f}  {self.median * ms:10.4f}  {self.max * ms:10.4f}  {self.min * ms:10.4f}  "
                f"{self.std * ms:10.4f}")


ProfileResult = BenchmarkResult
"""kiln's earlier name of :class:`BenchmarkResult`."""


class Module:
    """Base of runtime modules.

    Subclasses implement :meth:`get_own_function` (and :meth:`save_to_bytes` to be exportable inside a library).
    """

    type_key = "module"

    def __init__(self):
        self.imported_modules: list = []
        self._entry_name = None

    # ---- functions
    def get_own_function(self, name):
        """This module's function ``name`` as a PackedFunc, or None."""
        return None

    def get_function(self, name, query_imports=True):
        """The function ``name``: this module's, else (``query_imports``) the first import's that has it.

        Raises
        ------
        KilnError
            When no module has it (the message lists the functions there are).
        """
        func = self.get_own_function(name)
        if func is None and query_imports:
            for mod in self.imported_modules:
                func = mod.get_function(name, True)
                if func is not None:
                    break
        if func is None:
            known = ", ".join(self.list_functions()) or "none"
            raise KilnError(f"module ({self.type_key}) has no function {name!r}; functions: {known}")
        return func

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise KilnError(f"module functions are looked up by name (a str), got {type(name).__name__}")
        return self.get_function(name)

    def __contains__(self, name):
        try:
            self.get_function(name)
        except KilnError:
            return False
        return True

    def list_functions(self) -> list:
        """Names of the functions of this module and its imports."""
        names = list(self.own_function_names())
        for mod in self.imported_modules:
            names.extend(n for n in mod.list_functions() if n not in names)
        return names

    def own_function_names(self) -> list:
        return []

    @property
    def entry_name(self) -> str:
        """The name of the function ``m(*args)`` calls."""
        if self._entry_name is not None:
            return self._entry_name
        for mod in self.imported_modules:
            if mod.entry_name:
                return mod.entry_name
        return ""

    @property
    def entry_func(self):
        return self.get_function(self.entry_name)

    def __call__(self, *args):
        if not self.entry_name:
            raise KilnError(f"module ({self.type_key}) has no entry function; look functions up by name")
        return self.entry_func(*args)

    def import_module(self, module):
        """Add ``module`` to this module's imports (its functions become reachable through this one)."""
        if not isinstance(module, Module):
            raise KilnError(f"import_module: expected a runtime Module, got {type(module).__name__}")
        self.imported_modules.append(module)

    # ---- source and serialization
    def get_source(self, fmt=""):
        """The source the module was generated from (C, or LLVM IR); "" when it has none."""
        return ""

    def save_to_bytes(self) -> bytes:
        """Serialize a non-library module for :meth:`export_library` (library modules are linked instead)."""
        raise KilnError(f"module ({self.type_key}) cannot be serialized into an exported library")

    @property
    def is_dso_exportable(self) -> bool:
        return any(isinstance(m, LibraryModule) for m in _preorder(self))

    def export_library(self, file_name, fcompile=None, **kwargs):
        """Write this module (and its imports) as one shared library at ``file_name``.

        Parameters
        ----------
        file_name : str or path
            Where to write the ``.so``.
        fcompile : callable, optional
            Accepted for TVM compatibility; kiln always links with the system C compiler.

        Returns
        -------
        path : str
            ``file_name``.
        """
        file_name = os.fspath(file_name)
        if file_name.endswith((".tar", ".o", ".a", ".c", ".ll")):
            raise KilnError(f"export_library: {file_name}: kiln exports shared libraries only (use a .so name)")
        nodes = _preorder(self)
        index = {id(m): k for k, m in enumerate(nodes)}
        libraries = [m for m in nodes if isinstance(m, LibraryModule)]
        if len(libraries) == len(nodes) == 1 and not libraries[0].objects:
            shutil.copyfile(libraries[0].path, file_name)  # a loaded library: already in the exported format
            return file_name
        functions, objects, tree, blob = [], [], [], bytearray()
        entry = self.entry_name
        for mod in nodes:
            entry_ = {"imports": [index[id(m)] for m in mod.imported_modules]}
            if isinstance(mod, LibraryModule):
                if not mod.objects:
                    raise KilnError(f"export_library: the library {mod.path} was loaded from disk and cannot be "
                                    f"re-linked with other modules; export the modules it came from")
                objects.extend(o for o in mod.objects if o not in objects)
                functions.extend(f for f in mod.function_infos if f["name"] not in {g["name"] for g in functions})
                entry_["type_key"] = "library"
            else:
                data = mod.save_to_bytes()
                entry_.update(type_key=mod.type_key, offset=len(blob), size=len(data))
                blob.extend(data)
            tree.append(entry_)
        targets = sorted({t for m in libraries for t in library_targets(m.metadata)})
        features = sorted({f for m in libraries for f in m.metadata.get("cpu_features", ())})
        metadata = {"kiln_library": 1, "functions": functions, "entry": entry, "tree": tree, "targets": targets,
                    "cpu_features": features}
        link = get_global_func("target.link_library", allow_missing=True)
        if link is None:
            raise KilnError("export_library needs kiln.target (import kiln) to link the library")
        link(objects, json.dumps(metadata), bytes(blob), file_name)
        return file_name

    # ---- timing
    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **kwargs):
        """A function that runs ``func_name`` ``number`` times per measurement, ``repeat`` measurements, and
        returns a :class:`BenchmarkResult` of seconds per call (TVM's ``time_evaluator``)."""
        func = self.get_function(func_name)

        def evaluate(*args):
            func(*args)  # warm up: page faults, lazy binding, thread pool start
            n = max(1, int(number))
            results = []
            for _ in range(max(1, int(repeat))):
                while True:
                    start = time.perf_counter()
                    for _ in range(n):
                        func(*args)
                    elapsed = time.perf_counter() - start
                    if elapsed * 1e3 >= min_repeat_ms or min_repeat_ms <= 0:
                        break
                    n = max(n + 1, int(n * min_repeat_ms / max(elapsed * 1e3, 1e-3)))
                results.append(elapsed / n)
            return BenchmarkResult(results)

        return evaluate

    def __repr__(self):
        return f"Module({self.type_key}, functions={self.list_functions()})"


def _preorder(root) -> list:
    out, seen, stack = [], set(), [root]
    while stack:
        mod = stack.pop()
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        out.append(mod)
        stack.extend(reversed(mod.imported_modules))
    return out


class LibraryModule(Module):
    """Functions compiled into a shared library (what ``kiln.build`` returns and ``load_module`` loads).

    Parameters
    ----------
    path : str
        The ``.so``.
    metadata : dict, optional
        Its metadata (read from the library when omitted).
    source : str
        Generated source (C or LLVM IR) for ``get_source``.
    source_format : str
        ``"c"`` or ``"ll"``.
    objects : list of str
        Object files the library was linked from (needed to export it together with other modules).
    type_key : str
        ``"c"``, ``"llvm"`` or ``"library"`` (loaded from disk).
    """

    def __init__(self, path, metadata=None, source="", source_format="", objects=(), type_key="library"):
        super().__init__()
        self.library = SharedLibrary(path)
        if metadata is None:
            metadata = read_metadata(self.library)
        self.path = str(path)
        self.metadata = metadata
        self.function_infos = list(metadata.get("functions", ()))
        self._functions = {info["name"]: info for info in self.function_infos}
        self._cache: dict = {}
        self._entry_name = metadata.get("entry") or None
        self.source, self.source_format = source, source_format
        self.extra_sources: dict = {}  # fmt -> text, or a function computing it on first request ("asm")
        self.objects = [str(o) for o in objects]
        self.type_key = type_key
        self.missing_features = missing_features(metadata.get("cpu_features", ()))

    def check_host_cpu(self):
        """Raise KilnError when the host lacks a CPU feature this library's code may use."""
        if self.missing_features:
            targets = ", ".join(library_targets(self.metadata)) or "another CPU"
            raise KilnError(f"{self.path} was compiled for {targets} and needs CPU features this host "
                            f"({host_cpu_name()}) lacks: {', '.join(self.missing_features)}; rebuild it for this "
                            f"host (target 'llvm' or 'c' without -mcpu, or -mcpu=native)")

    def get_own_function(self, name):
        if name in self._functions:
            self.check_host_cpu()
        func = self._cache.get(name)
        if func is None and name in self._functions:
            func = self._cache[name] = PackedFunc(LibraryFunction(self.library, self._functions[name]), name)
        return func

    def own_function_names(self) -> list:
        return list(self._functions)

    @property
    def entry_name(self) -> str:
        return self._entry_name or ""

    def get_source(self, fmt=""):
        """The generated C source (``fmt`` "" or "c") or optimized LLVM IR (``fmt`` "" or "ll"), or the assembly
        (``fmt`` "asm" or "s") when the code generator provided it; "" when unavailable."""
        if fmt in ("", self.source_format) or fmt == "cc" and self.source_format == "c":
            return self.source
        if fmt == "s":
            fmt = "asm"
        extra = self.extra_sources.get(fmt)
        if callable(extra):
            extra = self.extra_sources[fmt] = extra()
        return extra or ""


def library_targets(metadata) -> list:
    """The targets a library's metadata names (one for a built library, each linked one's for an exported one)."""
    return list(metadata.get("targets", [metadata["target"]] if "target" in metadata else []))


def read_metadata(library) -> dict:
    text = library.read_string("__kiln_metadata")
    if text is None:
        raise KilnError(f"load_module: {library.path} has no kiln metadata (it was not exported by kiln)")
    try:
        metadata = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KilnError(f"load_module: {library.path} has corrupt metadata ({exc})") from exc
    if metadata.get("kiln_library") != 1:
        raise KilnError(f"load_module: {library.path} has metadata of an unknown version")
    return metadata


def load_module(path, fmt=""):
    """Load a library written by :meth:`Module.export_library` (TVM's ``tvm.runtime.load_module``).

    Returns the module at the root of the exported import tree: the library itself (``m["addone"]``), or for
    example a graph executor factory holding it.

    Examples
    --------
    >>> m.export_library("/tmp/addone.so")               # doctest: +SKIP
    >>> kiln.runtime.load_module("/tmp/addone.so")["addone"](a, b)   # doctest: +SKIP
    """
    try:
        path = pathlib.Path(os.fspath(path))
    except TypeError:
        raise ArgumentTypeError(f"load_module takes a path, not {type(path).__name__}") from None
    if not path.exists():
        raise KilnError(f"load_module: no such file {path}")
    if not path.is_file():
        raise KilnError(f"load_module: {path} is not a file")
    if path.suffix not in (".so", ".dylib", ".dll", "") and fmt not in ("so", ""):
        raise KilnError(f"load_module: cannot load {path} (expected a shared library exported by kiln)")
    # load a private copy: a file rewritten at the same path later is then loaded anew, not served from dlopen's cache
    tmpdir = tempfile.mkdtemp(prefix="kiln-load-")
    private = pathlib.Path(tmpdir) / path.name
    shutil.copyfile(path, private)
    try:
        library = LibraryModule(private, type_key="library")  # the copy's seal is checked: it is what gets mapped
    except KilnError as exc:
        raise KilnError(str(exc).replace(str(private), str(path))) from None
    finally:
        os.unlink(private)
        os.rmdir(tmpdir)
    library.path = str(path)
    library.check_host_cpu()
    tree = library.metadata.get("tree") or [{"type_key": "library", "imports": []}]
    blob = library.library.read_blob() if any(t["type_key"] != "library" for t in tree) else b""
    modules = []
    for entry in tree:
        if entry["type_key"] == "library":
            modules.append(library)
            continue
        loader = get_global_func(f"runtime.module.loadbinary_{entry['type_key']}", allow_missing=True)
        if loader is None:
            raise KilnError(f"load_module: {path} holds a module of type {entry['type_key']!r} and no loader is "
                            f"registered for it (runtime.module.loadbinary_{entry['type_key']})")
        modules.append(loader(blob[entry["offset"]:entry["offset"] + entry["size"]]))
    for mod, entry in zip(modules, tree, strict=True):
        for k in entry.get("imports", ()):
            if modules[k] not in mod.imported_modules and modules[k] is not mod:
                mod.import_module(modules[k])
    return modules[0]
