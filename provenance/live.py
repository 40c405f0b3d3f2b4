"""Pushes ingest news to open pages over the channel layer.

Called from `transaction.on_commit`, so a page is only told about rows it can
read. Messages carry ids; consumers load what they show.
"""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def trace_group(trace_pk: int) -> str:
    return f"trace-{trace_pk}"


def project_group(project_pk: int) -> str:
    return f"project-{project_pk}"


def publish_ingest(project_pk: int, new_nodes_by_trace: dict[int, list[int]], touched_traces: list[int]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        send = async_to_sync(layer.group_send)
        for trace_pk, node_ids in new_nodes_by_trace.items():
            send(trace_group(trace_pk), {"type": "nodes.added", "trace": trace_pk, "nodes": node_ids})
        send(project_group(project_pk), {"type": "traces.changed", "traces": touched_traces})
    except Exception:
        # Live updates are a convenience; the data is committed whatever happens here.
        logger.warning("live update failed", exc_info=True)
