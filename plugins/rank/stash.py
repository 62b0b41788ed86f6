"""What a ranking leaves in a run's stash for its workers' hooks.

Its own module because the plugin's top level (loaded by every ``ireebench``
process) reads it in ``ireebench_continue_repetitions`` and must not import
the ranking's command line or measuring modules to get it.
"""

from __future__ import annotations

from ireebench import StashKey

# In a ranking's workers: the time it ranks by (--rank_by), which the
# stopping rule judges (the rank plugin's ireebench_continue_repetitions).
RANKED_METRIC = StashKey[str]()
