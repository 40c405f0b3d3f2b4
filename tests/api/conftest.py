"""The evals fixtures, for API tests that span truth sets and runs too."""

from tests.evals.conftest import dataset, run  # noqa: F401
