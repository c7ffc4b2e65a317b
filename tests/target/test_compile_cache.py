"""The on-disk compile cache and the compiler driver (kiln/target/compile_cache.py, compiler.py): keys, the cache
directory from KILN_CACHE_DIR, atomic publication, compile errors, and two processes compiling at once."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import CodegenError
from kiln.target import compile_cache, compiler

from .conftest import HAVE_CC, TARGETS


def test_content_hash_is_length_prefixed():
    assert compile_cache.content_hash("ab", "c") != compile_cache.content_hash("a", "bc")
    assert compile_cache.content_hash("x", b"y") == compile_cache.content_hash(b"x", "y")
    assert len(compile_cache.content_hash("x")) == 64


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "here"))
    assert compile_cache.cache_dir() == tmp_path / "here"
    assert (tmp_path / "here").is_dir()
    monkeypatch.delenv("KILN_CACHE_DIR")
    assert compile_cache.cache_dir() == compile_cache.pathlib.Path(os.path.expanduser("~/.cache/kiln"))


def test_cached_file_publishes_once_and_cleans_up_on_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    calls = []

    def produce(path):
        calls.append(path)
        path.write_text("content")

    key = compile_cache.content_hash("entry")
    first = compile_cache.cached_file(key, ".txt", produce)
    second = compile_cache.cached_file(key, ".txt", produce)
    assert first == second and first.read_text() == "content" and len(calls) == 1
    assert first.parent.name == key[:2]

    def fail(path):
        path.write_text("partial")
        raise RuntimeError("compiler crashed")

    other = compile_cache.content_hash("other")
    with pytest.raises(RuntimeError):
        compile_cache.cached_file(other, ".txt", fail)
    assert not compile_cache.entry_path(other, ".txt").exists()
    # the entry and its digest, no temporary file left
    assert sorted(p.name for p in first.parent.iterdir()) == [first.name, first.name + ".sha256"]


@pytest.mark.parametrize("target", TARGETS)
def test_build_hits_the_cache_in_kiln_cache_dir(tmp_path, monkeypatch, target):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    kiln.build(s, [A, B], target=target, name="twice")
    entries = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert any(p.suffix == ".so" for p in entries) and any(p.suffix == ".o" for p in entries)
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    m = kiln.build(s, [A, B], target=target, name="twice")
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == entries
    assert {p: p.stat().st_mtime_ns for p in entries} == stamps
    b = kiln.nd.empty((8,))
    m(kiln.nd.array(np.arange(8, dtype="float32")), b)
    np.testing.assert_array_equal(b.numpy(), 2 * np.arange(8))


@pytest.mark.needs_cc
@pytest.mark.skipif(not HAVE_CC, reason="no system C compiler")
def test_compile_error_names_the_compiler_output_and_keeps_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    with pytest.raises(CodegenError) as info:
        compiler.compile_object("int f(void) { return undefined_name; }\n", name="broken kernel")
    message = str(info.value)
    assert "compiling broken kernel failed" in message and "undefined_name" in message
    kept = message.split("source kept at ")[1].split(")")[0]
    assert "undefined_name" in open(kept).read()
    assert not list(tmp_path.rglob("*.o"))


_CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import kiln
    from kiln import te
    start, target = float(sys.argv[1]), sys.argv[2]
    n = 512
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.exp(A[i]) + 3.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=16)
    s[B].vectorize(xi)
    s[B].parallel(xo)
    while time.time() < start:
        time.sleep(0.001)
    m = kiln.build(s, [A, B], target=target, name="concurrent")
    a = np.linspace(-1, 1, n).astype("float32")
    b = kiln.nd.empty((n,))
    m(kiln.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), np.exp(a) + 3.0, rtol=1e-6)
    print("ok")
""")


@pytest.mark.parametrize("target", TARGETS)
def test_two_processes_compile_the_same_function_into_one_cache(tmp_path, target):
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    start = time.time() + 2.0  # both processes start compiling at the same moment
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(start), target], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "ok"
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.startswith(".")], "temporary files were left behind"
    names = [p.name for p in files]
    assert len(names) == len(set(names))
    assert sum(p.suffix == ".so" for p in files) == 1


@pytest.mark.parametrize("damage", ["truncate", "garbage", "no_digest"])
@pytest.mark.parametrize("target", TARGETS)
def test_damaged_entries_are_built_again(tmp_path, monkeypatch, target, damage):
    """An object or library damaged in the cache (cut short, overwritten, its digest lost) is a miss: it is built
    and replaced, and the result runs."""
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 5.0, name="B")
    s = te.create_schedule(B.op)
    kiln.build(s, [A, B], target=target, name="plus5")
    entries = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".o", ".so")]
    assert entries
    for path in entries:
        # a new file in place of the entry (this process has the old library mapped: editing that file in place
        # would crash it, which is not the damage being tested)
        if damage == "truncate":
            content = path.read_bytes()[: path.stat().st_size // 2]
        elif damage == "garbage":
            content = b"\x7fELF garbage" * 50
        else:
            path.with_name(path.name + ".sha256").unlink()
            continue
        path.with_name("damaged").write_bytes(content)
        os.replace(path.with_name("damaged"), path)
    m = kiln.build(s, [A, B], target=target, name="plus5")
    b = kiln.nd.empty((8,))
    m(kiln.nd.array(np.arange(8, dtype="float32")), b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8) + 5)
    for path in entries:
        assert compile_cache.lookup(path.stem, path.suffix) == path  # rebuilt whole, digest recorded
