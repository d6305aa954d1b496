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
from typing import Any, TypeVar

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
