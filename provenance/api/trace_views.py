import orjson
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import error_response
from core.params import TimestampField
from provenance.api import shapes
from provenance.dag import reading
from provenance.explorer import pages
from provenance.models import Node, Review, Trace


class TracePagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request):
        # DRF falls back to the default on a bad value; a client that asked for
        # something else should hear that it was not understood.
        raw = request.query_params.get(self.page_size_query_param, "")
        if raw and not (raw.isascii() and raw.isdigit() and int(raw) > 0):
            raise serializers.ValidationError({self.page_size_query_param: "must be a positive integer"})
        return super().get_page_size(request)


class TraceFilterSerializer(serializers.Serializer):
    agent_id = serializers.CharField(required=False, default="")
    step = serializers.CharField(required=False, default="")
    since = TimestampField(required=False)
    until = TimestampField(required=False)
    has_fused = serializers.BooleanField(required=False, allow_null=True, default=None)
    has_low_confidence = serializers.BooleanField(required=False, allow_null=True, default=None)
    verdict = serializers.ChoiceField(choices=["correct", "incorrect"], required=False, default="")
    q = serializers.CharField(required=False, default="")
    # Empty (as absent): every environment.
    environment = serializers.RegexField(r"^[A-Za-z0-9_-]{0,50}$", max_length=50, required=False, default="",
                                         trim_whitespace=False,
                                         error_messages={"invalid": "must be 1 to 50 letters, digits, '-' or '_'"})

    def to_filters(self) -> reading.TraceFilters:
        data = self.validated_data
        return reading.TraceFilters(
            agent_id=data["agent_id"],
            step=data["step"],
            since=data.get("since"),
            until=data.get("until"),
            has_fused=data["has_fused"],
            has_low_confidence=data["has_low_confidence"],
            verdict=data["verdict"],
            search=data["q"],
            environment=data["environment"],
        )


def trace_summary(trace: Trace) -> dict:
    return {
        "trace_id": trace.trace_id,
        "started_at": trace.started_at,
        "ended_at": trace.ended_at,
        "node_count": trace.node_count,
        "min_confidence": trace.min_confidence,
        "fused_count": getattr(trace, "fused_count", None),
        "error_count": trace.error_count,
        "environment": trace.environment,
    }


TRACE_ID = OpenApiParameter("trace_id", str, OpenApiParameter.PATH, description="The client's trace id.",
                            examples=[OpenApiExample("a trace", value="t-1")])
PRODUCT_ID = OpenApiParameter("product_id", str, OpenApiParameter.PATH, description="The node's product id.",
                              examples=[OpenApiExample("its final answer", value="final")])

PAGE_PARAMETERS = [
    OpenApiParameter("page", int, description="1-based page number (past the last page: 404)."),
    OpenApiParameter("page_size", int, description=f"Traces per page (default {TracePagination.page_size}, "
                                                    f"at most {TracePagination.max_page_size})."),
]


class TraceListView(APIView):
    """`GET /api/v1/traces`: newest first, paginated, filterable."""

    @extend_schema(operation_id="traces_list", summary="List traces", parameters=[TraceFilterSerializer, *PAGE_PARAMETERS],
                   responses={200: shapes.TRACE_PAGE}, tags=["traces"])
    def get(self, request):
        params = TraceFilterSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        paginator = TracePagination()
        page = paginator.paginate_queryset(reading.traces(request.user.project, params.to_filters()), request, self)
        return paginator.get_paginated_response([trace_summary(t) for t in reading.with_fused_counts(page)])


def get_trace(request, trace_id: str) -> Trace:
    return get_object_or_404(Trace, project=request.user.project, trace_id=trace_id)


def get_node(request, trace_id: str, product_id: str) -> Node:
    trace = get_trace(request, trace_id)
    node = get_object_or_404(Node, project_id=trace.project_id, trace=trace, product_id=product_id)
    node.trace = trace  # read already: the explorer's answers name it
    return node


# `?view=explorer`: the trace page's answer (the page reads the API with its session).
EXPLORER = "explorer"
VIEW = OpenApiParameter(
    "view", str, enum=[EXPLORER],
    description="`explorer`: the trace page's answer, the same fields and more: colors, page links, "
                "neighbours, why a cause was fused (see the trace explorer in the README).")


def explorer_view(request) -> bool:
    view = request.query_params.get("view", "")
    if view not in ("", EXPLORER):
        raise serializers.ValidationError({"view": f"{EXPLORER}, or leave it out"})
    return view == EXPLORER


def explorer_json(data: dict) -> HttpResponse:
    """The page's answers as they were before DRF: orjson, a 50,000-node graph in milliseconds."""
    return HttpResponse(orjson.dumps(data), content_type="application/json")


