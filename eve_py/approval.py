"""eve 1.0's approval policies for `define_tool(approval=...)` (eve's `eve/tools/approval`).

```python
from eve_py import define_tool
from eve_py.approval import Denied, once

tool = define_tool(description="Refund a charge.", execute=refund, approval=once())
```

`never()` (the default), `always()`, `once()` (ask once per tool and session: an approval covers
the tool's later calls, a later denial replaces it), or a callable `(ApprovalContext) ->
ApprovalStatus`, sync or async, returning `"user-approval"`, `"not-applicable"`, `"approved"`,
`"denied"`, `Denied(reason)`, a bool, or `once()`'s status unchanged. See `docs/hitl.md`.
"""

from eve_py._context import ApprovalContext
from eve_py.authoring._approval import (
    ApprovalPolicy,
    ApprovalStatus,
    Denied,
    RememberedAsk,
    always,
    never,
    once,
)

__all__ = (
    "ApprovalContext",
    "ApprovalPolicy",
    "ApprovalStatus",
    "Denied",
    "RememberedAsk",
    "always",
    "never",
    "once",
)
