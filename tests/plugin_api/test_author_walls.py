"""Walls third-party plugin authors hit (issue 38, item 5), through the real CLI."""

from ireebench import hookimpl


class _Uploader:
    @hookimpl
    def ireebench_addoption(self, parser):
        parser.addoption("--mycorp_upload", type=bool, default=False,
                         help="upload the report")

    @hookimpl
    def ireebench_configure(self, config):
        config.getoption("mycorp_uplaod")


class _Defaulted:
    def __init__(self):
        self.seen = []

    @hookimpl
    def ireebench_configure(self, config):
        self.seen.append(config.getoption("not_declared_anywhere", "fallback"))


def test_getoption_of_an_undeclared_name_raises_with_a_hint(ireebench_tester):
    result = ireebench_tester.run(plugins=[_Uploader()], autoload=False)
    assert result.exit_code != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.error_lines if "mycorp_uplaod" in line]
    assert len(lines) == 1, result.stderr
    assert "did you mean 'mycorp_upload'?" in lines[0]


def test_getoption_with_an_explicit_default_returns_it_for_an_unknown_name(ireebench_tester):
    plugin = _Defaulted()
    result = ireebench_tester.run(plugins=[plugin], autoload=False)
    assert result.exit_code == 0, result.stderr
    assert plugin.seen == ["fallback"]
