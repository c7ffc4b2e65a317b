"""The system C compiler: compiling C source to object files, linking shared libraries, and the runtime helper.

Compilation is separate from code generation (the generated source stays inspectable) and is cached on disk
(:mod:`kiln.target.compile_cache`): an object file is keyed by the source, the flags (``-march=native`` resolved to
the host's CPU and features) and the compiler's version; a linked library by its inputs' content and the link
flags. ``$CC`` names the compiler (``cc`` by default).

Every shared library kiln builds links one copy of the runtime helper (:mod:`kiln.target.runtime_helper`: the
last-error slot, the thread pool behind the LLVM backend's parallel loops, aligned workspace allocation). Its internal
symbols are hidden and libraries link with ``-Bsymbolic``, so several kiln libraries loaded in one process never bind
to each other's copies. Every library is sealed after linking (:func:`kiln.runtime.library.seal_library`).
"""

import functools
import os
import pathlib
import shlex
import subprocess
import tempfile

from ..error import CodegenError
from ..runtime.host import host_cpu_features, host_cpu_name
from ..runtime.library import seal_library
from . import compile_cache
from .runtime_helper import RUNTIME_SOURCE


def cc_command() -> list:
    """The C compiler command (``$CC`` split like a shell would, ``cc`` by default)."""
    return shlex.split(os.environ.get("CC", "cc")) or ["cc"]


@functools.cache
def _compiler_version(cc: tuple) -> str:
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CodegenError(f"the C compiler {' '.join(cc)!r} cannot be run ({exc}); set $CC to a C compiler") from exc
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def compiler_version() -> str:
    """First line of ``cc --version`` (part of every cache key)."""
    return _compiler_version(tuple(cc_command()))


