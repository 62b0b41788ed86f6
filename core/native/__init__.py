"""The native IREE tools shipped in iree-base-runtime, and how ireebench drives them.

The Python bindings expose neither HAL profiling nor the replay recorder, so
those features run ``iree-benchmark-module`` (and ``iree-profile``,
``iree-benchmark-replay``) as separate processes:

* :mod:`.tools`: finding and running a tool (argument lists, never a shell;
  ``BENCHMARK_*`` variables removed; stdin closed) and reading its failure;
* :mod:`.flags`: the flags that make a native run measure what ireebench
  measured (modules, devices, function, inputs, batches, Google Benchmark's
  measurement flags), derived from the configuration in one place;
* :mod:`.gbench_json`: Google Benchmark's JSON report turned into
  :class:`~ireebench.results.Run` objects and a context;
* :mod:`.backend`: a native tool as a whole measurement backend
  (``--backend=native``, ``ireebench replay``).
"""
