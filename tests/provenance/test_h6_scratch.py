import time
from tests.conftest import node_event
from tests.provenance.stored import impact, root_cause

def test_prof(api, ingest):
    total = 5000
    events = [node_event(f"n{i}", "big", parents=[f"n{j}" for j in {i - 1, i // 2} if 0 <= j < i], seconds=i,
                   confidence=0.2 if i == 7 else 0.9) for i in range(total)]
    t=time.perf_counter()
    for start in range(0, total, 1000):
        ingest(*events[start : start + 1000])
    print("ingest", time.perf_counter()-t); t=time.perf_counter()
    root_cause(api, "n4999", "big"); print("rc", time.perf_counter()-t); t=time.perf_counter()
    root_cause(api, "n4999", "big"); print("rc", time.perf_counter()-t); t=time.perf_counter()
    impact(api, "n7", "big"); print("impact", time.perf_counter()-t); t=time.perf_counter()
    api.get("/api/v1/traces/big"); print("trace", time.perf_counter()-t); t=time.perf_counter()
