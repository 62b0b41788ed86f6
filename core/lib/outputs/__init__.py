"""A library for a function's outputs, as IREE's tools handle them: the
``--expected_output`` comparison flags (:mod:`.flags`, here), host copies and
printing of results (:mod:`.values`) and their comparison with the expected
values (:mod:`.compare`); the last two import numpy and the IREE runtime.

Used by the ``output_processing`` plugin and by ``ireebench rank``.
"""

from .flags import COMPARISON_FLAGS, DEFAULT_THRESHOLDS, Tolerances, parse_tolerances

__all__ = ["COMPARISON_FLAGS", "DEFAULT_THRESHOLDS", "Tolerances", "parse_tolerances"]
