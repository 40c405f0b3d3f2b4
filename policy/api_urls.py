from django.urls import path

from policy import api_views

urlpatterns = [
    path("policy", api_views.PolicyView.as_view(), name="api-policy"),
    path("policy/versions", api_views.PolicyVersionsView.as_view(), name="api-policy-versions"),
    path("policy/rollback", api_views.PolicyRollbackView.as_view(), name="api-policy-rollback"),
]
