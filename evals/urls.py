from django.urls import path

from evals import views

app_name = "evals"

urlpatterns = [
    path("p/<slug:slug>/datasets/", views.dataset_list, name="dataset-list"),
    path("p/<slug:slug>/datasets/from-trace", views.truth_from_trace, name="from-trace"),
    path("p/<slug:slug>/datasets/<str:name>/", views.dataset_detail, name="dataset-detail"),
    path("p/<slug:slug>/datasets/<str:name>/export.jsonl", views.dataset_export, name="dataset-export"),
    path("p/<slug:slug>/datasets/<str:name>/import", views.dataset_import, name="dataset-import"),
    path("p/<slug:slug>/datasets/<str:name>/rollback", views.dataset_rollback, name="dataset-rollback"),
    path("p/<slug:slug>/datasets/<str:name>/runs/", views.dataset_runs, name="dataset-runs"),
    path("p/<slug:slug>/runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("p/<slug:slug>/runs/<int:run_id>/compare/", views.run_compare, name="run-compare"),
]
