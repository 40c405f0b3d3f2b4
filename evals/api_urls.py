from django.urls import path

from evals import api_views

urlpatterns = [
    path("datasets", api_views.DatasetListView.as_view(), name="api-datasets"),
    path("datasets/<str:name>", api_views.DatasetDetailView.as_view(), name="api-dataset"),
    path("datasets/<str:name>/items", api_views.DatasetItemsView.as_view(), name="api-dataset-items"),
    path("datasets/<str:name>/items/<path:item_id>", api_views.DatasetItemView.as_view(), name="api-dataset-item"),
    path("datasets/<str:name>/rollback", api_views.DatasetRollbackView.as_view(), name="api-dataset-rollback"),
    path("datasets/<str:name>/recheck", api_views.DatasetRecheckView.as_view(), name="api-dataset-recheck"),
    path("datasets/<str:name>/versions", api_views.DatasetVersionsView.as_view(), name="api-dataset-versions"),
    path("runs", api_views.RunListView.as_view(), name="api-runs"),
    path("runs/<int:run_id>", api_views.RunDetailView.as_view(), name="api-run"),
    path("runs/<int:run_id>/results", api_views.RunResultsView.as_view(), name="api-run-results"),
    path("runs/<int:run_id>/finish", api_views.RunFinishView.as_view(), name="api-run-finish"),
    path("runs/<int:run_id>/compare", api_views.RunCompareView.as_view(), name="api-run-compare"),
]
