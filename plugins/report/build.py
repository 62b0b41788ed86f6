"""The report made: its data worked out, its sections asked for and drawn, written.

Imported only when a report is made (it imports matplotlib through
:mod:`.charts`). :func:`write` works out the reports' data once
(:func:`~.model.analyse`), asks every plugin for its sections
(``ireebench_report_sections``, the report's own from the built-in
``report.sections``, :mod:`.builtin_sections`, registered here), draws
each in the order of its ``order`` into a :class:`Document`, and writes
the page (one self-contained HTML file) and/or each chart as a file of its
own. Each chart is drawn once and its figure released at once, so the
memory of a report does not grow with its charts. Every file is complete
or absent (:class:`~ireebench.outfiles.OutputFile`).

A section whose plugin fails (its hook implementation or its ``render``
raises) is that plugin's error: the section says so on the page, the
other sections are drawn and the page written, then the first such error
ends the command (:class:`~ireebench.PluginError`, exit status 3, naming
the plugin; a :class:`~ireebench.UsageError` a plugin raised, exit 1).
"""

from __future__ import annotations

import gc
import re
import warnings
from datetime import datetime, timezone
from pathlib import Path

import matplotlib
from ireebench import __version__
from ireebench.comparison import CompareOptions
from ireebench.errors import PluginError, UsageError
from ireebench.hookcall import guarded_for, implementations
from ireebench.outfiles import write_to
from ireebench.reporting import ReportSection

from . import builtin_sections, page
from . import charts as draw
from .data import Report
from .model import ReportData, analyse
from .sections import RenderedSection, SectionWriter

CHART_FORMATS = ("svg", "png")
HOOK = "ireebench_report_sections"


class Document:
    """The page being drawn: its sections, its charts (each drawn once, its SVG
    inlined with ids of its own, its file kept for ``--output_dir``)."""

    chart_library = draw  # what SectionWriter.charts gives a section

    def __init__(self, title: str, subtitle: str, inline: bool = True, chart_format: str = ""):
        self.inline = inline
        self.chart_format = chart_format  # "" when no --output_dir
        self.title = title
        self.subtitle = subtitle
        self.sections: list[RenderedSection] = []
        self.files: list[tuple[str, bytes]] = []  # --output_dir: (file name, bytes)
        self.failures: list[Exception] = []  # the plugins whose sections failed
        self.charts = 0
        self._slugs: set[str] = set()
        self.glyphs: dict[str, str] = {}  # the charts' text shapes, defined once

    def slug(self, *parts: str) -> str:
        text = "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", part).strip("_.-") or "x"
                        for part in parts)[:120]
        slug, number = text, 2
        while slug in self._slugs:
            slug, number = f"{text}-{number}", number + 1
        self._slugs.add(slug)
        return slug

    @staticmethod
    def new_figure(height: float, width: float | None = None):
        return draw.new_figure(height, width)

    def add_chart(self, chart: draw.Chart) -> str:
        """Draws a chart once: its HTML figure (its SVG inline, "" for files only)
        and its --output_dir file; its figure is released."""
        try:
            svg = chart.svg() if self.inline or self.chart_format == "svg" else ""
            if self.chart_format == "svg":
                self.files.append((f"{chart.slug}.svg", svg.encode()))
            elif self.chart_format == "png":
                self.files.append((f"{chart.slug}.png", chart.png()))
        finally:
            chart.figure.clear()  # the memory goes back now
        return self._inline(svg, chart.title)

    def add_figure(self, figure, caption: str, section: str, name: str) -> str:
        return self.add_chart(draw.Chart(self.slug(section, name), caption, figure))

    def add_svg(self, svg: str, caption: str, section: str, name: str) -> str:
        """An SVG a section made itself: inlined (ids prefixed), written as .svg."""
        if not isinstance(svg, str) or "<svg" not in svg:
            raise TypeError(f"expected the text of an SVG document, got {type(svg).__name__}")
        if self.chart_format:
            self.files.append((f"{self.slug(section, name)}.svg", svg.encode()))
        return self._inline(svg, caption)

    def _inline(self, svg: str, caption: str) -> str:
        if not self.inline:
            return ""
        self.charts += 1
        return page.figure(draw.inline_svg(svg, f"c{self.charts}-", self.glyphs), caption)

    def html(self) -> str:
        return page.page(self.title, self.subtitle,
                         [section.as_page_section() for section in self.sections],
                         draw.glyph_definitions(self.glyphs))


# --- the sections ------------------------------------------------------------------------


def _as_sections(plugin: str, result) -> list[ReportSection]:
    if result is None:
        return []
    items = [result] if isinstance(result, ReportSection) else result
    if not isinstance(items, (list, tuple)) or not all(
            isinstance(item, ReportSection) for item in items):
        raise PluginError(HOOK, plugin, TypeError(
            f"returned {type(result).__name__}; expected a ReportSection, a list of them, "
            "or None"))
    for item in items:
        if not isinstance(item.title, str) or not item.title.strip() or not callable(
                item.render) or isinstance(item.order, bool) or not isinstance(
                item.order, (int, float)):
            raise PluginError(HOOK, plugin, TypeError(
                f"section {item.title!r}: needs a title (text), a callable render and a "
                "number order"))
    return list(items)


