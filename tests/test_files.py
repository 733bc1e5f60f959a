"""Atomic writes: a failed write leaves the previous file as it was and no temporary file behind."""
import pytest

from spacy_treeboost.files import write_bytes_atomic


def test_write_replaces_whole_file(tmp_path):
    target = tmp_path / "model"
    write_bytes_atomic(target, b"first")
    write_bytes_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "model"
    target.write_bytes(b"previous")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("spacy_treeboost.files.os.replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        write_bytes_atomic(target, b"x" * 1000)
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
