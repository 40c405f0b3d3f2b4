"""Example traces for an alert event: traces with nodes in the event's window
(matching the condition's filters), the most anomalous first. Found once, when
an event is first shown, and kept on the event."""

from django.db.models import Case, F, IntegerField, Value, When

from alerts.models import AlertEvent
from provenance.models import Node
from provenance.vocabulary import FAILED

PER_EVENT = 5
SCANNED_NODES = 200


def find_example_trace_ids(event: AlertEvent) -> list[str]:
    anomalous = FAILED.condition()
    rows = (
        Node.objects.filter(project_id=event.project_id, timestamp__gte=event.window_start, timestamp__lt=event.at,
                            **event.example_filters)
        .annotate(rank=Case(When(anomalous, then=Value(0)), default=Value(1), output_field=IntegerField()))
        .order_by("rank", F("confidence").asc(nulls_last=True), "-timestamp")
        .values_list("trace__trace_id", flat=True)[:SCANNED_NODES]
    )
    found: list[str] = []
    for trace_id in rows:
        if trace_id not in found:
            found.append(trace_id)
            if len(found) == PER_EVENT:
                break
    return found


def with_example_traces(events: list[AlertEvent]) -> list[AlertEvent]:
    missing = [e for e in events if e.example_trace_ids is None]
    for event in missing:
        event.example_trace_ids = find_example_trace_ids(event)
    AlertEvent.objects.bulk_update(missing, ["example_trace_ids"])
    return events
