"""Typed records of the JSON files under results/ (run.json, sweep.json) that write back exactly
the keys they were read with.

A field an older file lacks is filled in (a default, or derived from a legacy key) and left out
again on writing; unknown keys are written back as they were. So rewriting an old file changes
only what changed, and its report stays byte for byte the same. Details: docs/output.md, *Old
runs*.
"""

from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any, Callable, ClassVar, Self


@dataclass(frozen=True)
class Recorded:
    """The base of a typed JSON object: its fields are the keys it knows, `extra` the others."""

    extra: dict = field(default_factory=dict, kw_only=True, repr=False)
    filled: dict = field(default_factory=dict, kw_only=True, repr=False, compare=False)  # name -> value filled in

    NESTED: ClassVar[dict[str, type["Recorded"]]] = {}  # field -> class of a nested object (or list of them)
    LEGACY: ClassVar[dict[str, Callable[[dict], Any]]] = {}  # field -> its value in a file that lacks it
    OMIT_NONE: ClassVar[tuple[str, ...]] = ()  # fields written only when set

    @classmethod
    def from_json(cls, data: dict) -> Self:
        known = [f for f in fields(cls) if f.name not in ("extra", "filled")]
        values, filled = {}, {}
        for f in known:
            if f.name in data:
                nested = cls.NESTED.get(f.name)
                raw = data[f.name]
                values[f.name] = _nested(nested, raw) if nested else raw
            else:
                values[f.name] = filled[f.name] = _absent(cls, f, data)
        names = {f.name for f in known}
        return cls(**values, extra={k: v for k, v in data.items() if k not in names}, filled=filled)

    def to_json(self) -> dict:
        """The JSON object, keys sorted as run.json and sweep.json write them."""
        out = dict(self.extra)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("extra", "filled") or (f.name in self.filled and value == self.filled[f.name]):
                continue
            if value is None and f.name in self.OMIT_NONE:
                continue
            out[f.name] = _json(value)
        return dict(sorted(out.items()))

    def but(self, **changes: Any) -> Self:  # field name -> its new value
        """A copy with `changes`; the fields changed are written from now on."""
        return replace(self, **changes)


def _nested(kind: type[Recorded], raw: Any) -> Any:  # JSON in, `kind` (or a list of them) out
    """A nested object, or a list of them, as `kind`."""
    if isinstance(raw, dict):
        return kind.from_json(raw)
    if isinstance(raw, list):
        return [kind.from_json(item) if isinstance(item, dict) else item for item in raw]
    return raw


def _json(value: Any) -> Any:  # a field's value, as JSON
    if isinstance(value, Recorded):
        return value.to_json()
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value


def _absent(cls: type[Recorded], f: Field, data: dict) -> Any:  # the field's default, any type
    if f.name in cls.LEGACY:
        return cls.LEGACY[f.name](data)
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None
