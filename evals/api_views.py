"""`/api/v1/datasets` and `/api/v1/runs`: parse, call the domain modules, answer.

Every lookup is scoped to the key's project: another project's dataset or run
answers 404, as if it did not exist.
"""

import orjson
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import error_response, json_errors
from core.openapi import array, ref
from core.paging import PAGE_PARAMETERS, int_param, page
from evals import api_json, comparison, datasets, drift, jsonl, runs, validation
from evals import api_shapes as shapes
from evals.models import Dataset, DatasetVersion, Run
from evals.validation import Invalid
from tenancy.colocation import same_project
from tenancy.scopes import AGENT_READS, AGENT_WRITES

CONFLICT = ref("Error")


def evals_schema(operation_id: str, summary: str, **kwargs):
    return extend_schema(operation_id=operation_id, summary=summary, tags=["evaluation"], **kwargs)


def not_found(what: str) -> Response:
    return error_response(f"{what} not found", status.HTTP_404_NOT_FOUND)


class EvalApiView(APIView):
    renderer_classes = [JSONRenderer, jsonl.JSONLinesRenderer]

    def perform_content_negotiation(self, request, force=False):
        # `?format=jsonl` asks for JSON Lines out of a GET; a POST with it sends
        # JSON Lines in (see item_values) and is answered in JSON.
        if request.method != "GET":
            return JSONRenderer(), JSONRenderer.media_type
        return super().perform_content_negotiation(request, force)

    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:
            json_errors(request)  # errors keep the API's one JSON shape, even under ?format=jsonl
        return super().finalize_response(request, response, *args, **kwargs)

    def dataset(self, name: str) -> Dataset:
        found = Dataset.objects.select_related("project").filter(project=self.request.user.project, name=name).first()
        if found is None:
            raise Http404(f"dataset {name!r} not found")
        return found

    def run(self, run_id) -> Run:
        found = Run.objects.select_related("dataset", "project").filter(
            same_project("dataset"), project=self.request.user.project, id=run_id).first()
        if found is None:
            raise Http404(f"run {run_id} not found")
        return found


class DatasetListView(EvalApiView):
    ingest_methods = AGENT_READS

    @evals_schema("datasets_list", "List truth sets", parameters=PAGE_PARAMETERS,
                  responses={200: array(shapes.DATASET_LISTED)})
    def get(self, request):
        found, headers = page(request, Dataset.objects.filter(project=request.user.project).order_by("name"))
        return Response(api_json.datasets_json(found), headers=headers)

    @evals_schema("datasets_create", "Create a truth set", request={"application/json": shapes.DATASET_CREATE},
                  responses={201: shapes.DATASET, 409: CONFLICT})
    def post(self, request):
        data = request.data
        if not isinstance(data, dict):
            raise Invalid("name", 'the body must be a JSON object {"name": ..., "description": ...}')
        name = validation.dataset_name(data.get("name"))
        description = validation.text(data.get("description"), "description")
        dataset = datasets.create_dataset(request.user.project, name, description, request.user)
        return Response(api_json.dataset_json(dataset, 0), status=status.HTTP_201_CREATED)


class DatasetDetailView(EvalApiView):
    ingest_methods = AGENT_READS

    @evals_schema("datasets_retrieve", "A truth set's items at its newest (or a given) version",
                  parameters=[OpenApiParameter("version", OpenApiTypes.INT, description="Default: the newest.")],
                  responses={200: shapes.DATASET_DETAIL})
    def get(self, request, name):
        dataset = self.dataset(name)
        version = int_param(request, "version", dataset.version)
        if version > dataset.version:
            return not_found(f"version {version} of {name!r} (the newest is {dataset.version})")
        items = [api_json.item_json(row) for row in datasets.items_at(dataset, version).order_by("item_id")]
        if request.accepted_renderer.format == "jsonl":
            response = Response(items)
            response["Content-Disposition"] = f'attachment; filename="{dataset.name}-v{version}.jsonl"'
            return response
        return Response({**api_json.dataset_json(dataset, len(items)), "version": version,
                         "newest_version": dataset.version, "items": items})


def item_values(request) -> list:
    """The items of a POST: `{"items": [...]}` as JSON, or one ITEM per line
    with `?format=jsonl` (or an application/x-ndjson body)."""
    content_type = request.content_type.split(";")[0].strip()
    if request.query_params.get("format") == "jsonl" or content_type == jsonl.MEDIA_TYPE:
        return jsonl.parse(request.body)
    return validation.batch(request.data, "items")


class DatasetItemsView(EvalApiView):
    @evals_schema("datasets_items_add", "Add or replace items (a new version)",
                  description="A bad item is a 400 naming it (`items[3].expected: ...`) and nothing is stored. "
                              "`?format=jsonl` (or an application/x-ndjson body) takes one ITEM per line; "
                              "`?replace=1` removes the items not sent.",
                  parameters=[OpenApiParameter("replace", OpenApiTypes.STR,
                                               description="`1`, `true` or `yes`: remove the items not sent.")],
                  request={"application/json": shapes.ITEMS_REQUEST}, responses={200: shapes.CHANGE})
    def post(self, request, name):
        dataset = self.dataset(name)
        imported = request.query_params.get("format") == "jsonl"
        items = validation.items(item_values(request))
        replace = request.query_params.get("replace") in ("1", "true", "yes")
        change = datasets.apply_items(dataset, items, remove_others=replace, action="import" if imported else "items",
                                      note=f"{len(items)} items" + (" (import)" if imported else ""), actor=request.user)
        return Response(change.as_json())


class DatasetItemView(EvalApiView):
    @evals_schema("datasets_items_delete", "Remove one item (a new version)", responses={200: shapes.CHANGE})
    def delete(self, request, name, item_id):
        dataset = self.dataset(name)
        return Response(datasets.delete_item(dataset, item_id, request.user).as_json())