@functools.cache
def _accepts_flag(cc: tuple, flag: str) -> bool:
    try:
        proc = subprocess.run([*cc, flag, "-x", "c", "-fsyntax-only", "-"], input="int x;\n", capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def have_cc() -> bool:
    """Whether a working C compiler is available."""
    try:
        compiler_version()
    except CodegenError:
        return False
    return True


def c_flags(target=None) -> list:
    """Flags for compiling generated C: ``-O3 -march=<cpu> -fPIC`` and the target's ``-mattr`` as ``-m`` (and
    ``-fno-tree-loop-if-convert`` and ``-mno-avx512fp16``, around GCC 12 bugs)."""
    march = "native" if target is None or target.is_host_cpu else target.mcpu
    flags = ["-O3", "-std=gnu99", "-fPIC", "-fno-math-errno", f"-march={march}"]
    # GCC 12 vectorizes an if-converted select of two loads in a fully unrolled nested loop with the first
    # vector's mask reused for the later ones (wrong values; tests/target/test_codegen_c.py has the kernel).
    # kiln vectorizes its loops itself, so GCC's if-conversion is not needed for speed
    flags.append("-fno-tree-loop-if-convert")
    mattr = list(target.mattr) if target is not None else []
    # kiln computes float16 in float (kiln.tir.dtype_semantics), so half arithmetic instructions bring nothing; and
    # GCC 12 emits masked AVX512-FP16 moves that binutils 2.40 cannot assemble (on Sapphire Rapids, -march=native)
    if "+avx512fp16" not in mattr and _accepts_flag(tuple(cc_command()), "-mno-avx512fp16"):
        flags.append("-mno-avx512fp16")
    flags.extend(f"-m{attr[1:]}" if attr[0] == "+" else f"-mno-{attr[1:]}" for attr in mattr)
    return flags


def _flags_key(flags) -> str:
    """``flags`` as they enter a cache key: ``-march=native``/``-mcpu=native`` stand for the host's CPU and features,
    so a cache shared between machines never hands one the other's instructions."""
    out = []
    for flag in flags:
        if flag in ("-march=native", "-mcpu=native", "-mtune=native"):
            flag += f"({host_cpu_name()}:{','.join(sorted(host_cpu_features()))})"
        out.append(flag)
    return " ".join(out)


def _run(cmd, what, on_failure=None, cwd=None):
    """Run ``cmd``; on failure raise CodegenError with its output (``on_failure()`` may return a path to mention)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CodegenError(f"{what}: running {shlex.join(cmd)} failed ({exc})") from exc
    if proc.returncode != 0:
        source_path = on_failure() if on_failure is not None else None
        where = f" (source kept at {source_path})" if source_path else ""
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        detail = "\n".join(lines[:40])
        raise CodegenError(f"{what} failed{where}: {shlex.join(cmd)}\n{detail}")
    return proc


def compile_object(source: str, flags=None, name="kernel") -> pathlib.Path:
    """Compile C ``source`` into an object file, cached by content; returns the object's path.

    Parameters
    ----------
    source : str
        C source text.
    flags : list of str, optional
        Compiler flags (:func:`c_flags` by default).
    name : str
        Used in error messages.
    """
    flags = list(c_flags() if flags is None else flags)
    cc = cc_command()
    key = compile_cache.content_hash("c-object", " ".join(cc), compiler_version(), _flags_key(flags), source)

    def produce(out):
        # compiled in a private directory under a name derived from the key: the object records the source file
        # name, and must be byte-identical whichever process compiles it (library cache keys hash objects)
        with tempfile.TemporaryDirectory(prefix="kiln-cc-", dir=out.parent) as work:
            src = pathlib.Path(work) / f"{key[:16]}.c"
            src.write_text(source)
            _run([*cc, *flags, "-c", src.name, "-o", str(out.resolve())], f"compiling {name}",
                 on_failure=lambda: _keep_failed_source(source, key), cwd=work)

    return compile_cache.cached_file(key, ".o", produce)


def assembly(source: str, flags=None) -> str:
    """The assembly the C compiler makes of ``source`` with ``flags`` (for ``Module.get_source("asm")``)."""
    flags = [f for f in (c_flags() if flags is None else flags) if f != "-c"]
    with tempfile.TemporaryDirectory(prefix="kiln-asm-") as work:
        src = pathlib.Path(work) / "kernel.c"
        src.write_text(source)
        _run([*cc_command(), *flags, "-S", src.name, "-o", "kernel.s"], "printing assembly", cwd=work)
        return (pathlib.Path(work) / "kernel.s").read_text()


def _keep_failed_source(source, key):
    """Where the source of a failed compilation can be read (the cache's ``failed/`` folder)."""
    path = compile_cache.cache_dir() / "failed" / f"{key}.c"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


def runtime_object() -> pathlib.Path:
    """The compiled runtime helper (:data:`RUNTIME_SOURCE`), built once per compiler into the cache."""
    return compile_object(RUNTIME_SOURCE, ["-O2", "-std=gnu11", "-fPIC", "-pthread"], name="kiln runtime helper")


LINK_FLAGS = ("-shared", "-pthread", "-Wl,-Bsymbolic")


def link_shared(objects, output) -> pathlib.Path:
    """Link ``objects`` (and the runtime helper) into the shared library ``output``; returns its path."""
    cc = cc_command()
    output = pathlib.Path(output)
    objs = [str(o) for o in objects] + [str(runtime_object())]
    _run([*cc, *LINK_FLAGS, *objs, "-o", str(output), "-lm"], f"linking {output.name}")
    seal_library(output)
    return output


def link_shared_cached(objects) -> pathlib.Path:
    """Link ``objects`` into a shared library stored in the cache (keyed by the objects' contents)."""
    objects = [pathlib.Path(o) for o in objects]
    parts = ["shared-library", " ".join(cc_command()), compiler_version(), " ".join(LINK_FLAGS)]
    parts += [o.read_bytes() for o in objects]
    key = compile_cache.content_hash(*parts)
    return compile_cache.cached_file(key, ".so", lambda tmp: link_shared(objects, tmp))


def embed_object(symbol_values: dict, blob_path=None) -> pathlib.Path:
    """An object file defining string constants ``symbol_values`` ({symbol: text}) and, when ``blob_path`` is given,
    ``__kiln_blob``/``__kiln_blob_size`` holding that file's bytes (included by the assembler, not printed as C)."""
    lines = ["#include <stdint.h>"]
    for symbol, text in sorted(symbol_values.items()):
        lines.append(f"const char {symbol}[] = {c_string(text)};")
    if blob_path is not None:
        path = str(pathlib.Path(blob_path).resolve()).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(
            '__asm__(".section .rodata\\n.balign 64\\n.globl __kiln_blob\\n__kiln_blob:\\n'
            f'.incbin \\"{path}\\"\\n.globl __kiln_blob_end\\n__kiln_blob_end:\\n.previous\\n");'
        )
    source = "\n".join(lines) + "\n"
    blob_key = compile_cache.content_hash(pathlib.Path(blob_path).read_bytes()) if blob_path else ""
    return compile_object(source + f"/* blob {blob_key} */\n", ["-O0", "-fPIC"], name="library metadata")


def c_string(text: str) -> str:
    """A C string literal holding ``text`` (UTF-8), split into lines so compilers never meet over-long tokens."""
    data = text.encode()
    chunks = []
    for start in range(0, len(data), 512):
        piece = data[start:start + 512]
        chunks.append('"' + "".join(_c_char(b) for b in piece) + '"')
    return "\n  ".join(chunks) if chunks else '""'


def _c_char(b: int) -> str:
    if b in (0x22, 0x5C):
        return "\\" + chr(b)
    if 0x20 <= b < 0x7F and b != 0x3F:  # '?' escaped: no trigraphs
        return chr(b)
    return f"\\{b:03o}"
