"""``kiln tune`` (kiln/cli/tune.py): it checks its flags, then says in one line that tuning is not implemented yet
and exits non-zero."""

import pytest

from kiln.cli import main


def test_says_tuning_is_not_implemented(cli, tiny_model, tmp_path):
    done = cli.kiln("tune", tiny_model, "-o", tmp_path / "records.json", "--trials", "20", "--tuner", "random")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("kiln tune: error: tuning is not implemented yet (issue #17); kiln compile uses the default "
                           "schedules\n")
    assert not (tmp_path / "records.json").exists()


@pytest.mark.parametrize("argv,message", [
    (["missing.onnx", "-o", "r.json"], "no model file at missing.onnx"),
    (["{model}", "-o", "r.json", "--target", "cuda"], "unknown target kind 'cuda'"),
    (["{model}", "-o", "r.json", "--input-shapes", "data"], "--input-shapes: cannot read 'data'"),
    (["{model}", "-o", "r.json", "--trials", "0"], "--trials must be at least 1, got 0"),
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
