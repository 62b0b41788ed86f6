"""Built-in discovery rules, as iree-benchmark-module applies them.

* ``iree.benchmark = "dispatch"`` -> kind ``dispatch``; ``iree.abi.model =
  "coarse-fences"`` -> kind ``async``; anything else -> ``sync``.
* Without ``--function``: dispatch wrappers and ``iree.benchmark = "entry"``
  wrappers always run (the native tool does not filter them); other
  functions run when they need no argument (async: only their wait and
  signal fences) and their name neither starts with ``__`` nor contains
  ``$``.
"""

from ireebench import hookimpl
from ireebench.names import is_internal


@hookimpl(trylast=True)
def ireebench_classify_function(function, kinds):
    if function.attr("iree.benchmark") == "dispatch":
        return "dispatch"
    if function.attr("iree.abi.model") == "coarse-fences":
        return "async"
    return "sync"


@hookimpl(trylast=True)
def ireebench_select_function(function, kind, selected):
    if selected:
        return True
    if kind.name == "dispatch" or function.attr("iree.benchmark") == "entry":
        return True
    if is_internal(function.name):
        return False
    return kind.auto_discover(function)