class DatasetRollbackView(EvalApiView):
    @evals_schema("datasets_rollback", "A new version equal to an old one", request={"application/json": shapes.ROLLBACK_REQUEST},
                  responses={200: shapes.CHANGE})
    def post(self, request, name):
        dataset = self.dataset(name)
        version = request.data.get("version") if isinstance(request.data, dict) else None
        if isinstance(version, bool) or not isinstance(version, int):
            raise Invalid("version", "required: the version number to roll back to")
        return Response(datasets.rollback(dataset, version, request.user).as_json())


class DatasetRecheckView(EvalApiView):
    @evals_schema("datasets_recheck", "Mark items whose true value moved (truth drift)",
                  request={"application/json": shapes.RECHECK_REQUEST}, responses={200: shapes.RECHECK})
    def post(self, request, name):
        dataset = self.dataset(name)
        values = validation.batch(request.data, "values")
        parsed = [validation.recheck_value(value, f"values[{index}]") for index, value in enumerate(values)]
        drifted = drift.recheck(dataset, parsed)
        return Response({"drifted": drifted, "checked": len(parsed)})


class DatasetVersionsView(EvalApiView):
    ingest_methods = AGENT_READS

    @evals_schema("datasets_versions", "A truth set's versions, newest first", parameters=PAGE_PARAMETERS,
                  responses={200: array(shapes.VERSION)})
    def get(self, request, name):
        dataset = self.dataset(name)
        found, headers = page(request, DatasetVersion.objects.filter(project_id=dataset.project_id, dataset=dataset).order_by("-number"))
        return Response([
            {"version": v.number, "created_at": v.created_at, "action": v.action, "note": v.note,
             "created": v.created, "updated": v.updated, "deleted": v.deleted, "item_count": v.item_count}
            for v in found
        ], headers=headers)


class RunListView(EvalApiView):
    ingest_methods = AGENT_WRITES

    @evals_schema("runs_list", "Evaluation runs, newest first",
                  parameters=[OpenApiParameter("dataset", OpenApiTypes.STR, description="Only this truth set's."),
                              *PAGE_PARAMETERS],
                  responses={200: array(shapes.RUN_LISTED)})
    def get(self, request):
        name = request.query_params.get("dataset")
        if name:
            queryset = runs.runs_of(self.dataset(name))
        else:
            queryset = Run.objects.filter(same_project("dataset"), project=request.user.project).select_related(
                "dataset").order_by(
                "-created_at", "-pk")
        found, headers = page(request, queryset)
        return Response(api_json.runs_json(found), headers=headers)

    @evals_schema("runs_create", "Open a run over a truth set version", request={"application/json": shapes.RUN_CREATE},
                  responses={201: shapes.RUN})
    def post(self, request):
        data = request.data
        if not isinstance(data, dict):
            raise Invalid("dataset", 'the body must be a JSON object {"dataset": ..., "name": ...}')
        name = data.get("dataset")
        if not isinstance(name, str) or not name:
            raise Invalid("dataset", "required: the dataset's name")
        dataset = self.dataset(name)
        version = data.get("dataset_version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise Invalid("dataset_version", "must be an integer")
        metadata = data.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise Invalid("metadata", "must be an object")
        run = runs.open_run(request.user.project, dataset, version, validation.text(data.get("name"), "name", 200),
                            validation.finite_json(metadata, "metadata"))
        return Response(api_json.run_json(run), status=status.HTTP_201_CREATED)


def summary_response(run: Run) -> HttpResponse:
    """The summary written by orjson around the stored JSON text of every
    expected and actual value: a 10,000-result run is answered without
    decoding and re-encoding 20,000 JSON values."""
    body = orjson.dumps(api_json.summary_json(run, raw=True), option=orjson.OPT_UTC_Z)
    return HttpResponse(body, content_type="application/json")


class RunDetailView(EvalApiView):
    @evals_schema("runs_retrieve", "A run: figures, per-tag accuracy and every result",
                  responses={200: shapes.RUN_DETAIL})
    def get(self, request, run_id):
        return summary_response(self.run(run_id))


class RunResultsView(EvalApiView):
    ingest_methods = AGENT_WRITES

    @evals_schema("runs_results", "Send results; each is judged on its own (207)", request={"application/json": shapes.RESULTS_REQUEST},
                  responses={207: array(shapes.RESULT_ENTRY), 409: CONFLICT})
    def post(self, request, run_id):
        run = self.run(run_id)
        values = validation.batch(request.data, "results")
        answers = runs.post_results(run, values)
        return Response([a.as_json() for a in answers], status=status.HTTP_207_MULTI_STATUS)


class RunFinishView(EvalApiView):
    ingest_methods = AGENT_WRITES

    @evals_schema("runs_finish", "Close a run", request=None, responses={200: shapes.RUN_DETAIL})
    def post(self, request, run_id):
        return summary_response(runs.finish(self.run(run_id)))


class RunCompareView(EvalApiView):
    @evals_schema("runs_compare", "What got fixed and broken against another run",
                  parameters=[OpenApiParameter("to", OpenApiTypes.INT, required=True,
                                               description="The other run (same truth set).")],
                  responses={200: shapes.COMPARISON})
    def get(self, request, run_id):
        run = self.run(run_id)
        other_id = int_param(request, "to", minimum=1)
        if other_id is None:
            raise Invalid("to", "required: the id of the run to compare with")
        other = self.run(other_id)
        if other.dataset_id != run.dataset_id:
            raise Invalid("to", f"run {other.pk} is of dataset {other.dataset.name!r}, not {run.dataset.name!r}")
        return Response(comparison.compare(run, other))
