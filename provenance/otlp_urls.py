from django.urls import path

from provenance import otlp_views

urlpatterns = [path("", otlp_views.traces, name="otlp-traces")]
