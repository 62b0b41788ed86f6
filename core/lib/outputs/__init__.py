"""A library for a function's outputs as IREE's tools handle them (``output_processing``,
``rank``): the comparison flags (:mod:`.flags`, here); with numpy and the runtime, host
copies and printing (:mod:`.values`) and the comparison (:mod:`.compare`)."""

from .flags import COMPARISON_FLAGS, DEFAULT_THRESHOLDS, Tolerances, parse_tolerances

__all__ = ["COMPARISON_FLAGS", "DEFAULT_THRESHOLDS", "Tolerances", "parse_tolerances"]
