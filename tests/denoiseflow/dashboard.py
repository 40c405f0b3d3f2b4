"""What the dashboard's read API shows, in the shape SDK and OTLP tests check."""


def nodes_of(api, trace_id: str, key: str = "product_id") -> dict[str, dict]:
    """The trace's nodes by product id (or another field), via GET /api/v1/traces/{id}."""
    response = api.get(f"/api/v1/traces/{trace_id}")
    assert response.status_code == 200, response.content
    return {n[key]: n for n in response.json()["nodes"]}
