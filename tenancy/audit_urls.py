from django.urls import path

from tenancy import audit_api

urlpatterns = [
    path("audit", audit_api.AuditLogView.as_view(), name="api-audit"),
]
