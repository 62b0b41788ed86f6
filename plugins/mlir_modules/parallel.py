"""Compiling several modules at once: a thread pool of ``iree-compile`` processes.

Imported by the ``mlir_modules`` plugin only for a run of several points
with distinct ``.mlir`` modules: its thread pool (concurrent.futures, which
imports logging) costs a plain run and ``--help`` nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


def run_all(jobs: dict, workers: int) -> dict:
    """``key -> job()`` for each of ``jobs`` (key -> a callable), at most ``workers``
    at a time; the first exception a job raises is raised (the others cancelled)."""
    pool = ThreadPoolExecutor(min(len(jobs), workers), thread_name_prefix="iree-compile")
    try:
        futures = {key: pool.submit(job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
