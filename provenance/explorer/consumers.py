"""Live updates for the trace explorer over websockets.

Ingest publishes ids to the channel layer after commit (`provenance.explorer.live`);
these consumers turn them into what an open page shows. A connection is only
accepted for a signed-in user who may see the project (members; staff see all)
and, for a trace, only for a trace of that project; foreign origins are refused
earlier, in the ASGI router.
"""

import asyncio

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from provenance.dag import reading
from provenance.explorer import live, pages, reads
from tenancy.membership import projects_for

REFUSED = 4403


def visible_project(user, slug: str):
    if user is None:
        return None
    return projects_for(user).filter(slug=slug).first()


class ScopedConsumer(AsyncJsonWebsocketConsumer):
    """Joins one group once `find()` allows the connection; refuses otherwise."""

    group: str | None = None

    async def connect(self):
        kwargs = self.scope["url_route"]["kwargs"]
        found = await database_sync_to_async(self.find)(self.scope.get("user"), **kwargs)
        if found is None:
            await self.close(code=REFUSED)
            return
        self.group = self.group_for(found)
        live.listening_on(asyncio.get_running_loop())
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        """The pages only listen."""


class TraceConsumer(ScopedConsumer):
    """`ws/p/<slug>/traces/<trace_id>/`: new nodes of one trace."""

    def find(self, user, slug, trace_id):
        self.trace = reads.visible_trace(user, slug, trace_id) if user is not None else None
        return self.trace

    def group_for(self, trace):
        return live.trace_group(trace.pk)

    def header(self) -> dict | None:
        rows = pages.trace_rows(self.trace.project, [self.trace.pk])
        if not rows:
            return None
        # The header's Verdict is the trace's latest review, whichever node it is about.
        return {**rows[0], "verdict": reading.latest_verdict(self.trace)}

    async def send_with_header(self, message: dict) -> None:
        # The header's figures come along, so the page shows them as the news arrives.
        header = await database_sync_to_async(self.header)()
        if header is not None:
            message["trace"] = header
        await self.send_json(message)

    async def nodes_added(self, event):
        # The group is this trace's own, so the ids need no further scoping.
        await self.send_with_header({"type": "nodes.added", "nodes": event["product_ids"]})

    async def trace_changed(self, event):
        """A review, fuse or escalation about nodes already shown."""
        await self.send_with_header({"type": "trace.changed"})


class ProjectConsumer(ScopedConsumer):
    """`ws/p/<slug>/traces/`: new and changed traces of one project, as list rows."""

    def find(self, user, slug):
        self.project = visible_project(user, slug)
        return self.project

    def group_for(self, project):
        return live.project_group(project.pk)

    async def traces_changed(self, event):
        rows = await database_sync_to_async(pages.trace_rows)(self.project, event["traces"])
        if rows:
            await self.send_json({"type": "traces.changed", "traces": rows})
