"""A jitted function's cache: key -> compiled entry, least recently used first.

The per-call path looks a key up in ``Cache.table`` (an ``OrderedDict``) and moves it to the
end; beyond ``max_entries`` the least recently used key is evicted and counted. Under one key
several entries may live in a ``Chain`` (``specialize`` guards, or state guards that differ:
a frozen and an unfrozen parameter); each answers ``MISS`` when its guards fail.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

from symscalar.backend import Backend
from symscalar.explain import config
from symscalar.trace import ScalarVar, Trace

__all__ = ["CacheInfo", "Entry", "Chain", "Cache", "MISS", "MAX_ENTRIES_PER_KEY"]

MISS = object()  # what an entry answers when its guards fail
MAX_ENTRIES_PER_KEY = 8


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: calls that found an entry, calls that traced, entries."""

    hits: int
    misses: int
    entries: int
    evictions: int = 0  # entries dropped beyond max_entries (least recently used first)
    guards: int = 0  # size guards of the cached entries (see symscalar/size_guards.py)


@dataclasses.dataclass
class Entry:
    """One compiled program: the trace and what runs it."""

    trace: Trace
    run: Callable[..., Any]  # called with the call's tensors and dynamic values
    guards: tuple[tuple[ScalarVar, Any], ...]
    backward_trace: Trace | None = None
    backend: Backend | None = None  # what compiled it (the nvFuser backend remembers its fusions)
    guard: Any = None  # the specialize() guard function (see compile.guard_function), for messages
    size_guards: tuple[Any, ...] = ()  # the size guards its program assumes (size_guards.SizeGuard)


class Chain:
    """Cache value for a key with several entries; the newest entry is tried first."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.last: Entry | None = None

    def __call__(self, *args: Any) -> Any:
        for entry in self.entries:
            out = entry.run(*args)
            if out is not MISS:
                self.last = entry
                return out
        return MISS


class Cache:
    """The table the per-call path reads, and the entries behind it (for inspection)."""

    def __init__(self, max_entries: int | None) -> None:
        self.max_entries = max_entries  # None: config.max_entries, read at each insert
        self.table: collections.OrderedDict[Any, Callable[..., Any]] = collections.OrderedDict()
        self.entries: dict[int, Entry] = {}  # id(entry.run) -> Entry
        self.evictions = 0

    def insert(self, key: Any, value: Any, entry: Entry) -> Callable[..., Any]:
        """Store ``entry`` under ``key`` (where ``value`` is what the key held, or None);
        return the new value of the key."""
        limit = self.max_entries if self.max_entries is not None else config.max_entries
        while key not in self.table and len(self.table) >= limit:
            _, evicted = self.table.popitem(last=False)
            self.evictions += 1
            for run in [e.run for e in evicted.entries] if isinstance(evicted, Chain) else [evicted]:
                self.entries.pop(id(run), None)
        self.entries[id(entry.run)] = entry
        if value is None:
            self.table[key] = entry.run
            return entry.run
        chain = value if isinstance(value, Chain) else Chain()
        if value is not chain:
            chain.entries.append(self.entries[id(value)])
        chain.entries.insert(0, entry)
        # State that changes for good (a KV cache growing each call) must not make every call
        # try every old entry: keep the newest few.
        for old in chain.entries[MAX_ENTRIES_PER_KEY:]:
            self.entries.pop(id(old.run), None)
        del chain.entries[MAX_ENTRIES_PER_KEY:]
        self.table[key] = chain
        self.table.move_to_end(key)  # an existing key keeps its place on assignment
        return chain

    def entries_of(self, value: Any) -> list[Entry]:
        """The entries behind a value of ``table``."""
        if isinstance(value, Chain):
            return list(value.entries)
        found = self.entries.get(id(value))
        return [found] if found is not None else []

    def entry_that_ran(self, value: Any) -> Entry | None:
        """The entry a call that found ``value`` ran last."""
        if isinstance(value, Chain):
            return value.last
        return self.entries.get(id(value))

    def __len__(self) -> int:
        """The number of entries (several may share a key)."""
        return sum(len(v.entries) if isinstance(v, Chain) else 1 for v in self.table.values())

    def clear(self) -> None:
        self.table.clear()
        self.entries.clear()
        self.evictions = 0
