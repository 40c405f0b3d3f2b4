from django.urls import path
from django.views.decorators.gzip import gzip_page

from provenance.api import (
    description_views,
    health_views,
    ingest_views,
    project_views,
    root_cause_views,
    trace_views,
)

urlpatterns = [
    path("", description_views.ApiRootView.as_view(), name="api-root"),
    path("schema", gzip_page(description_views.SchemaView.as_view()), name="api-schema"),
    path("docs", description_views.DocsView.as_view(), name="api-docs"),
    path("ingest", ingest_views.IngestView.as_view(), name="api-ingest"),
    path("traces", trace_views.TraceListView.as_view(), name="api-traces"),
    path("root-causes", root_cause_views.RootCausesView.as_view(), name="api-root-causes"),
    path("traces/<path:trace_id>/nodes/<path:product_id>/root-cause", trace_views.RootCauseView.as_view(), name="api-root-cause"),
    path("traces/<path:trace_id>/nodes/<path:product_id>/impact", trace_views.ImpactView.as_view(), name="api-impact"),
    path("traces/<path:trace_id>/nodes/<path:product_id>", trace_views.NodeDetailView.as_view(), name="api-node"),
    path("traces/<path:trace_id>/graph", trace_views.TraceGraphView.as_view(), name="api-trace-graph"),
    path("traces/<path:trace_id>", trace_views.TraceDetailView.as_view(), name="api-trace"),
    path("project", project_views.ProjectView.as_view(), name="api-project"),
    path("health/latest", health_views.LatestHealthView.as_view(), name="api-health-latest"),
]
