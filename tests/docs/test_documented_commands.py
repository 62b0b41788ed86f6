"""Every shell block in README.md and docs/ runs as written.

A block is commands when it is fenced ``sh``/``bash``/``shell``, or plain,
``console`` or indented and its first line is a command (``ireebench ...``,
``iree-compile ...``, ``$ ...``: then only the ``$`` lines); other blocks are
output and are not run. Each block is one test (id ``FILE:LINE``) and runs
in bash with ``ireebench`` and the IREE tools on PATH, within
``BLOCK_TIMEOUT``; a document's blocks run in order in one folder, as a
reader types them (what one writes, the next finds; a worker that did not
run the blocks above runs them first). A block is skipped,
with its reason, after ``<!-- skip: why -->`` or with ``skip="why"`` in its
info string, when it installs packages (``pip install``, ``python3 -m
venv``: those lines only) or when all its commands are skipped.

The first hour's documents (``SHIPPED_ONLY``: README.md, guide.md,
serving.md) run beside a copy of the repository's examples/, with an
empty results store and no stand-in but the README's sink; the others in a
folder that holds stand-ins for the files the docs name:

* ``model.vmfb`` (and ``old.vmfb``, ``new.vmfb``, ``mlp.vmfb``,
  ``small.vmfb``): a module compiled here with the functions the docs call
  (``main`` on ``1x224x224x3xf32``, ``forward`` on ``?x?xf32``) and one
  that takes no input, which a run without ``--function`` measures;
* ``examples/``: the repository's, copied;
* ``run.json``, ``old.json``, ``new.json``, ``small.json``, ``mlp.json``:
  reports of real runs of the stand-in, unless a command made them first;
* a plugin a command loads by file name (``--plugin=tsv_reporter.py``) is the
  document's Python block whose first line is ``# tsv_reporter.py``; the
  README's ``mycorp_sink`` is a stand-in sink;
* the results store: ``IREEBENCH_STORAGE`` in the folder, holding two saved
  runs of ``mlp`` and one of ``forward``, made in a git repository on branch
  ``main`` (the folder is one); ``/tmp/`` in a command is the folder too.

Each command must exit 0 unless its line says otherwise in a trailing
comment: ``# exits 1 on a regression`` allows 0 or 1 (a compare of two runs
of one module exits 1 where the noise of this machine looks like a
regression, as docs/compare.md announces), and ``, 4 when it cannot judge``
after it 4 too (a compare on this noisy machine often cannot); ``# exits 2``
allows 2; a command on a device this machine lacks
(``--device=cuda...``) or marked ``# not run here: why`` is skipped. Runs
are shortened with Google Benchmark's variables (``BENCHMARK_MIN_TIME``),
which a flag on the line overrides, as for any user.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import ROOT, _env

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = ("", "sh", "bash", "shell", "console", "indented")
# A block whose first line starts with one of these is commands, else output.
PROGRAMS = {"ireebench", "iree-compile", "iree-benchmark-module", "iree-dump-replay", "python",
            "python3", "pip", "ray", "export", "cd", "."}
# The first hour's documents name only files the repository ships or their
# own commands make: they run without the stand-ins, on an empty store.
SHIPPED_ONLY = ("README.md", "guide.md", "serving.md")
BLOCK_TIMEOUT = 240  # seconds; a block of the first hour takes under 20 s on 2 busy CPUs
LOCAL_DEVICES = ("local-sync", "local-task")
MODULE_NAMES = ("model.vmfb", "old.vmfb", "new.vmfb", "mlp.vmfb", "small.vmfb")
REPORT_NAMES = ("run.json", "old.json", "new.json", "small.json", "mlp.json")
MYCORP_SINK = '''"""A stand-in for the README's company sink: receives every row."""
from ireebench import hookimpl


@hookimpl
def ireebench_benchmark_result(config, run):
    pass
