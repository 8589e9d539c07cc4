"""The Python clients of the eve HTTP session API (`eve-py serve`, or eve's own server).

`Eve1Client` speaks eve 1.0's wire (`/eve/v1`, stream version 27: deliveries, interactions,
facts); `Client` speaks eve 0.80.1's (`/v26/eve/v1`, stream version 26: eve-py's events).

```python
from eve_py.client import Answer, Eve1Client

async with Eve1Client("http://127.0.0.1:8000", token="s3cret") as client:
    session, delivery = await client.create_session("help me pick a template")
    picker = (await delivery.result()).interactions[0]
    answered = await session.respond([Answer(interaction_id=picker.interaction_id, option_id="tpl_blue")])
    print((await answered.result()).reply)
```
"""

from eve_py.client._client import Accepted, Client, RemoteSession, StreamError
from eve_py.client._eve1 import ClientSession, Delivery, Eve1Client
from eve_py.client._eve1_results import Answer, DeliveryResult, Fact, Interaction, InteractionOption

__all__ = (
    "Accepted",
    "Answer",
    "Client",
    "ClientSession",
    "Delivery",
    "DeliveryResult",
    "Eve1Client",
    "Fact",
    "Interaction",
    "InteractionOption",
    "RemoteSession",
    "StreamError",
)
