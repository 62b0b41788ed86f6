"""Reports: the reporter interface, the hub that feeds reporters, number formats.

* :mod:`.reporter`: the :class:`Reporter` base class a reporter plugin
  subclasses, and Google Benchmark's context block shared by the console and
  CSV reporters;
* :mod:`.hub`: the :class:`ReportHub` that builds the display and
  ``--benchmark_out`` reporters and sends every row to them;
* :mod:`.humanize`: numbers printed as Google Benchmark prints them.

Public (``__all__``): :class:`Reporter`, :func:`print_basic_context` and
:func:`reported` (the context and every row the run reported, for a plugin
that needs the whole run at its end).
"""

from .hub import reported
from .reporter import Reporter, print_basic_context

__all__ = ["Reporter", "print_basic_context", "reported"]
