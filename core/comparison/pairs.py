"""The pairwise differences of two large samples, with numpy.

The Hodges-Lehmann estimate and Moses' interval (:mod:`.utest`) are order
statistics of the ``m * n`` differences ``new_j - old_i``. Up to
:data:`~.utest.SMALL_PAIRS` pairs plain Python sorts them faster than numpy
is imported; above, numpy's sort of the outer difference is the fast way,
so :mod:`.utest` imports this module only for such samples (thousands of
repetitions, a long history pooled).
"""

from __future__ import annotations

import numpy as np


def sorted_differences(old: list[float], new: list[float]) -> list[float]:
    """The ``m * n`` differences ``new_j - old_i``, sorted."""
    return np.sort(np.subtract.outer(np.asarray(new), np.asarray(old)).ravel()).tolist()
