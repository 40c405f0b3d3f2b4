"""Running the same work in several threads that start together, as concurrent
workers would: each thread has its own database connection, closed after."""

import threading

from django.db import connection


def run_at_once(count: int, work) -> list:
    """`work()` in `count` threads released at the same moment; their results.
    The first error any of them raised is raised here."""
    start = threading.Barrier(count)
    results, errors = [], []

    def runner():
        try:
            start.wait()
            results.append(work())
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if errors:
        raise errors[0]
    return results
