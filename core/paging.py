"""How the API pages a list answer: `?limit=&offset=`, the next page in a
`Link` header, so the body stays the plain list the contract shows."""

from urllib.parse import urlencode

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from core.errors import ApiError
from core.params import LARGEST_INT, whole_number

DEFAULT_PAGE = 100
MAX_PAGE = 1000
PAGE_PARAMETERS = [
    OpenApiParameter("limit", OpenApiTypes.INT, description=f"At most this many (default {DEFAULT_PAGE}, "
                                                              f"at most {MAX_PAGE}); the next page is in `Link`."),
    OpenApiParameter("offset", OpenApiTypes.INT, description="Skip this many."),
]


def int_param(request, name: str, default=None, minimum: int = 0, maximum: int | None = None):
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        return whole_number(raw, minimum, LARGEST_INT if maximum is None else maximum)
    except ValueError as error:
        raise ApiError(f"{name}: must be {error}", fields={name: f"must be {error}"}) from None


def page(request, queryset) -> tuple[list, dict]:
    """One page of `queryset` and the headers that point to the next one."""
    limit = int_param(request, "limit", DEFAULT_PAGE, 1, MAX_PAGE)
    offset = int_param(request, "offset", 0, maximum=10**9)
    rows = list(queryset[offset: offset + limit + 1])
    headers = {}
    if len(rows) > limit:
        rows = rows[:limit]
        query = {**request.query_params.dict(), "limit": limit, "offset": offset + limit}
        headers["Link"] = f'<{request.build_absolute_uri(request.path)}?{urlencode(query)}>; rel="next"'
    return rows, headers
