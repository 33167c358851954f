"""Trusted records: what pydantic's ``model_construct`` builds, planned once per model instead of on every call."""

from __future__ import annotations

import copy
from collections.abc import Callable
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
    setattr_ = object.__setattr__

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
        setattr_(m, "__dict__", data)
        setattr_(m, "__pydantic_fields_set__", set(values.keys()))  # grown key by key: sized as pydantic sizes it
        setattr_(m, "__pydantic_extra__", None)
        setattr_(m, "__pydantic_private__", None)
        return m

    return make


_new = object.__new__
_set = object.__setattr__
_SHARED_NAMES: dict[tuple[type[BaseModel], tuple[str, ...]], set[str] | None] = {}


def _names_set(cls: type[BaseModel], fields: tuple[str, ...]) -> set[str]:
    """``fields`` as a set; one set shared by every frozen instance given those names (pydantic never grows a frozen
    model's set: assignment is refused and ``model_copy`` copies the set before updating it)."""
    try:
        shared = _SHARED_NAMES[cls, fields]
    except KeyError:
        shared = _SHARED_NAMES[cls, fields] = set(fields) if cls.model_config.get("frozen") else None
    return set(fields) if shared is None else shared


def built(cls: type[M], data: dict[str, Any], fields: tuple[str, ...]) -> M:
    """A plain model from its whole ``__dict__`` (every field, in declared order) and the names it was given (in the
    order pydantic is given them): what validating those names' values builds, when they are already valid."""
    m = _new(cls)
    _set(m, "__dict__", data)
    _set(m, "__pydantic_fields_set__", _names_set(cls, fields))  # grown name by name, as pydantic grows it
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


__all__ = ["built", "trusted"]