'''


@dataclass
class Command:
    document: str
    line: int
    text: str  # as documented, continuations joined
    exits: tuple[int, ...] = (0,)
    skip: str = ""  # why it does not run here

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


@dataclass
class Block:
    """A shell block: its commands run in order, in one shell."""
    document: str
    line: int
    commands: list[Command] = field(default_factory=list)
    skip: str = ""  # why the whole block does not run here

    def script(self, folder: Path) -> str:
        """The block as bash runs it: each command's exit status checked as documented."""
        lines = []
        for command in self.commands:
            if command.skip:
                continue
            allowed = "|".join(map(str, command.exits))
            failed = f'echo "{command.document}:{command.line}: exit $status (documented: {allowed})" >&2; exit 1'
            lines += [command.text.replace("/tmp/", f"{folder}/"),
                      f"status=$?; case $status in {allowed}) ;; *) {failed};; esac"]
        return "\n".join(lines) + "\n"


def _blocks(text: str):
    """(language, info string, [(line number, line)], the line above) of each code block."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        above = next((lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        fence = re.match(r"^\s*(```|~~~)\s*(\w*)(.*)", line)
        if fence:
            body, index = [], index + 1
            while index < len(lines) and not lines[index].strip().startswith(fence.group(1)):
                body.append((index + 1, lines[index]))
                index += 1
            yield fence.group(2), fence.group(3), body, above
            index += 1
            continue
        if line.startswith("    ") and line.strip() and (index == 0 or not lines[index - 1].strip()):
            body = []
            while index < len(lines) and (lines[index].startswith("    ")
                                          or not lines[index].strip()):
                body.append((index + 1, lines[index][4:]))
                index += 1
            yield "indented", "", body, above
            continue
        index += 1


def _annotation(comment: str) -> tuple[tuple[int, ...], str]:
    exits = re.search(r"\bexits?\s+(\d+)( on a regression)?", comment)
    if exits:
        code = int(exits.group(1))
        codes = (0, code) if exits.group(2) else (code,)
        # "..., 4 when it cannot judge": compare's own exit status for that
        if re.search(r"\b4 when it cannot judge", comment):
            codes += (4,)
        return codes, ""
    skip = re.match(r"not run here:\s*(.*)", comment)
    return (0,), (skip.group(1) or "marked") if skip else ""


def _is_command(line: str) -> bool:
    """Whether a line reads as a command (a block of output starts otherwise)."""
    try:
        words = shlex.split(line.strip().removeprefix("$ ").rstrip("\\"), comments=True)
    except ValueError:
        return False
    words = [word for word in words if not re.match(r"^[A-Z_][A-Z0-9_]*=", word)]
    return bool(words) and words[0] in PROGRAMS


def _block(path: Path, language: str, info: str, body, above: str) -> Block | None:
    """The block's commands, or None where the block is output."""
    if language not in SHELL_BLOCKS:
        return None
    prompts = any(line.strip().startswith("$ ") for _, line in body)
    first = next((line for _, line in body if line.strip()), "")
    if not prompts and not _is_command(first):
        return None
    block = Block(path.name, body[0][0] if body else 0)
    marked = re.search(r'skip="([^"]*)"', info) or re.fullmatch(r"<!--\s*skip:\s*(.*?)\s*-->", above)
    block.skip = marked.group(1) if marked else ""
    position = 0
    while position < len(body):
        number, line = body[position]
        text = line.strip()
        position += 1
        if prompts and not text.startswith("$ ") or not text or text.startswith("#"):
            continue
        text = text.removeprefix("$ ")
        while text.endswith("\\") and position < len(body):
            text = text[:-1].rstrip() + " " + body[position][1].strip()
            position += 1
        command, _, comment = text.partition(" #")
        exits, skip = _annotation(comment.strip())
        devices = re.findall(r"--devices?[= ](\S+)", command)
        foreign = [d for value in devices for d in value.split(",")
                   if d.split(":")[0].split("=")[-1] not in LOCAL_DEVICES]
        if foreign and not skip:
            skip = f"device {foreign[0]} is not on this machine"
        if re.match(r"(python3? -m venv|pip install)\b", command):
            skip = "installs packages"
        block.commands.append(Command(path.name, number, command.strip(), exits, skip))
    if not block.skip and all(command.skip for command in block.commands):
        block.skip = "; ".join(dict.fromkeys(command.skip for command in block.commands))
    return block


def documented_blocks(path: Path) -> list[Block]:
    blocks = (_block(path, *parts) for parts in _blocks(path.read_text()))
    return [block for block in blocks if block is not None]


def documented_commands(path: Path) -> list[Command]:
    return [command for block in documented_blocks(path) for command in block.commands]


def _python_files(path: Path) -> dict[str, str]:
    """The document's Python blocks that name their file on their first line."""
    files = {}
    for language, _, body, _ in _blocks(path.read_text()):
        if language == "python" and body:
            first = body[0][1].strip()
            name = re.fullmatch(r"#\s*([\w.-]+\.py)", first)
            if name:
                files[name.group(1)] = "\n".join(line for _, line in body) + "\n"
    return files


@pytest.fixture(scope="session")
def stand_ins(compile_mlir, tmp_path_factory) -> Path:
    """A folder with every stand-in: modules, reports, examples, benchmarks."""
    folder = tmp_path_factory.mktemp("documented")
    module = compile_mlir("stand_in")
    for name in MODULE_NAMES:
        shutil.copyfile(module, folder / name)
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / "mycorp_sink.py").write_text(MYCORP_SINK)
    report = subprocess.run(
        [sys.executable, "-m", "ireebench", f"--module={module}", "--device=local-sync",
         "--function=mlp", "--benchmark_repetitions=3", "--benchmark_min_time=2x",
         "--memory_statistics", f"--benchmark_out={folder / 'run.json'}"],
        capture_output=True, text=True, env=_env(), check=False)
    assert report.returncode == 0, report.stderr
    for name in REPORT_NAMES[1:]:
        shutil.copyfile(folder / "run.json", folder / name)
    git = ["git", "-c", "user.name=docs", "-c", "user.email=docs@example.com"]
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "docs"]):
        subprocess.run([*git, *step], cwd=folder, check=True, capture_output=True)
    for function in ("forward", "mlp"):
        inputs = ["--input=4x512xf32=1"] if function == "forward" else []
        for _ in range(2 if function == "mlp" else 1):
            saved = subprocess.run(
                [sys.executable, "-m", "ireebench", f"--module={module}", "--device=local-sync",
                 f"--function={function}", *inputs, "--benchmark_repetitions=3",
                 "--benchmark_min_time=2x", "--benchmark_save",
                 f"--benchmark_storage={folder / 'results.sqlite'}"],
                capture_output=True, text=True, env=_env(), cwd=folder, check=False)
            assert saved.returncode == 0, saved.stderr
    return folder


BLOCKS = [block for path in DOCUMENTS for block in documented_blocks(path)]


def test_the_docs_have_commands_to_run():
    """The reader below finds the documents' commands (it cannot pass on nothing)."""
    found = [command for block in BLOCKS for command in block.commands]
    assert len(found) >= 20, found
    assert any(c.text.startswith("ireebench compare") for c in found)
    assert any(c.text.startswith("iree-compile") for c in found)


@pytest.fixture(scope="session")
def readers(stand_ins, tmp_path_factory):
    """reader(document) -> the folder its blocks run in, one per document, as a
    reader's working directory: what one block writes, the next one finds."""
    folders = {}

    def reader(document: str) -> Path:
        if document not in folders:
            folder = folders[document] = tmp_path_factory.mktemp("reader") / "repo"
            shutil.copytree(stand_ins, folder)
            if document in SHIPPED_ONLY:
                for name in (*MODULE_NAMES, *REPORT_NAMES, "results.sqlite"):
                    (folder / name).unlink(missing_ok=True)
            path = ROOT / ("README.md" if document == "README.md" else f"docs/{document}")
            for name, text in _python_files(path).items():
                (folder / name).write_text(text)
        return folders[document]

    return reader


def _run_block(block: Block, folder: Path) -> subprocess.CompletedProcess:
    bin_dir = str(Path(sys.executable).parent)  # ireebench and the IREE tools
    env = {**_env(), "IREEBENCH_STORAGE": str(folder / "results.sqlite"), "HOME": str(folder),
           "BENCHMARK_MIN_TIME": "2x", "BENCHMARK_MIN_WARMUP_TIME": "0",
           "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
           "PYTHONPATH": os.pathsep.join([str(folder), _env().get("PYTHONPATH", "")])}
    return subprocess.run(["bash", "-c", block.script(folder)], capture_output=True, text=True,
                          cwd=folder, env=env, timeout=BLOCK_TIMEOUT, check=False)


@pytest.mark.parametrize("block", [
    pytest.param(block, id=f"{block.document}:{block.line}",
                 marks=[pytest.mark.skip(reason=block.skip)] if block.skip else [])
    for block in BLOCKS])
def test_documented_block_runs(block, readers):
    """Each shell block runs as written, in bash, in its document's folder, after
    the document's blocks above it (run here first where another worker ran them)."""
    folder = readers(block.document)
    ran = folder / ".blocks-ran"
    done = set(ran.read_text().split()) if ran.exists() else set()
    for earlier in BLOCKS:
        if (earlier.document == block.document and earlier.line < block.line
                and not earlier.skip and str(earlier.line) not in done):
            _run_block(earlier, folder)  # its own test reports how it fails
            done.add(str(earlier.line))
    proc = _run_block(block, folder)
    ran.write_text(" ".join(sorted(done | {str(block.line)})))
    assert proc.returncode == 0, "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
