"""The HTTP session API and browser chat (install the `server` extra: `pip install 'eve-py[server]'`).

```python
from eve_py.server import create_app

app = create_app(runtime, tokens=["s3cret"])   # a Starlette app; serve it with uvicorn
```

`eve-py serve APP_DIR` does the same from the command line. See `docs/server.md`.
"""

from eve_py.server._app import API_PREFIX, create_app
from eve_py.server._auth import principal_for, tokens_from_env
from eve_py.server._links import hide_answer_tokens
from eve_py.server._owners import MemoryOwners, OwnerStore, SQLiteOwners

__all__ = (
    "API_PREFIX",
    "MemoryOwners",
    "OwnerStore",
    "SQLiteOwners",
    "create_app",
    "hide_answer_tokens",
    "principal_for",
    "tokens_from_env",
)
