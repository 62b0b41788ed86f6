"""The verdicts of a comparison and the exit statuses they give ``ireebench compare``.

Names only, apart from the statistics that reach them (:mod:`.model`), so
that a reporter (the ``compare`` plugin's, a third party's) knows them
without importing the engine.
"""

from __future__ import annotations

# --metric=auto (the default): CPU time on a synchronous CPU device, real time
# elsewhere (comparison.judgement.choose_metric). Here, not in the model, so that
# the reporters' plugin (loaded by every command) does not import the engine.
AUTO_METRIC = "auto"

FASTER = "faster"
SLOWER = "slower"
NO_CHANGE = "no significant change"
INCONCLUSIVE = "inconclusive"
NOT_COMPARED = "not compared"
CANNOT_JUDGE = "cannot judge"
VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE, NOT_COMPARED, CANNOT_JUDGE)

EXIT_NO_REGRESSION = 0
EXIT_REGRESSION = 1
# A benchmark could not be judged (its detectable change is wider than
# --detectable, or its new run was disturbed): neither a pass nor a
# regression; 2 and 3 are bad input and a plugin error.
EXIT_CANNOT_JUDGE = 4
