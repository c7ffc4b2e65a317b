"""kiln.contrib.utils: TVM's tempdir."""

import os

from kiln.contrib import utils


def test_tempdir_holds_files_until_removed():
    temp = utils.tempdir()
    path = temp.relpath("lib.so")
    with open(path, "w") as f:
        f.write("x")
    assert temp.listdir() == ["lib.so"] and os.path.dirname(path) == temp.temp_dir
    directory = temp.temp_dir
    temp.remove()
    assert not os.path.exists(directory)
    temp.remove()  # twice: nothing


def test_tempdir_as_a_context_and_at_a_given_path(tmp_path):
    with utils.tempdir() as temp:
        directory = temp.temp_dir
        assert os.path.isdir(directory)
    assert not os.path.exists(directory)
    kept = utils.tempdir(str(tmp_path / "mine"), keep_for_debug=True)
    kept.remove()
    assert os.path.isdir(tmp_path / "mine")
