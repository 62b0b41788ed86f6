"""The docs stay in step with the code."""


from conftest import ROOT
from ireebench import hookspecs


def test_every_hook_is_documented():
    reference = (ROOT / "docs" / "plugins.md").read_text()
    hooks = [name for name in dir(hookspecs) if name.startswith("ireebench_")]
    assert hooks
    missing = [name for name in hooks if f"`{name}(" not in reference]
    assert not missing, f"docs/plugins.md lacks {missing}"


def test_every_hook_has_a_docstring():
    for name in dir(hookspecs):
        if name.startswith("ireebench_"):
            assert (getattr(hookspecs, name).__doc__ or "").strip(), name


def test_readme_commands_name_real_files():
    readme = (ROOT / "README.md").read_text()
    assert "examples/matmul.mlir" in readme and (ROOT / "examples" / "matmul.mlir").is_file()
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = next(line for line in readme.splitlines() if "pytest" in line)
    assert test_command.strip() in ci
