"""`Record`: plain data classes for the modules a cached `git gasp check` loads.

``dataclasses`` costs a short command more than it saves: importing it loads ``inspect``
(and with it ``ast``, ``dis``, ``tokenize``), and each decorated class is compiled from
generated source when its module loads; on a re-check of a big repository that was about
a quarter of all the instructions the command ran (callgrind). A `Record` subclass
writes its own ``__init__`` and names its fields in `FIELDS` (the ones compared and
shown); `Record` gives it the ``__eq__`` and ``__repr__`` a dataclass would have, and,
like a dataclass that compares by value, no hash.
"""

from __future__ import annotations


class Record:
    """A value compared and shown by the attributes `FIELDS` names."""

    FIELDS: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    __hash__ = None  # type: ignore[assignment] - mutable and compared by value

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{type(self).__qualname__}({inner})"
