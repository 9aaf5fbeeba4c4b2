"""core/v1 Event recording with client-go-style aggregation and spam limits."""

from dynamo_operator.internal.events.interface import EventTypeName, Recorder
from dynamo_operator.internal.events.recorder import (
    EventBroadcaster,
    EventRecorder,
    EventType,
    object_reference,
)
from dynamo_operator.internal.events.sink import ApiEventSink, EventSink

__all__ = [
    "ApiEventSink",
    "EventBroadcaster",
    "EventRecorder",
    "EventSink",
    "EventType",
    "EventTypeName",
    "Recorder",
    "object_reference",
]
