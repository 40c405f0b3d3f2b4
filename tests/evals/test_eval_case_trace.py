"""The trace of an evaluation case shows the run's verdict and the expected
answer; a failed case's "why is this wrong? →" opens its trace with the root
cause already shown (`?analyze=`)."""

import re

import pytest

from tests.support.events import fuse_event, node_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(api, ingest, dataset, run):
    dataset(items=[{"id": "q-1", "input": {"n": 1}, "expected": 10}, {"id": "q-2", "input": {"n": 2}, "expected": 20}])
    ingest(node_event("q1-in", "case-1"), node_event("q1-final", "case-1", parents=["q1-in"], seconds=1,
                                                        source_type="final_answer", content="10"),
           node_event("q2-frag", "case-2", confidence=0.2), fuse_event("q2-frag", trace_id="case-2"),
           node_event("q2-final", "case-2", parents=["q2-frag"], seconds=1, source_type="final_answer",
                      content="27"))
    return run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "case-1", "product_id": "q1-final"},
                        {"item_id": "q-2", "actual": 27, "trace_id": "case-2", "product_id": "q2-final"}],
               name="prompt-v9")


def test_an_eval_cases_trace_shows_the_runs_verdict_and_expected_answer(member, judged):
    failed = member.get("/p/acme/traces/case-2/").content.decode()
    case = failed.split('id="eval-case" data-passed="false">')[1].split('<div class="explorer"')[0]
    assert "prompt-v9" in case and "failed" in case
    assert re.search(r'id="eval-expected">20<', case) and re.search(r'id="eval-actual">27<', case)
    passed = member.get("/p/acme/traces/case-1/").content.decode()
    assert 'data-passed="true"' in passed and 'id="eval-expected">10<' in passed



def test_a_trace_of_no_eval_case_shows_no_verdict_card(member, ingest, judged):
    ingest(node_event("x", "plain"), node_event("y", "plain", parents=["x"]))
    assert 'id="eval-case"' not in member.get("/p/acme/traces/plain/").content.decode()


def test_a_failed_cases_link_opens_its_trace_with_the_analysis(member, judged):
    page = member.get(f"/p/acme/runs/{judged['id']}/").content.decode()
    links = dict((text, href) for href, text in re.findall(r'<a class="trace-link" href="([^"]+)">([^<]+)</a>', page))
    assert links["why is this wrong? →"] == "/p/acme/traces/case-2/?analyze=q2-final"
    assert links["trace"] == "/p/acme/traces/case-1/?node=q1-final"
    opened = member.get(links["why is this wrong? →"]).content.decode()
    assert 'data-selected="q2-final"' in opened and 'data-analyze="q2-final"' in opened
