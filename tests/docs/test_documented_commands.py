"""Every ``ireebench`` command line in README.md and docs/ runs as documented.

Each document's shell blocks (fenced ``sh``/``console``/plain, or indented)
are read for lines whose command is ``ireebench`` (after an optional ``$ ``
prompt and ``VAR=value`` assignments; ``\\`` continues a line); the
document's commands then run in order, as a reader would type them, in a
folder of its own that holds stand-ins for the files the docs name:

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
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, _env

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = ("", "sh", "bash", "shell", "console", "indented")
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


def _blocks(text: str):
    """(language, [(line number, line)]) of each code block."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = re.match(r"^\s*(```|~~~)\s*(\w*)", line)
        if fence:
            body, index = [], index + 1
            while index < len(lines) and not lines[index].strip().startswith(fence.group(1)):
                body.append((index + 1, lines[index]))
                index += 1
            yield fence.group(2), body
            index += 1
            continue
        if line.startswith("    ") and line.strip() and (index == 0 or not lines[index - 1].strip()):
            body = []
            while index < len(lines) and (lines[index].startswith("    ")
                                          or not lines[index].strip()):
                body.append((index + 1, lines[index][4:]))
                index += 1
            yield "indented", body
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


def documented_commands(path: Path) -> list[Command]:
    commands = []
    for language, body in _blocks(path.read_text()):
        if language not in SHELL_BLOCKS:
            continue
        position = 0
        while position < len(body):
            number, line = body[position]
            text = line.strip().removeprefix("$ ")
            while text.endswith("\\") and position + 1 < len(body):
                position += 1
                text = text[:-1].rstrip() + " " + body[position][1].strip()
            position += 1
            try:
                words = shlex.split(text, comments=False)
            except ValueError:
                continue
            assignments = 0
            while assignments < len(words) and re.match(r"^[A-Z_][A-Z0-9_]*=", words[assignments]):
                assignments += 1
            if words[assignments:assignments + 1] != ["ireebench"]:
                continue
            command, _, comment = text.partition(" #")
            exits, skip = _annotation(comment.strip())
            devices = re.findall(r"--device[= ](\S+)", command)
            foreign = [d for value in devices for d in value.split(",")
                       if d.split(":")[0].split("=")[-1] not in LOCAL_DEVICES]
            if foreign and not skip:
                skip = f"device {foreign[0]} is not on this machine"
            commands.append(Command(path.name, number, command.strip(), exits, skip))
    return commands


def _python_files(path: Path) -> dict[str, str]:
    """The document's Python blocks that name their file on their first line."""
    files = {}
    for language, body in _blocks(path.read_text()):
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


COMMANDS = {path.name: documented_commands(path) for path in DOCUMENTS}


def test_the_docs_have_commands_to_run():
    """The reader below finds the documents' commands (it cannot pass on nothing)."""
    found = [command for commands in COMMANDS.values() for command in commands]
    assert len(found) >= 20, found
    assert any(c.text.startswith("ireebench compare") for c in found)


@pytest.mark.parametrize("document", [name for name, commands in COMMANDS.items() if commands])
def test_documented_commands_run(document, stand_ins, tmp_path):
    folder = tmp_path / "reader"
    shutil.copytree(stand_ins, folder)
    for name, text in _python_files(ROOT / ("README.md" if document == "README.md"
                                            else f"docs/{document}")).items():
        (folder / name).write_text(text)
    env = {**_env(), "IREEBENCH_STORAGE": str(folder / "results.sqlite"), "HOME": str(folder),
           "BENCHMARK_MIN_TIME": "2x", "BENCHMARK_MIN_WARMUP_TIME": "0",
           "PYTHONPATH": os.pathsep.join([str(folder), _env().get("PYTHONPATH", "")])}
    ran, failures = [], []
    for command in COMMANDS[document]:
        if command.skip:
            continue
        text = command.text.replace("/tmp/", f"{folder}/")
        words = shlex.split(text)
        assignments = {}
        while re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            key, _, value = words.pop(0).partition("=")
            assignments[key] = value
        proc = subprocess.run([sys.executable, "-m", "ireebench", *words[1:]],
                              capture_output=True, text=True, cwd=folder,
                              env={**env, **assignments}, timeout=300, check=False)
        ran.append(command)
        if proc.returncode not in command.exits:
            failures.append(f"{command}\n  exit {proc.returncode} (documented: "
                            f"{' or '.join(map(str, command.exits))})\n  "
                            + "\n  ".join((proc.stderr or proc.stdout).strip().splitlines()[-5:]))
    assert not failures, "\n".join(failures)
