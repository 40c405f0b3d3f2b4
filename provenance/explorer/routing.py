from django.urls import path

from provenance.explorer import consumers

websocket_urlpatterns = [
    path("ws/p/<slug:slug>/traces/", consumers.ProjectConsumer.as_asgi()),
    path("ws/p/<slug:slug>/traces/<path:trace_id>/", consumers.TraceConsumer.as_asgi()),
]
