"""The interface of comparison reporters (``ireebench_compare_reporters``)."""

from __future__ import annotations


class CompareReporter:
    """Base class of the reporters of ``ireebench compare``.

    A plugin returns ``{"name": factory}`` from
    ``ireebench_compare_reporters``; ``--reporter NAME`` (the display, the
    run's stdout) and ``--out_format NAME`` (the ``--out`` file) select one.
    The factory is called as ``factory(stream, config)`` (a subclass of this
    class is such a factory) and :meth:`report` once with the whole
    :class:`~ireebench.comparison.Comparison`.
    """

    def __init__(self, stream, config):
        self.stream = stream
        self.config = config

    def report(self, comparison) -> None:
        """Writes the comparison to ``self.stream``."""
        raise NotImplementedError
