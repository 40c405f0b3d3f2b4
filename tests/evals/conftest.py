"""Truth sets and runs made through the HTTP API, as a script or the SDK would."""

import pytest


@pytest.fixture
def dataset(api):
    def create(name: str = "ticket-stats", items=(), client=None) -> dict:
        client = client or api
        response = client.post("/api/v1/datasets", {"name": name, "description": "from a test"}, format="json")
        assert response.status_code == 201, response.content
        if items:
            response = client.post(f"/api/v1/datasets/{name}/items", {"items": list(items)}, format="json")
            assert response.status_code == 200, response.content
        return response.json()

    return create


@pytest.fixture
def run(api):
    """Opens a run, posts its results (item_id → actual, or a RESULT dict), finishes it unless told not to."""

    def make(dataset: str = "ticket-stats", results=None, *, finish: bool = True, client=None, **fields) -> dict:
        client = client or api
        response = client.post("/api/v1/runs", {"dataset": dataset, **fields}, format="json")
        assert response.status_code == 201, response.content
        run_id = response.json()["id"]
        if results:
            body = [r if isinstance(r, dict) else {"item_id": r[0], "actual": r[1]}
                    for r in (results.items() if isinstance(results, dict) else results)]
            response = client.post(f"/api/v1/runs/{run_id}/results", {"results": body}, format="json")
            assert response.status_code == 207, response.content
        if finish:
            assert client.post(f"/api/v1/runs/{run_id}/finish").status_code == 200
        return client.get(f"/api/v1/runs/{run_id}").json()

    return make
