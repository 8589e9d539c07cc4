"""The Python client of the eve HTTP session API (`eve-py serve`, or eve's own server).

```python
from eve_py.client import Client

async with Client("http://127.0.0.1:8000", token="s3cret") as client:
    accepted = await client.create_session("help me pick a template")
    result = await client.result(accepted)
```
"""

from eve_py.client._client import Accepted, Client, RemoteSession, StreamError

__all__ = ("Accepted", "Client", "RemoteSession", "StreamError")
