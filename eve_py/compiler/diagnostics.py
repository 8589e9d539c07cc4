"""`Diagnostic`: one problem the compiler found, with where, what and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ("Diagnostic",)


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnostic:
    """One compile problem.

    Codes: `E001` no `agent/` folder; `E101` tool file raised while importing (any
    `BaseException`: `SystemExit`, `KeyboardInterrupt` and `CancelledError` too); `E102` no `tool`
    attribute; `E103` export is not a `ToolDefinition`; `E104` no executor on a tool that is not
    client-resolved; `E105` client-resolved tool with an executor; `E106` invalid schema;
    `E107` invalid tool name; `E108` two files give the same tool name; `E109` client-resolved
    tool that needs approval; `E110` a field of the wrong type (description, needs_approval,
    to_model_output); `E111` tool file did not finish importing within the import timeout;
    `E201` bad `agent.py`; `E202` `agent.py` did not finish importing in time; `W101`
    `disable_tool()` for a name that is no framework tool.
    """

    severity: Literal["error", "warning"]
    code: str
    path: str
    """The file, relative to the app's `agent/` folder."""
    message: str
    hint: str | None = None
    """How to fix it."""

    def render(self) -> str:
        """One readable line, plus the hint on a second line when there is one."""
        text = f"{self.path}: {self.severity} {self.code}: {self.message}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text
