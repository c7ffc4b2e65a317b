"""The system C compiler: compiling C source to object files, linking shared libraries, and the runtime helper.

Compilation is separate from code generation (the generated source stays inspectable) and is cached on disk
(:mod:`kiln.target.compile_cache`): an object file is keyed by the source, the flags and the compiler's version; a
linked library by its inputs' content and the link flags. ``$CC`` names the compiler (``cc`` by default).

Every shared library kiln builds links one copy of :data:`RUNTIME_SOURCE`, the small runtime generated code calls:
the last-error slot (``KilnAPISetLastError``, read back by ``KilnGetLastError``), the parallel launcher the LLVM
backend's outlined parallel loops run through (``kiln_parallel_launch``, over OpenMP, so both backends share one thread
pool), and aligned workspace allocation. Its internal symbols are hidden and libraries link with ``-Bsymbolic``, so
several kiln libraries loaded in one process never bind to each other's copies.
"""

import functools
import os
import pathlib
import shlex
import subprocess
import tempfile

from ..error import CodegenError
from . import compile_cache

RUNTIME_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <omp.h>
#define KILN_HIDDEN __attribute__((visibility("hidden")))

static __thread const char* kiln_last_error = "";

KILN_HIDDEN void KilnAPISetLastError(const char* msg) { kiln_last_error = msg; }

/* read by the Python runtime after a function returned a non-zero code */
const char* KilnGetLastError(void) { return kiln_last_error; }

typedef int32_t (*kiln_task_fn)(int32_t task_id, int32_t num_tasks, void* closure);

/* Run fn(i, n, closure) for i in [0, n) on n threads (n <= 0: OpenMP's default); the first non-zero code wins and
   its message is moved to the calling thread's error slot. */
KILN_HIDDEN int32_t kiln_parallel_launch(kiln_task_fn fn, void* closure, int32_t num_tasks) {
  int32_t err = 0;
  const char* msg = "";
  if (num_tasks <= 0) num_tasks = omp_get_max_threads();
  #pragma omp parallel num_threads(num_tasks)
  {
    int32_t code = fn(omp_get_thread_num(), omp_get_num_threads(), closure);
    if (code != 0) {
      #pragma omp critical
      { if (err == 0) { err = code; msg = kiln_last_error; } }
    }
  }
  if (err != 0) kiln_last_error = msg;
  return err;
}

KILN_HIDDEN void* kiln_alloc(int64_t nbytes) {
  size_t n = (size_t)(nbytes <= 0 ? 64 : nbytes);
  n = (n + 63) & ~(size_t)63;
  return aligned_alloc(64, n);
}

KILN_HIDDEN void kiln_free(void* ptr) { free(ptr); }
"""


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


def have_cc() -> bool:
    """Whether a working C compiler is available."""
    try:
        compiler_version()
    except CodegenError:
        return False
    return True


def c_flags(target=None) -> list:
    """Flags for compiling generated C: ``-O3 -march=<cpu> -fopenmp -fPIC`` and the target's ``-mattr`` as ``-m``
    (and ``-fno-tree-loop-if-convert``, around a GCC 12 miscompilation)."""
    march = "native" if target is None or target.is_host_cpu else target.mcpu
    flags = ["-O3", "-std=gnu99", "-fPIC", "-fopenmp", "-fno-math-errno", f"-march={march}"]
    # GCC 12 vectorizes an if-converted select of two loads in a fully unrolled nested loop with the first
    # vector's mask reused for the later ones (wrong values; tests/target/test_codegen_c.py has the kernel).
    # kiln vectorizes its loops itself, so GCC's if-conversion is not needed for speed
    flags.append("-fno-tree-loop-if-convert")
    if target is not None:
        for attr in target.mattr:
            flags.append(f"-m{attr[1:]}" if attr[0] == "+" else f"-mno-{attr[1:]}")
    return flags


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
    key = compile_cache.content_hash("c-object", " ".join(cc), compiler_version(), " ".join(flags), source)

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
    return compile_object(RUNTIME_SOURCE, ["-O2", "-std=gnu99", "-fPIC", "-fopenmp"], name="kiln runtime helper")


LINK_FLAGS = ("-shared", "-fopenmp", "-Wl,-Bsymbolic")


def link_shared(objects, output) -> pathlib.Path:
    """Link ``objects`` (and the runtime helper) into the shared library ``output``; returns its path."""
    cc = cc_command()
    output = pathlib.Path(output)
    objs = [str(o) for o in objects] + [str(runtime_object())]
    _run([*cc, *LINK_FLAGS, *objs, "-o", str(output), "-lm"], f"linking {output.name}")
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
