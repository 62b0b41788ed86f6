"""Typed per-run state: ``config.stash[KEY]``, as pytest's ``config.stash``.

A plugin that keeps state for one run declares a module-level key and
stores its object under it in ``ireebench_configure``::

    from ireebench import StashKey

    STATE = StashKey["MyState"]()

    @hookimpl
    def ireebench_configure(config):
        config.stash[STATE] = MyState()

    @hookimpl
    def ireebench_benchmark_result(config, run):
        config.stash[STATE].add(run)

Keys are objects, not strings, so two plugins never collide, and the type
parameter documents what a key holds. The stash lives and dies with the
run's :class:`~ireebench.config.Config`: nothing leaks into the next run of
the Python API.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")
D = TypeVar("D")


class StashKey(Generic[T]):
    """A key of a :class:`Stash`; ``StashKey[MyType]()`` holds a ``MyType``."""

    __slots__ = ()


class Stash:
    """A mapping of :class:`StashKey` to values."""

    __slots__ = ("_storage",)

    def __init__(self) -> None:
        self._storage: dict[StashKey[Any], object] = {}

    def __setitem__(self, key: StashKey[T], value: T) -> None:
        self._storage[key] = value

    def __getitem__(self, key: StashKey[T]) -> T:
        return cast(T, self._storage[key])

    def get(self, key: StashKey[T], default: D) -> T | D:
        return cast("T | D", self._storage.get(key, default))

    def setdefault(self, key: StashKey[T], default: T) -> T:
        return cast(T, self._storage.setdefault(key, default))

    def __delitem__(self, key: StashKey[T]) -> None:
        del self._storage[key]

    def __contains__(self, key: StashKey[T]) -> bool:
        return key in self._storage

    def __len__(self) -> int:
        return len(self._storage)


__all__ = [
    "Stash", "StashKey"
]
