"""`dataclasses.replace` without its per-call field walk, for the pure core's plain dataclasses.

The standard `replace` walks every field, reads each one with getattr and calls the class's
`__init__`, which sets each field again through `object.__setattr__` (the class is frozen):
on All Wound Up's 20-field state that was half of a resume's CPU. A plain dataclass (every
field an `__init__` parameter, no `__post_init__`, no `__slots__`, no ClassVar/InitVar
pseudo-fields) is fully described by its fields, so the copy can take the old instance's
field values and the changes directly. Anything else, or a change naming no field, goes to
`dataclasses.replace`, which behaves (and fails) as it always did.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_PLAIN: dict[type, frozenset[str]] = {}      # class -> its field names; empty: not plain


def _plain_fields(cls: type) -> frozenset[str]:
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or "__slots__" in vars(cls):
        return frozenset()
    fields = dataclasses.fields(cls)
    if len(fields) != len(getattr(cls, "__dataclass_fields__")) or not all(f.init for f in fields):
        return frozenset()
    return frozenset(f.name for f in fields)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes`, as `dataclasses.replace` makes it."""
    cls = type(obj)
    names = _PLAIN.get(cls)
    if names is None:
        names = _PLAIN[cls] = _plain_fields(cls)
    old = obj.__dict__
    if not names or len(old) != len(names) or not changes.keys() <= names:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    new = object.__new__(cls)
    fresh = new.__dict__
    fresh.update(old)
    fresh.update(changes)
    return new


# ---- frozen dataclasses made on first use ----
# `dataclass` compiles each class's methods (`__init__`, `__repr__`, `__eq__`, `__hash__`, the
# frozen `__setattr__`/`__delattr__`) from source text as the class is defined: for core.events'
# two dozen classes that was most of what importing our modules cost the daemon's start-up,
# though few of them are used before the box is READY. `lazy_frozen` defers that work to the
# class's first instance (or `realize_all`, which the box loop's thread runs as it starts, after
# the first frame and beside READY): until then the class has a stand-in `__init__` that makes
# it a dataclass and calls the real one. No instance ever exists before its class is realized,
# so nothing that looks at an instance (equality, hashing, `dataclasses.fields`, `replace`, a
# match) can tell.
#
# Other threads make instances too (the hub HostCommands, a puck reader its events) while the
# loop thread runs `realize_all`: the stand-in stays in place until the class is whole, and is
# then replaced in one assignment by the dataclass's own `__init__`, so a thread either waits
# in the stand-in (on the lock) or gets the real one. (`dataclass` writes no `__init__` over one
# the class has: deleting the stand-in first left a moment with no `__init__` at all, and an
# edge in that moment failed with "takes no arguments".) The `__init__` is compiled on a copy
# of the class, the rest on the class itself with `init=False`.
_LAZY: list[type] = []
_LAZY_LOCK = threading.RLock()
_NOT_COPIED = frozenset({"__init__", "__dict__", "__weakref__"})


def _realize(cls: type) -> None:
    with _LAZY_LOCK:
        if "__dataclass_fields__" in vars(cls):
            return
        copy = type(cls.__name__, (), {k: v for k, v in vars(cls).items() if k not in _NOT_COPIED})
        init = vars(dataclasses.dataclass(frozen=True, repr=False, eq=False)(copy))["__init__"]
        dataclasses.dataclass(frozen=True, init=False)(cls)
        cls.__init__ = init                  # type: ignore[misc]   # the stand-in goes here


@dataclass_transform(frozen_default=True)
def lazy_frozen(cls: type[T]) -> type[T]:
    """`@dataclass(frozen=True)`, made when the class is first instantiated (see above)."""
    def stand_in(self: Any, *args: Any, **kwargs: Any) -> None:
        _realize(cls)
        cls.__init__(self, *args, **kwargs)
    cls.__init__ = stand_in                  # type: ignore[method-assign]
    _LAZY.append(cls)
    return cls


def realize_all() -> int:
    """Make every `lazy_frozen` class a dataclass now (idle time, after start-up); how many."""
    with _LAZY_LOCK:
        pending = [cls for cls in _LAZY if "__dataclass_fields__" not in vars(cls)]
        for cls in pending:
            _realize(cls)
        _LAZY.clear()
        return len(pending)
