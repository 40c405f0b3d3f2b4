"""Deliveries sent in parallel never wait for a database connection: the
threads are sized from the connection pool, and each gives its connection
back when its send ends (a thread's connection is otherwise never returned,
and after a round or two the pool is empty: "couldn't get a connection after
1.00 sec")."""

import pytest
from django.core.management import call_command
from django.db import connection

from alerts import delivery as deliveries
from alerts.models import Delivery, DeliveryAttempt, InboxMessage
from demo.alert_rules import install_demo_rules

pytestmark = pytest.mark.django_db(transaction=True)


def pool_stats() -> dict:
    pool = getattr(connection, "pool", None)
    if pool is None:
        pytest.skip("the connection pool is PostgreSQL's")
    return pool.get_stats()


def test_rounds_of_parallel_inbox_deliveries_all_succeed_first_time(project):
    destination = install_demo_rules(project, inbox=True)[0].destinations.get(kind="inbox")
    count = 4 * deliveries.PARALLEL
    Delivery.objects.bulk_create([
        Delivery(project=project, rule=destination.rule, destination=destination, target="inbox", kind="alert.test",
                 payload=f'{{"n": {i}}}', next_attempt_at="2000-01-01T00:00:00Z") for i in range(count)])

    # Other tests' threads in this process (live servers) may hold connections of the same pool:
    # what counts is that the deliveries leave none more out than there were before.
    before = pool_stats()
    out_before = before["pool_size"] - before.get("pool_available", 0)

    call_command("retry_deliveries")

    failed = list(DeliveryAttempt.objects.exclude(success=True).values_list("error", flat=True))
    assert failed == []
    assert Delivery.objects.filter(status="delivered").count() == count == InboxMessage.objects.count()
    stats = pool_stats()
    # None stranded in the delivery threads.
    assert stats["pool_size"] - stats.get("pool_available", 0) <= max(out_before, 1), (before, stats)


def test_delivery_threads_are_sized_from_the_pool(settings):
    pool_max = settings.DATABASES["default"].get("OPTIONS", {}).get("pool", {}).get("max_size")
    if pool_max is None:
        pytest.skip("the connection pool is PostgreSQL's")
    assert 1 <= deliveries.parallel() <= pool_max // 2
    options = settings.DATABASES["default"]["OPTIONS"]
    settings.DATABASES = {"default": {**settings.DATABASES["default"],
                                      "OPTIONS": {**options, "pool": {**options["pool"], "max_size": 3}}}}
    assert deliveries.parallel() == 1
