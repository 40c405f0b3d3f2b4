from django.urls import path

from provenance.ingest import otlp_views

urlpatterns = [path("", otlp_views.traces, name="otlp-traces")]