GRAPH_PARAMETERS = [
    OpenApiParameter("expand", str, many=True, description="A cluster to draw node by node (repeatable)."),
    OpenApiParameter("reveal", str, many=True, description="A node to draw on its own, never folded (repeatable)."),
    OpenApiParameter("focus", str, description="A node: draw only what lies within `hops` of it."),
    OpenApiParameter("hops", str, description="With `focus`: a whole number from 1 to 10000, or `all` (default)."),
    OpenApiParameter("fold", str, enum=["0", "1"],
                     description="1: fold runs of nodes into clusters; 0: never; default: fold a large trace."),
]


class TraceGraphView(APIView):
    """`GET /api/v1/traces/{trace_id}/graph`: the trace page's drawing."""

    @extend_schema(operation_id="traces_graph", parameters=[TRACE_ID, *GRAPH_PARAMETERS],
                   summary="A trace's graph, laid out", responses={200: shapes.GRAPH}, tags=["traces"])
    def get(self, request, trace_id):
        trace = get_trace(request, trace_id)
        try:
            view = pages.GraphView.from_query(request.query_params)
        except ValueError as error:
            return error_response(str(error), 400, fields={str(error).split(":")[0]: str(error)})
        return explorer_json(pages.graph(request.user.project, trace, view))


class TraceDetailView(APIView):
    """`GET /api/v1/traces/{trace_id}`: the trace's nodes with their parents."""

    @extend_schema(operation_id="traces_retrieve", parameters=[TRACE_ID], summary="A trace and its nodes", responses={200: shapes.TRACE_DETAIL}, tags=["traces"])
    def get(self, request, trace_id):
        trace = get_trace(request, trace_id)
        totals = reading.trace_totals(trace)
        return Response({**trace_summary(trace), "cost_usd": totals["cost_usd"], "tokens": totals["tokens"],
                         "nodes": reading.trace_nodes(trace)})


class NodeDetailView(APIView):
    """`GET /api/v1/traces/{trace_id}/nodes/{product_id}`: one node in full."""

    @extend_schema(operation_id="nodes_retrieve", parameters=[TRACE_ID, PRODUCT_ID, VIEW],
                   summary="One node in full", responses={200: shapes.NODE_DETAIL}, tags=["traces"])
    def get(self, request, trace_id, product_id):
        as_explorer = explorer_view(request)
        node = get_node(request, trace_id, product_id)
        if as_explorer:
            # The contract's fields and the page's; a final answer's reviews include its trace's (`on_trace`).
            return explorer_json(pages.node_detail(request.user.project, node))
        summary = reading.trace_nodes(node.trace, [node.pk])[0]
        reviews = Review.objects.filter(project=node.project_id, trace=node.trace, product_id=node.product_id)
        return Response(
            {
                **summary,
                **reading.node_in_full(node),
                "reviews": [
                    {"verdict": r.verdict, "comment": r.comment, "timestamp": r.timestamp} for r in reviews
                ],
            }
        )


def only(row: dict, *keys: str) -> dict:
    return {key: row[key] for key in keys}


def node_answer(request, trace_id: str, product_id: str, read, contract) -> Response:
    """What the explorer reads about a node (`read(project, node)`), whole for
    the trace page (`?view=explorer`), else in the contract's fields (`contract(answer)`)."""
    as_explorer = explorer_view(request)
    answer = read(request.user.project, get_node(request, trace_id, product_id))
    return explorer_json(answer) if as_explorer else Response(contract(answer))


class RootCauseView(APIView):
    """`GET …/nodes/{product_id}/root-cause`: the page's answer, in the contract's fields."""

    @extend_schema(operation_id="nodes_root_cause", parameters=[TRACE_ID, PRODUCT_ID, VIEW],
                   summary="Why a node went wrong", responses={200: shapes.ROOT_CAUSE}, tags=["traces"])
    def get(self, request, trace_id, product_id):
        return node_answer(request, trace_id, product_id, pages.root_cause, lambda answer: {
            "product_id": answer["product_id"],
            "root_causes": [only(c, "product_id", "reason", "confidence", "trace_id") for c in answer["root_causes"]],
            "path": answer["path"],
        })


class ImpactView(APIView):
    """`GET …/nodes/{product_id}/impact`: every node that consumed it, transitively."""

    @extend_schema(operation_id="nodes_impact", parameters=[TRACE_ID, PRODUCT_ID, VIEW],
                   summary="A node's blast radius", responses={200: shapes.IMPACT}, tags=["traces"])
    def get(self, request, trace_id, product_id):
        return node_answer(request, trace_id, product_id, pages.impact, lambda answer: {
            "product_id": answer["product_id"],
            "descendants": answer["descendants"],
            "nodes": [only(n, "product_id", "trace_id") for n in answer["nodes"]],
        })
