"""Base class for everything eve-py persists or sends: camelCase JSON, snake_case Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

__all__ = ("CamelModel", "describe_validation_error")

_setattr = object.__setattr__


class CamelModel(BaseModel):
    """A frozen pydantic model whose JSON form uses camelCase keys.

    Build it with snake_case names (`InputResponse(request_id=...)`) or validate camelCase
    JSON (`InputResponse.model_validate({"requestId": ...})`).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's `model_copy`: a shallow copy with `update`'s fields replaced (not validated).

        A model with no extra fields and no private attributes (every model eve-py writes) is
        copied without pydantic's generic steps, which took most of each of the 30 or so copies a
        park + resume cycle makes (records and turns are frozen: each transition is a copy).
        """
        if deep or self.__pydantic_extra__ is not None or self.__pydantic_private__ is not None:
            return super().model_copy(update=update, deep=deep)
        cls = type(self)
        copied = cls.__new__(cls)
        values = self.__dict__.copy()
        fields_set = set(self.__pydantic_fields_set__)
        if update:
            values.update(update)
            fields_set.update(update)
        _setattr(copied, "__dict__", values)
        _setattr(copied, "__pydantic_extra__", None)
        _setattr(copied, "__pydantic_fields_set__", fields_set)
        _setattr(copied, "__pydantic_private__", None)
        return copied

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON form: camelCase keys, unset optional fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe_validation_error(exc: ValidationError, *, root: str = "(root)") -> str:
    """Every problem pydantic found, as `where: what; where: what` (`root` names the top level)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or root}: {error['msg']}" for error in exc.errors()
    )
