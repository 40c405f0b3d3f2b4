"""Websocket routes of every app, gathered in one list for the ASGI router."""

from provenance.explorer.routing import websocket_urlpatterns as provenance_ws

websocket_urlpatterns = [*provenance_ws]
