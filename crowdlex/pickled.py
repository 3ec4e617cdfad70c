"""Figures stored in the shared cache pickled as their fields' values alone.

A dataclass pickles by default as its class and a dictionary of its attributes, unpickled by
creating the instance and then filling that dictionary in; the figures the pages keep hold
hundreds of them (the pipeline's rows of 200 targets, each target's kept progress), written after
every submit while a crowd works and read back by each page. Pickled as a call of the class with
its fields' values in order, they are a fifth smaller and quicker to write, and the pipeline's rows
are read back in less than half the time (docs/benchmarks.md, "The first request after a submit,
sixth round"). An entry written before still unpickles as it did: its attributes fill the instance.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Any, TypeVar

C = TypeVar("C", bound=type)


def pickled_by_fields(cls: C) -> C:
    """A dataclass (``@pickled_by_fields`` above ``@dataclass``) pickled as ``cls(*fields)``: each
    field is an argument of its ``__init__``, in the order of its fields. A subclass's instance, whose
    fields may be others, pickles as a dataclass does."""
    names = [each.name for each in dataclasses.fields(cls)]
    assert all(each.init for each in dataclasses.fields(cls)), f"{cls.__name__}: a field its __init__ does not take"
    values = attrgetter(*names)
    single = len(names) == 1

    def __reduce_ex__(self: Any, protocol: Any) -> Any:
        if type(self) is not cls:
            return object.__reduce_ex__(self, protocol)
        found = values(self)
        return cls, ((found,) if single else found)

    cls.__reduce_ex__ = __reduce_ex__  # type: ignore[assignment]
    return cls
