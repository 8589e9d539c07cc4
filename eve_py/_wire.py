"""Base class for everything eve-py persists or sends: camelCase JSON, snake_case Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ("WireModel",)


class WireModel(BaseModel):
    """A frozen pydantic model whose JSON form uses camelCase keys.

    Build it with snake_case names (`InputResponse(request_id=...)`) or validate camelCase
    JSON (`InputResponse.model_validate({"requestId": ...})`).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON form: camelCase keys, unset optional fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
