"""Reports: the reporter interface, the hub that feeds reporters, number formats.

* :mod:`.reporter`: the :class:`Reporter` base class a reporter plugin
  subclasses, and Google Benchmark's context block shared by the console and
  CSV reporters;
* :mod:`.hub`: the :class:`ReportHub` that builds the display and
  ``--benchmark_out`` reporters and sends every row to them (imported by
  the run, :mod:`ireebench._runner`);
* :mod:`.reported`: what the run reported so far (:func:`reported`), and
  the reporters plugins provide;
* :mod:`.humanize`: numbers printed as Google Benchmark prints them;
* :mod:`.sections`: :class:`ReportSection`, a section of the HTML report
  (what ``ireebench_report_sections`` returns).

Public (``__all__``): :class:`Reporter`, :func:`print_basic_context`,
:func:`reported` (the context and every row the run reported, for a plugin
that needs the whole run at its end), :class:`ReportSection` and
:data:`SECTION_ORDER` (the places of the report's own sections).
"""

from .reported import reported
from .reporter import Reporter, print_basic_context
from .sections import DEFAULT_SECTION_ORDER, SECTION_ORDER, ReportSection

__all__ = [
           "DEFAULT_SECTION_ORDER",
           "SECTION_ORDER",
           "ReportSection",
           "Reporter",
           "print_basic_context",
           "reported",
]
