"""kiln.testing.plugin: TVM's ``target``/``dev`` parametrization and ``known_failing_targets``, run in a pytest of
their own (the plugin is enabled by a conftest there, as TVM's suites enable theirs)."""

import subprocess
import sys
import textwrap


def test_target_argument_runs_per_target_and_known_failures_are_expected(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["kiln.testing.plugin"]\n')
    (tmp_path / "test_sample.py").write_text(textwrap.dedent('''
        import kiln
        import kiln.testing

        def test_each_target(target, dev):
            assert target in ("llvm", "c") and dev == kiln.cpu(0)

        @kiln.testing.known_failing_targets("llvm", "c")
        def test_expected_to_fail(target):
            assert False

        @kiln.testing.parametrize_targets("llvm")
        def test_explicit(target, dev):
            assert target == "llvm"
    '''))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    tail = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout
    assert "xfailed" in tail and ("3 passed" in tail or "skipped" in tail), tail
