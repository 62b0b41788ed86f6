"""Output files: committed only when complete, written through when special."""

import os

import pytest
from ireebench.errors import UsageError
from ireebench.outfiles import OutputFile, check_output_path, written_by_tool


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _others(directory, keep: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != keep)


def test_output_file_appears_only_when_closed(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("previous")
    handle = OutputFile(str(target))
    handle.stream.write("{}")
    assert target.read_text() == "previous"
    handle.close()
    assert target.read_text() == "{}"
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    discarded = OutputFile(str(target))
    discarded.stream.write("partial")
    discarded.discard()
    assert target.read_text() == "{}" and _others(tmp_path, "report.json") == []


def test_existing_mode_is_kept(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    handle = OutputFile(str(target))
    handle.stream.write("new")
    handle.close()
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == oct(0o640)


def test_name_near_name_max(tmp_path):
    target = tmp_path / ("r" * 250 + ".json")
    handle = OutputFile(str(target))
    handle.stream.write("{}")
    handle.close()
    assert target.read_text() == "{}" and _others(tmp_path, target.name) == []


@pytest.mark.parametrize("path, message", [
    ("{tmp}/dir/", "not a file"),
    ("{tmp}", "is a directory"),
    ("{tmp}/missing/out.json", "does not exist"),
])
def test_bad_paths_are_one_line(tmp_path, path, message):
    with pytest.raises(UsageError, match=message):
        check_output_path("benchmark_out", path.format(tmp=tmp_path))


def test_special_file_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        handle = OutputFile(str(fifo))
        handle.stream.write("row\n")
        handle.close()
        assert os.read(reader, 100) == b"row\n"
    finally:
        os.close(reader)
    assert not fifo.is_file() and fifo.exists()  # still a FIFO
    assert _others(tmp_path, "pipe") == []


def test_write_error_is_one_line_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("previous")
    handle = OutputFile(str(target))
    handle.stream.write("partial")
    os.close(handle.stream.fileno())  # the next flush fails like a full disk would
    with pytest.raises(UsageError, match="cannot write"):
        handle.close()
    assert target.read_text() == "previous" and _others(tmp_path, "report.json") == []


def test_written_by_tool_renames_on_success_only(tmp_path):
    target = tmp_path / "capture.bin"
    with written_by_tool(target) as temporary:
        temporary.write_bytes(b"data")
        assert not target.exists()
    assert target.read_bytes() == b"data"
    with pytest.raises(RuntimeError), written_by_tool(target) as temporary:
        temporary.write_bytes(b"partial")
        raise RuntimeError
    assert target.read_bytes() == b"data" and _others(tmp_path, "capture.bin") == []
