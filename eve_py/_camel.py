"""Base class for everything eve-py persists or sends: camelCase JSON, snake_case Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

__all__ = ("CamelModel", "describe_validation_error")


class CamelModel(BaseModel):
    """A frozen pydantic model whose JSON form uses camelCase keys.

    Build it with snake_case names (`InputResponse(request_id=...)`) or validate camelCase
    JSON (`InputResponse.model_validate({"requestId": ...})`).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON form: camelCase keys, unset optional fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe_validation_error(exc: ValidationError, *, root: str = "(root)") -> str:
    """Every problem pydantic found, as `where: what; where: what` (`root` names the top level)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or root}: {error['msg']}" for error in exc.errors()
    )
