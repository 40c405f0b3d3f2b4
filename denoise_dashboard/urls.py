from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from alerts.prometheus import views as prometheus_views
from denoise_dashboard.limits.login import throttled

urlpatterns = [
    path("admin/login/", throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("login/", throttled(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("provenance.api.urls")),
    path("api/v1/", include("metrics.api.urls")),
    path("api/v1/", include("alerts.api_urls")),
    path("api/v1/", include("evals.api_urls")),
    path("api/v1/", include("policy.api_urls")),
    path("api/v1/", include("tenancy.audit_urls")),
    path("api/v1/", include("tenancy.key_api")),
    path("v1/traces", include("provenance.ingest.otlp_urls")),
    # Exactly /metrics, no slash: where Prometheus looks. The pages live under /metrics/<project>/.
    path("metrics", prometheus_views.project_metrics, name="prometheus-metrics"),
    path("ops/metrics", prometheus_views.ops_metrics, name="prometheus-ops-metrics"),
    path("metrics/", include("metrics.urls")),
    path("alerts/", include("alerts.urls")),
    path("policy/", include("policy.urls")),
    path("", include("tenancy.people.urls")),
    path("", include("evals.urls")),
    path("", include("tenancy.key_pages")),
    path("", include("provenance.urls")),
]

# JSON errors under /api/ (core/errors.py), the product's own pages elsewhere.
handler400 = "core.errors.bad_request"
handler403 = "core.errors.permission_denied"
handler404 = "denoise_dashboard.error_pages.page_not_found"
# A database failure is an outage (503), anything else the 500 page.
handler500 = "denoise_dashboard.outage.server_error"
