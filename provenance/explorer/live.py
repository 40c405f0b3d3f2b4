"""Pushes ingest news to open pages over the channel layer.

Called from `transaction.on_commit`, so a page is only told about rows it can
read. Messages carry ids; consumers load what they show.

Publishing must not slow ingest down: with the in-memory layer (embedded
default) only groups that someone is listening to are sent to; with Redis the
messages are handed to one long-lived publisher thread and the request returns
at once.

Neither crosses from the request's thread into the event loop with
`async_to_sync`: that bridge belongs to the request, and a client that goes
away mid-request has Django cancel it while the view's thread runs on, so the
on_commit publish then found its executor gone ("CurrentThreadExecutor already
quit or is broken"). The in-memory layer's sends are handed to the serving
loop as a task of its own instead.
"""

import asyncio
import logging
import queue
import threading

from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)


def trace_group(trace_pk: int) -> str:
    return f"trace-{trace_pk}"


def project_group(project_pk: int) -> str:
    return f"project-{project_pk}"


def publish_ingest(project_pk: int, new_nodes_by_trace: dict[int, list[str]], touched_traces: list[int]) -> None:
    """`new_nodes_by_trace`: trace pk -> product ids of the nodes just stored."""
    layer = get_channel_layer()
    if layer is None:
        return
    messages = [
        (trace_group(trace_pk), {"type": "nodes.added", "trace": trace_pk, "product_ids": product_ids})
        for trace_pk, product_ids in new_nodes_by_trace.items()
    ]
    # A review or a fuse about nodes a page already has changes its header and graph too.
    messages += [
        (trace_group(trace_pk), {"type": "trace.changed", "trace": trace_pk})
        for trace_pk in touched_traces if trace_pk not in new_nodes_by_trace
    ]
    messages.append((project_group(project_pk), {"type": "traces.changed", "traces": touched_traces}))
    if isinstance(layer, InMemoryChannelLayer):
        # In-process layer: its queues belong to the serving event loop, so send from it.
        listened = [(group, message) for group, message in messages if layer.groups.get(group)]
        if listened and _serving_loop is not None:
            _serving_loop.call_soon_threadsafe(_serving_loop.create_task, _send_all(layer, listened))
        return
    _publisher().put((layer, messages))


# The loop the in-memory layer's listeners wait on: a consumer records it when
# it joins a group, so nothing is listened to before it is known.
_serving_loop: asyncio.AbstractEventLoop | None = None


def listening_on(loop: asyncio.AbstractEventLoop) -> None:
    global _serving_loop
    _serving_loop = loop


async def _send_all(layer, messages) -> None:
    try:
        for group, message in messages:
            await layer.group_send(group, message)
    except Exception:
        # Live updates are a convenience; the data is committed whatever happens here.
        logger.warning("live update failed", exc_info=True)


class _Publisher(threading.Thread):
    def __init__(self):
        super().__init__(name="live-publisher", daemon=True)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()

    def put(self, item) -> None:
        self.inbox.put(item)

    def run(self) -> None:
        loop = asyncio.new_event_loop()
        while True:
            layer, messages = self.inbox.get()
            try:
                for group, message in messages:
                    loop.run_until_complete(layer.group_send(group, message))
            except Exception:
                logger.warning("live update failed", exc_info=True)


_publisher_lock = threading.Lock()
_publisher_thread: _Publisher | None = None


def _publisher() -> _Publisher:
    global _publisher_thread
    with _publisher_lock:
        if _publisher_thread is None or not _publisher_thread.is_alive():
            _publisher_thread = _Publisher()
            _publisher_thread.start()
        return _publisher_thread
