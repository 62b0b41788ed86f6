"""``--goodput``: requests per second that met every service-level objective.

The flag's SLOs (``ttft``, ``tpot``, ``e2e``, any subset; the grammar and
the judgement are :mod:`ireebench.lib.slo`'s) are parsed at
``ireebench_configure`` and kept under the stash key ``ireebench.lib.slo.SLOS``,
where the plugins whose rows are requests read them: the ``llm`` kind's rows
(each generation a request) and the Server scenario's (each query). Other
rows have no requests and ignore it.
docs/serving.md, "Goodput".
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.backend import PLUGIN_KINDS
from ireebench.lib import slo


@hookimpl
def ireebench_addoption(parser):
    parser.addoption(
        "--goodput", "goodput", default="", metavar="NAME:TIME,...", requires=PLUGIN_KINDS,
        help=f"Service-level objectives ({', '.join(slo.NAMES)}; e.g. {slo.EXAMPLE}): the LLM "
             "kind's and the Server scenario's rows add goodput, the requests per second "
             "that met every one given.")


@hookimpl
def ireebench_configure(config):
    text = config.getoption("goodput")
    if text:
        config.stash[slo.SLOS] = slo.parse(text)
