"""The HTML page of a report: one self-contained file that works offline.

No script, no stylesheet, font or image from anywhere: the style is one
``<style>`` element, the charts are ``<svg>`` elements inline (their text
drawn as paths), the fonts of the page's own text are the reader's local
ones (a system font stack, no ``@font-face``), and the table of contents
and the details are plain links and ``<details>`` elements. So the file
opens the same from ``file://``, an e-mail attachment or a CI artifact,
with no network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
       "Liberation Sans", sans-serif; margin: 0 auto; padding: 0 1.2rem 3rem;
       max-width: 1500px; color: #1b1b1b; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; margin: 1.2rem 0 0.2rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.4rem; border-bottom: 1px solid #ddd;
     padding-bottom: 0.2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 0.3rem; word-break: break-all; }
p.meta, p.note { color: #555; margin: 0.2rem 0; }
p.note { font-style: italic; }
nav ul { margin: 0.3rem 0; padding-left: 1.2rem; columns: 2; }
table { border-collapse: collapse; margin: 0.4rem 0 0.8rem; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.15rem 0.45rem; text-align: left;
         vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { overflow-wrap: break-word; max-width: 34rem; }
.narrow td.name { overflow-wrap: anywhere; }
.table { overflow-x: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 0.8rem 1.2rem; }
figure { margin: 0.3rem 0; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 0.85rem; color: #333; margin-bottom: 0.15rem; word-break: break-all; }
.verdict-faster { color: #2e7d32; font-weight: 600; }
.verdict-slower { color: #c62828; font-weight: 600; }
.verdict-inconclusive { color: #a86a00; }
.verdict-cannot { color: #a86a00; font-weight: 600; }
p.headline { font-size: 1.3rem; margin: 0.6rem 0 0.3rem; }
p.lead { font-size: 1rem; margin: 0 0 0.5rem; }
p.section-error { color: #c62828; border: 1px solid #c62828; padding: 0.4rem 0.6rem;
                  background: #fff5f5; }
details { margin: 0.3rem 0 0.6rem; }
summary { cursor: pointer; color: #333; }
"""


@dataclass
class Section:
    """A part of the page: an anchor, a title and its HTML blocks, in order."""

    anchor: str
    title: str
    blocks: list[str] = field(default_factory=list)


def table(headers: list[str], rows: list[list], numeric: set[int] = frozenset(),
          names: set[int] = frozenset(), css: str = "") -> str:
    """An HTML table; cells are text (escaped) unless given as :class:`Raw`; ``css``:
    a class of its own (``narrow``: its names wrap anywhere, to fit a small screen)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for index, cell in enumerate(row):
            kind = " class=\"num\"" if index in numeric else \
                " class=\"name\"" if index in names else ""
            text = cell.html if isinstance(cell, Raw) else escape(str(cell))
            cells.append(f"<td{kind}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class=\"table{' ' + css if css else ''}\"><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def fields(rows: list[tuple[str, str]]) -> str:
    """A table of named values, one per row: its name a header, its value a cell."""
    body = "".join(f"<tr><th>{escape(name)}</th><td>{escape(str(value))}</td></tr>"
                   for name, value in rows)
    return f"<div class=\"table\"><table><tbody>{body}</tbody></table></div>"


@dataclass(frozen=True)
class Raw:
    """HTML that a table cell holds as it is (already escaped)."""

    html: str


def figure(svg: str, caption: str) -> str:
    return f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>"


def charts(figures: list[str]) -> str:
    return f"<div class=\"charts\">{''.join(figures)}</div>"


def paragraph(text: str, css: str = "note") -> str:
    return f"<p class=\"{css}\">{escape(text)}</p>"


def heading(text: str, anchor: str = "") -> str:
    attribute = f" id=\"{escape(anchor)}\"" if anchor else ""
    return f"<h3{attribute}>{escape(text)}</h3>"


def details(summary: str, body: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>{body}</details>"


def page(title: str, subtitle: str, sections: list[Section], definitions: str = "") -> str:
    """The whole document; ``definitions``: what the charts share (their glyphs)."""
    toc = "".join(f"<li><a href=\"#{escape(s.anchor)}\">{escape(s.title)}</a></li>"
                  for s in sections)
    parts = [
        "<!DOCTYPE html>",
        "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        definitions,
        f"<h1>{escape(title)}</h1>",
        f"<p class=\"meta\">{escape(subtitle)}</p>",
        f"<nav><ul>{toc}</ul></nav>",
    ]
    for section in sections:
        parts.append(f"<section id=\"{escape(section.anchor)}\">"
                     f"<h2>{escape(section.title)}</h2>")
        parts.extend(section.blocks)
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
