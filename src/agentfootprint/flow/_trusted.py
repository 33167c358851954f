"""Trusted records: what pydantic's ``model_construct`` builds, planned once per model instead of on every call."""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable
from types import GetSetDescriptorType, MemberDescriptorType
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def _copier(default: Any) -> Callable[[], Any]:
    return lambda: copy.deepcopy(default)  # what pydantic does to a mutable default


def trusted(cls: type[M]) -> Callable[..., M]:
    """A constructor for already-valid data, equal to ``cls.model_construct(**values)`` in every field, field order
    and ``model_fields_set`` (an unknown key falls back to ``model_construct`` itself)."""
    fields = cls.__pydantic_fields__
    if cls.__pydantic_post_init__ or cls.__pydantic_root_model__ or cls.model_config.get("extra") == "allow":
        raise TypeError(f"{cls.__name__}: trusted() supports plain models only")
    template: dict[str, Any] = {}
    required: list[str] = []
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, field in fields.items():
        if field.alias not in (None, name) or field.validation_alias is not None:
            raise TypeError(f"{cls.__name__}.{name}: trusted() supports fields without aliases only")
        template[name] = None  # the slot keeps the declared field order
        if field.default_factory is not None:
            if field.default_factory_takes_validated_data:
                raise TypeError(f"{cls.__name__}.{name}: trusted() needs argument-free default factories")
            factories.append((name, field.default_factory))  # type: ignore[arg-type]
        elif field.is_required():
            required.append(name)
        elif isinstance(field.default, _IMMUTABLE):
            template[name] = field.default
        else:
            factories.append((name, _copier(field.default)))
    size = len(template)
    new = cls.__new__
    set_dict, set_fields, set_extra, set_private = _setters(cls)

    def make(**values: Any) -> M:
        data = template.copy()
        data.update(values)
        if len(data) != size:  # a key that is no field: model_construct decides what becomes of it
            return cls.model_construct(**values)
        for name, factory in factories:
            if name not in values:
                data[name] = factory()
        for name in required:
            if name not in values:
                del data[name]
        m = new(cls)
        set_dict(m, data)
        set_fields(m, set(values.keys()))  # grown key by key: sized as pydantic sizes it
        set_extra(m, None)
        set_private(m, None)
        return m

    return make


_new = object.__new__
_set = object.__setattr__


def shape(cls: type[M], fields: tuple[str, ...]) -> Callable[[dict[str, Any]], M]:
    """A builder of plain ``cls`` models from their whole ``__dict__`` (every field, in declared order), given
    ``fields`` (in the order pydantic is given them): what validating already-valid values builds. A frozen model's
    instances share one fields-set (pydantic never grows it: assignment is refused, ``model_copy`` copies it first)."""
    shared = set(fields) if cls.model_config.get("frozen") else None  # grown name by name, as pydantic grows it
    set_dict, set_fields, set_extra, set_private = _setters(cls)

    def build(data: dict[str, Any]) -> M:
        m = _new(cls)
        set_dict(m, data)
        set_fields(m, set(fields) if shared is None else shared)
        set_extra(m, None)
        set_private(m, None)
        return m

    return build


_Setter = Callable[[Any, Any], None]
_SLOT_KINDS = (MemberDescriptorType, GetSetDescriptorType)


def _setters(cls: type[BaseModel]) -> tuple[_Setter, _Setter, _Setter, _Setter]:
    """``object.__setattr__(m, name, value)`` for ``__dict__`` and pydantic's three slots: each through the descriptor
    the class resolves the name to (what that call ends in), without looking it up on every record."""
    return (
        _setter(cls, "__dict__"),
        _setter(cls, "__pydantic_fields_set__"),
        _setter(cls, "__pydantic_extra__"),
        _setter(cls, "__pydantic_private__"),
    )


def _setter(cls: type[BaseModel], name: str) -> _Setter:
    owner = next((klass for klass in cls.__mro__ if name in vars(klass)), None)
    found: Any = vars(owner)[name] if owner is not None else None
    if type(found) in _SLOT_KINDS:
        bound: _Setter = found.__set__
        return bound
    return lambda m, value: _set(m, name, value)  # a name no descriptor holds: the generic path


def inline(cls: type[M], fields: tuple[str, ...]) -> Callable[..., M]:
    """``shape(cls, fields)`` given every field's value positionally (declared order), keeping the values in the
    instance itself: no ``__dict__`` object until something reads it (then the same dict, in the same order). Falls
    back to ``shape`` when the class cannot keep them so (its attribute keys were sized before this ran)."""
    names = tuple(cls.__pydantic_fields__)
    by_dict = shape(cls, fields)
    if not _keeps_inline(cls, names):
        return lambda *values: by_dict(dict(zip(names, values, strict=True)))
    shared = set(fields) if cls.model_config.get("frozen") else None
    params = [f"v{i}" for i in range(len(names))]
    lines = [f"def build({', '.join(params)}):", "    m = _new(cls)"]
    lines += [f"    _set(m, {name!r}, {param})" for name, param in zip(names, params, strict=True)]
    lines += [
        "    set_fields(m, set(fields) if shared is None else shared)",
        "    set_extra(m, None)",
        "    set_private(m, None)",
        "    return m",
    ]
    _, set_fields, set_extra, set_private = _setters(cls)
    space: dict[str, Any] = {"_new": _new, "_set": _set, "cls": cls, "fields": fields, "shared": shared}
    space.update(set_fields=set_fields, set_extra=set_extra, set_private=set_private)
    exec("\n".join(lines), space)  # one straight-line builder per shape: no loop per field on the hot path
    built: Callable[..., M] = space["build"]
    return built


def _keeps_inline(cls: type[BaseModel], names: tuple[str, ...]) -> bool:
    """Store every field once on a probe, in declared order: the class's shared attribute keys then hold them
    all (later instances keep their values inline) unless the keys were already spent."""
    probe = _new(cls)
    marker: list[Any] = []
    for name in names:
        _set(probe, name, marker)
    return not any(type(ref) is dict for ref in gc.get_referents(probe))  # a materialized __dict__ would show


__all__ = ["inline", "shape", "trusted"]
