"""The on-disk compile cache: compiled objects and linked libraries stored under a hash of what produced them.

A cache entry is a file ``<cache dir>/<key[:2]>/<key><suffix>`` where ``key`` is the SHA-256 of everything that
determines the output (source text, compiler and its version, flags). The directory is ``$KILN_CACHE_DIR``, or
``~/.cache/kiln`` by default; it is read when an entry is looked up, so a user may move it at any time.

Two processes may compile the same thing at once: each writes its own temporary file next to the entry and moves it
into place with ``os.replace``, which is atomic on one file system. A reader therefore sees either no entry or a
complete one, and whichever writer renames last wins with identical content. Nothing is ever modified in place.

Each entry has a sidecar ``<entry>.sha256`` holding the SHA-256 of its content, written after it. A lookup hashes the
entry and compares: an entry damaged on disk (truncated, overwritten with garbage, its sidecar lost) is a miss, and
is produced again and replaced, never handed to the linker or the loader.
"""

import hashlib
import os
import pathlib
import tempfile

from ..error import CodegenError


def cache_dir() -> pathlib.Path:
    """The cache directory: ``$KILN_CACHE_DIR`` or ``~/.cache/kiln`` (created on first use)."""
    root = os.environ.get("KILN_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kiln")
    path = pathlib.Path(root)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CodegenError(f"compile cache: cannot create the cache directory {path} ({exc}); "
                           f"set KILN_CACHE_DIR to a writable directory") from exc
    return path


def content_hash(*parts) -> str:
    """SHA-256 (hex) of ``parts`` (str or bytes), each length-prefixed so that concatenations cannot collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def entry_path(key: str, suffix: str) -> pathlib.Path:
    """Where the entry ``key`` with ``suffix`` lives (it may not exist yet)."""
    return cache_dir() / key[:2] / f"{key}{suffix}"


def lookup(key: str, suffix: str) -> pathlib.Path | None:
    """The intact entry ``key`` with ``suffix``, or None (missing or damaged)."""
    path = entry_path(key, suffix)
    return path if _intact(path) else None


def cached_file(key: str, suffix: str, produce) -> pathlib.Path:
    """Return the cache entry ``key``; on a miss call ``produce(tmp_path)`` to write it, then publish it atomically.

    Parameters
    ----------
    key : str
        A content hash (see :func:`content_hash`).
    suffix : str
        File suffix (``".o"``, ``".so"``).
    produce : callable
        ``produce(path)`` writes the entry's content to ``path`` (a fresh temporary name in the entry's directory).

    Returns
    -------
    path : pathlib.Path
        The entry.
    """
    path = entry_path(key, suffix)
    if _intact(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=f"{suffix}.tmp", dir=path.parent)
    os.close(fd)
    sum_tmp = tmp + ".sha256"
    try:
        produce(pathlib.Path(tmp))
        pathlib.Path(sum_tmp).write_text(_digest(pathlib.Path(tmp)))
        os.replace(tmp, path)
        os.replace(sum_tmp, _sidecar(path))
    finally:
        for leftover in (tmp, sum_tmp):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return path


def _sidecar(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(path.name + ".sha256")


def _digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _intact(path: pathlib.Path) -> bool:
    """Whether the entry at ``path`` exists and matches the digest recorded beside it."""
    try:
        return _sidecar(path).read_text().strip() == _digest(path)
    except OSError:  # no entry, or no sidecar (an older cache's entry or a damaged one): produce it again
        return False


def write_bytes_cached(key: str, suffix: str, data: bytes) -> pathlib.Path:
    """Store ``data`` as the entry ``key`` (atomically) and return its path."""
    return cached_file(key, suffix, lambda tmp: tmp.write_bytes(data))
