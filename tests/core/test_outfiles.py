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


def test_written_by_tool_through_a_link_renames_onto_the_file(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "latest.bin").symlink_to("runs/real.bin")
    with written_by_tool(tmp_path / "latest.bin") as temporary:
        assert temporary.parent == tmp_path / "runs"
        temporary.write_bytes(b"data")
    assert (tmp_path / "latest.bin").is_symlink()
    assert (tmp_path / "runs" / "real.bin").read_bytes() == b"data"
    assert _others(tmp_path / "runs", "real.bin") == []


def test_own_descriptor_paths_are_written_through_the_descriptor(tmp_path):
    """/proc/self/fd/N (what /dev/stdout leads to), for a tool's file and a report."""
    read_end, write_end = os.pipe()
    try:
        with written_by_tool(f"/proc/self/fd/{write_end}") as temporary:
            assert not str(temporary).startswith("/proc/")
            temporary.write_bytes(b"captured")
        (tmp_path / "fd").symlink_to(f"/proc/self/fd/{write_end}")
        handle = OutputFile(str(tmp_path / "fd"))
        handle.stream.write("+report")
        handle.close()
        os.fstat(write_end)  # the descriptor itself stays open
        assert os.read(read_end, 100) == b"captured+report"
    finally:
        os.close(read_end)
        os.close(write_end)
    assert _others(tmp_path, "fd") == []
