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


def shape(cls: type[M], fields: tuple[str, ...]) -> Callable[[dict[str, Any]], M]:
    """A builder of plain ``cls`` models from their whole ``__dict__`` (every field, in declared order), given
    ``fields`` (in the order pydantic is given them): what validating already-valid values builds. A frozen model's
    instances share one fields-set (pydantic never grows it: assignment is refused, ``model_copy`` copies it first)."""
    shared = set(fields) if cls.model_config.get("frozen") else None  # grown name by name, as pydantic grows it

    def build(data: dict[str, Any]) -> M:
        m = _new(cls)
        _set(m, "__dict__", data)
        _set(m, "__pydantic_fields_set__", set(fields) if shared is None else shared)
        _set(m, "__pydantic_extra__", None)
        _set(m, "__pydantic_private__", None)
        return m

    return build


__all__ = ["shape", "trusted"]