def register_builtin_sections(pm) -> None:
    """The report's own sections are a plugin of the same hook, registered the
    first time a report is drawn (as pytest registers its terminal reporter once
    it configures): its module imports what only drawing needs."""
    name = builtin_sections.NAME
    if pm.get_plugin(name) is None:
        pm.register(builtin_sections, name)


def collect_sections(config, data: ReportData,
                     failures: list) -> list[tuple[str, ReportSection]]:
    """``(plugin, section)`` of every implementation, in registration order (the
    built-in sections first); a failing plugin is recorded in ``failures``."""
    found = []
    for plugin, call in implementations(config.pm, HOOK, registration_order=True):
        try:
            found += [(plugin, section) for section in _as_sections(
                plugin, call(config=config, report=data))]
        except (PluginError, UsageError) as exc:
            failures.append(exc)
    builtin = builtin_sections.NAME
    # Stable: the built-in sections first among equal orders, then by registration.
    return sorted(found, key=lambda item: (item[1].order, item[0] != builtin))


def render_sections(config, document: Document, data: ReportData, found,
                    failures: list) -> None:
    for plugin, section in found:
        name = section.anchor or section.title
        anchor = (document.slug(name) if plugin == builtin_sections.NAME
                  else document.slug(plugin, name))
        rendered = RenderedSection(anchor, section.title, plugin)
        out = SectionWriter(document, anchor)
        charts, files = document.charts, len(document.files)
        where = f"{HOOK} (section {section.title!r})"
        try:
            with matplotlib.rc_context(draw.STYLE):
                guarded_for(config.pm, where, plugin, section.render, data, out)
            rendered.blocks = out.finish()
        except (PluginError, UsageError) as exc:
            failures.append(exc)
            rendered.failed = str(exc)
            document.charts, document.files[files:] = charts, []
        document.sections.append(rendered)


def _analysed(reports: list[Report], options: CompareOptions, as_history: bool) -> ReportData:
    """The reports' data; it and the reports live to the end of the drawing, so the
    cycle collector leaves them be from now on (:func:`write` unfreezes them)."""
    gc.disable()
    try:
        return analyse(reports, options, as_history)
    finally:
        gc.freeze()
        gc.enable()


def build(reports: list[Report], options: CompareOptions, config, inline: bool = True,
          chart_format: str = "", as_history: bool = False) -> Document:
    """Every section the reports and the plugins give, drawn (see the module
    docstring); the plugins that failed are in the document's ``failures``."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    data = _analysed(reports, options, as_history)
    labels = ", ".join(r.label for r in reports[:6]) + (
        f" and {len(reports) - 6} more" if len(reports) > 6 else "")
    document = Document("ireebench report",
                        f"{len(reports)} report(s), oldest first: {labels}. Made {now} by "
                        f"ireebench {__version__}.", inline, chart_format)
    register_builtin_sections(config.pm)
    with warnings.catch_warnings():
        # matplotlib's warnings (attributed to its caller, the chart code) name
        # files: nothing a reader of the report can act on.
        warnings.filterwarnings("ignore", category=UserWarning,
                                module=r"(matplotlib|ireebench\.plugins\.report)(\.|$)")
        found = collect_sections(config, data, document.failures)
        render_sections(config, document, data, found, document.failures)
    return document


def write(reports: list[Report], options: CompareOptions, config, html_path: str = "",
          output_dir: str = "", chart_format: str = "svg", flag: str = "o",
          as_history: bool = False) -> Document:
    """Builds the report, then writes each chart to ``output_dir`` (``chart_format``:
    svg or png) and/or the page to ``html_path``. The plugins that failed are in
    the document's ``failures`` (their sections say so): :func:`raise_failures`."""
    try:
        document = build(reports, options, config, inline=bool(html_path),
                         chart_format=chart_format if output_dir else "",
                         as_history=as_history)
    finally:
        gc.unfreeze()  # collectable again (the interpreter's exit frees them)
    if output_dir:
        _write_charts(document, Path(output_dir))
    if html_path:
        write_to(html_path, flag, document.html().encode())
    return document


def raise_failures(document: Document, config) -> None:
    """The first plugin failure of a written report, raised (the others: warnings)."""
    for failure in document.failures[1:]:
        config.stderr.write(f"ireebench: warning: report: {failure}\n")
    if document.failures:
        raise document.failures[0]


def _write_charts(document: Document, directory: Path) -> None:
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--output_dir={directory}: cannot create: "
                         f"{exc.strerror or exc}") from None
    for name, data in document.files:
        write_to(directory / name, "output_dir", data)
