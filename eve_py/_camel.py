"""Base class for everything eve-py persists or sends: camelCase JSON, snake_case Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

__all__ = ("CamelModel", "describe_validation_error")

_setattr = object.__setattr__
_new = object.__new__

_Plan = tuple[dict[str, Any], tuple[tuple[str, Any], ...], frozenset[str], frozenset[str]]
_PLANS: dict[type[BaseModel], _Plan] = {}
"""Per class: its fields' static defaults, its default factories, its field names, its required fields."""


def _plan(cls: type[BaseModel]) -> _Plan:
    static: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, field in cls.model_fields.items():
        # Every field has its place, in order (pydantic writes a model's fields in its dict's
        # order): a required field's placeholder is replaced by its value, a factory's by its result.
        static[name] = field.default
        if field.default_factory is not None:
            factories.append((name, field.default_factory))
    required = frozenset(name for name, field in cls.model_fields.items() if field.is_required())
    plan = _PLANS[cls] = (static, tuple(factories), frozenset(cls.model_fields), required)
    return plan


_PLAIN: set[type[BaseModel]] = set()
"""Subclasses that can hold no extra fields and no private attributes: `model_copy` need not look."""


class CamelModel(BaseModel):
    """A frozen pydantic model whose JSON form uses camelCase keys.

    Build it with snake_case names (`InputResponse(request_id=...)`) or validate camelCase
    JSON (`InputResponse.model_validate({"requestId": ...})`).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.model_config.get("extra") != "allow" and not cls.__private_attributes__:
            _PLAIN.add(cls)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's `model_copy`: a shallow copy with `update`'s fields replaced (not validated).

        A model with no extra fields and no private attributes (every model eve-py writes) is
        copied without pydantic's generic steps, which took most of each of the 30 or so copies a
        park + resume cycle makes (records and turns are frozen: each transition is a copy).
        """
        cls = type(self)
        if deep or (
            cls not in _PLAIN and (self.__pydantic_extra__ is not None or self.__pydantic_private__ is not None)
        ):
            return super().model_copy(update=update, deep=deep)
        copied = _new(cls)
        if update:
            _setattr(copied, "__dict__", {**self.__dict__, **update})
            # `union` takes the mapping's keys as they are; `|` with a keys view goes the generic, slower way.
            _setattr(copied, "__pydantic_fields_set__", self.__pydantic_fields_set__.union(update))
        else:
            _setattr(copied, "__dict__", self.__dict__.copy())
            _setattr(copied, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        _setattr(copied, "__pydantic_extra__", None)
        _setattr(copied, "__pydantic_private__", None)
        return copied

    @classmethod
    def trusted(cls, **values: Any) -> Self:
        """A model of values eve-py made or checked already, built without validating them again.

        For data that passed validation on its way in (a call's input, an answer's value, a
        tool's output once it was made JSON): validating a JSON tree again walks it in Python
        (pydantic's `JsonValue` picks each node's type with a Python function), which is most
        of what building such a model costs. Never for data from outside: a request body, a
        model's response, a tool's input as the model sent it. Fields left out get their
        defaults; no validator runs.

        Raises:
            TypeError: A required field is missing, or a name is not a field (a programming error).
        """
        try:
            static, factories, names, required = _PLANS[cls]
        except KeyError:
            static, factories, names, required = _plan(cls)
        given = values.keys()
        if not (given <= names and required <= given):
            missing = sorted(required - given)
            raise TypeError(f"{cls.__name__}.trusted: unknown {sorted(given - names)}, missing {missing}")
        fields = {**static, **values}
        for name, factory in factories:
            if name not in values:
                fields[name] = factory()
        made = _new(cls)
        _setattr(made, "__dict__", fields)
        _setattr(made, "__pydantic_extra__", None)
        _setattr(made, "__pydantic_fields_set__", set(values))
        _setattr(made, "__pydantic_private__", None)
        return made

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON form: camelCase keys, unset optional fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe_validation_error(exc: ValidationError, *, root: str = "(root)") -> str:
    """Every problem pydantic found, as `where: what; where: what` (`root` names the top level)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or root}: {error['msg']}" for error in exc.errors()
    )
