"""`stamp`: a turn's event, carrying the delivery ids of the messages that own the turn."""

from __future__ import annotations

from eve_py.events import Event, new_event
from eve_py.events.payloads import EventData
from eve_py.sessions.record import TurnState

__all__ = ("stamp",)


def stamp(turn: TurnState, data: EventData) -> Event:
    """A new event of `turn` (`meta.deliveryIds` = the turn's delivery ids)."""
    return new_event(data, delivery_ids=list(turn.delivery_ids) or None)
