"""The parts of a report's page: what a section writes into, and what it became.

A section (:class:`ireebench.reporting.ReportSection`, public) is a title,
a place (``order``) and a ``render(report, out)`` function; the plugins
answering ``ireebench_report_sections`` return them (:mod:`.hooks`), the
report's own among them (:mod:`.builtin_sections`).
``render`` receives the report's data (:class:`~.model.ReportData`) and a
:class:`SectionWriter`, which holds the section's blocks: paragraphs,
tables, HTML, and charts, each inlined as SVG with ids no other chart of
the page uses. Nothing here imports matplotlib: the writer's
:meth:`~SectionWriter.figure` comes from the page being drawn.

The built-in sections' places are ``SECTION_ORDER``; a plugin's section
goes where its ``order`` puts it (``order=35``: between the trend and the
sweeps), after the built-in ones of the same order; its default,
``DEFAULT_SECTION_ORDER``, is before the Inputs at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import page


class SectionWriter:
    """What a section's ``render`` writes into, in order (``out``).

    Charts: draw on :meth:`figure` (a matplotlib ``Figure`` in the report's
    style, its width the page's chart width) and hand it to :meth:`chart`;
    or give :meth:`svg` an SVG document of your own. Either way the SVG is
    inlined with every ``id`` prefixed, so no two charts of a page share
    one, and written to ``--output_dir`` as a file of its own. Consecutive
    charts sit side by side.
    """

    def __init__(self, document, anchor: str):
        self._document = document
        self.anchor = anchor
        self.blocks: list[str] = []
        self._row: list[str] = []
        self.charts = document.chart_library  # the report's own charts (builtin_sections)

    # --- text ---------------------------------------------------------------

    def paragraph(self, text: str, css: str = "note") -> None:
        """A paragraph of text (escaped); ``css``: ``note`` (italic), ``meta``."""
        self._add(page.paragraph(text, css))

    def heading(self, text: str, anchor: str = "") -> None:
        self._add(page.heading(text, anchor))

    def table(self, headers: list[str], rows: list[list], numeric=frozenset(),
              names=frozenset(), css: str = "") -> None:
        """A table: cells are text (escaped) unless :class:`~.page.Raw`; ``numeric``
        and ``names``: the indexes of right-aligned and wrapping columns; ``css``:
        ``narrow`` to let its names wrap anywhere (a small screen)."""
        self._add(page.table(headers, rows, set(numeric), set(names), css))

    def details(self, summary: str, html: str) -> None:
        """A ``<details>`` element (closed) holding ``html``."""
        self._add(page.details(summary, html))

    def html(self, markup: str) -> None:
        """HTML as it is. The page stays self-contained only if this names nothing
        outside it (no script, no link, no image from anywhere)."""
        self._add(markup)

    # --- charts -------------------------------------------------------------

    def figure(self, height: float = 3.0, width: float | None = None):
        """A new matplotlib ``Figure`` (inches; the page's chart width by default)."""
        return self._document.new_figure(height, width)

    def chart(self, figure, caption: str, name: str = "") -> None:
        """Adds a matplotlib figure as a chart; ``name`` names its ``--output_dir``
        file (from the caption when empty)."""
        self._row.append(self._document.add_figure(figure, caption, self.anchor,
                                                   name or caption))

    def svg(self, svg: str, caption: str, name: str = "") -> None:
        """Adds an SVG document of your own as a chart (its ids prefixed)."""
        self._row.append(self._document.add_svg(svg, caption, self.anchor, name or caption))

    def add_chart(self, chart) -> None:
        """Adds a chart of the report's chart library (``out.charts``: a
        :class:`~ireebench.plugins.report.charts.Chart`, named by :meth:`slug`)."""
        self._row.append(self._document.add_chart(chart))

    def slug(self, *parts: str) -> str:
        """A name for a chart's ``--output_dir`` file, unique on the page."""
        return self._document.slug(*parts)

    # --- the blocks -----------------------------------------------------------

    def _add(self, block: str) -> None:
        self._flush()
        self.blocks.append(block)

    def _flush(self) -> None:
        if self._row:
            self.blocks.append(page.charts([html for html in self._row if html]))
            self._row = []

    def finish(self) -> list[str]:
        """The section's blocks, the last row of charts included."""
        self._flush()
        return self.blocks


@dataclass
class RenderedSection:
    """A section once drawn: its anchor, title, blocks and who made it."""

    anchor: str
    title: str
    plugin: str
    blocks: list[str] = field(default_factory=list)
    failed: str = ""  # the error, when its render raised

    def as_page_section(self) -> page.Section:
        blocks = list(self.blocks)
        if self.failed:
            blocks = [page.paragraph(f"This section could not be drawn: {self.failed}",
                                     "section-error")]
        return page.Section(self.anchor, self.title, blocks)
