"""``kiln tune`` (kiln/cli/tune.py): it checks its flags, tunes every kernel of the model with a progress bar, and
``kiln compile --tuning-records`` builds with the records; bad flags are one line."""

import json

import numpy as np
import pytest

from kiln.cli import main


def test_tune_then_compile_with_the_records(cli, tiny_model, tmp_path):
    records = tmp_path / "records.json"
    done = cli.kiln("tune", tiny_model, "-o", records, "--trials", "3", "--tuner", "random", "--number", "1",
                    "--time-budget", "120")
    assert done.returncode == 0, done.stderr
    assert "3 tunable kernels" in done.stdout and "conv2d_NCHWc.x86" in done.stdout
    assert "GFLOP/s" in done.stderr and "trial" in done.stderr  # the progress bars
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    assert {row["input"][1] for row in rows} == {"conv2d_NCHWc.x86", "global_pool.x86", "dense_nopack.x86"}
    assert all(row["result"][1] == 0 for row in rows)
    package = tmp_path / "m.tar"
    done = cli.kiln("compile", tiny_model, "-o", package, "--tuning-records", records)
    assert done.returncode == 0, done.stderr
    assert f": {len(rows)} records" in done.stderr
    np.savez(tmp_path / "in.npz", data=np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype("float32"))
    done = cli.kiln("run", package, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    want = cli.onnxruntime_outputs(tiny_model, {"data": np.load(tmp_path / "in.npz")["data"]})[0]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["output_0"], want, rtol=1e-4, atol=1e-4)


def test_gradient_scheduler_spends_one_budget_over_the_kernels(cli, tiny_model, tmp_path):
    records = tmp_path / "records.json"
    done = cli.kiln("tune", tiny_model, "-o", records, "--trials", "2", "--tuner", "random", "--number", "1",
                    "--scheduler", "gradient", "--parallel", "1")
    assert done.returncode == 0, done.stderr
    assert "3 kernels" in done.stderr  # one progress bar over every kernel
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(rows) == 3 * 2 and all(row["result"][1] == 0 for row in rows)
    per_kernel = {}
    for row in rows:
        per_kernel[row["input"][1]] = per_kernel.get(row["input"][1], 0) + 1
    assert set(per_kernel) == {"conv2d_NCHWc.x86", "global_pool.x86", "dense_nopack.x86"}  # a warm-up round each
    assert done.stdout.count("default") == 3  # the summary: each kernel's default measured (its first trial)


@pytest.mark.parametrize("argv,message", [
    (["missing.onnx", "-o", "r.json"], "no model file at missing.onnx"),
    (["{model}", "-o", "r.json", "--target", "cuda"], "target kind 'cuda' is not supported"),
    (["{model}", "-o", "r.json", "--input-shapes", "data"], "--input-shapes: cannot read 'data'"),
    (["{model}", "-o", "r.json", "--trials", "0"], "--trials must be at least 1, got 0"),
    (["{model}", "-o", "r.json", "--time-budget", "0"], "--time-budget must be positive, got 0"),
    (["{model}", "-o", "nowhere/r.json"], "the directory"),
    (["{model}", "-o", "r.json", "--tuning-records", "old.json"], "--tuning-records: no such file old.json"),
])
def test_bad_flags_are_reported_first(capsys, monkeypatch, tmp_path, tiny_model, argv, message):
    monkeypatch.chdir(tmp_path)
    code = main(["tune", *(a.format(model=tiny_model) for a in argv)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("kiln tune: error: ") and message in err


def test_usage_errors_are_one_line(capsys, tiny_model):
    with pytest.raises(SystemExit) as info:
        main(["tune", tiny_model, "--tuner", "annealing", "-o", "r.json"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "invalid choice: 'annealing'" in err
    with pytest.raises(SystemExit):
        main(["tune", tiny_model])
    assert "the following arguments are required: -o/--output" in capsys.readouterr().err
