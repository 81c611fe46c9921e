"""typing.NamedTuple's class syntax without importing typing, for the modules every command loads.

`get-kvcache-num-blocks` runs in shell loops, once per artifact, and its whole process is measured against a
one-line `json.load` (docs/performance.md, row 1). `import typing` is ~15% of that process, and a
`typing.NamedTuple` whose annotations are strings (`from __future__ import annotations`) compiles each of them
into a `ForwardRef`: the first `compile()` of a process builds the `ast` module's types, another ~10%.
Type checkers see `typing.NamedTuple`; at run time the class is `collections.namedtuple`'s, with the same fields,
defaults, methods and docstring. Import it as::

    TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from rbln_artifact_studio.core.records import NamedTuple
"""

from __future__ import annotations

from collections import namedtuple

_NOT_COPIED = frozenset({"__module__", "__qualname__", "__annotations__", "__classcell__", "__orig_bases__"})


class _NamedTupleMeta(type):
    """Turns `class Name(NamedTuple): field: type = default ...` into collections.namedtuple's class."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcls, name, bases, namespace)
        if bases != (NamedTuple,):
            raise TypeError(f"{name}: a NamedTuple takes no other base (subclass the record instead)")
        written = namespace.get("__annotations__", {})
        annotations = dict(written) if isinstance(written, dict) else {}
        fields = list(annotations)
        defaults = [namespace[field] for field in fields if field in namespace]
        if any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        module = str(namespace["__module__"])
        cls = namedtuple(name, fields, defaults=defaults, module=module)  # type: ignore[misc]  # fields known at run time
        cls.__qualname__ = str(namespace.get("__qualname__", name))
        cls.__annotations__ = annotations
        for key, value in namespace.items():
            if key not in _NOT_COPIED and key not in annotations:
                setattr(cls, key, value)
        return cls


class NamedTuple(metaclass=_NamedTupleMeta):
    """The base to write a record class on, as with typing.NamedTuple."""
