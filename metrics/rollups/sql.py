"""Small builders for the SQL that reads the rollups and the raw rows beside
them: time ranges, filter conditions, series buckets."""

from core.replica import reading_connection
from metrics.filter_match import value_param, value_sql
from metrics.rollups.values import in_environment_sql


def intervals_sql(column: str, intervals: list[tuple]) -> tuple[str, list]:
    """`column` in any of the [start, end) intervals."""
    clause = " OR ".join([f"({column} >= %s AND {column} < %s)"] * len(intervals))
    return f"({clause})", [moment for interval in intervals for moment in interval]


def interval_index_sql(column: str, intervals: list[tuple]) -> tuple[str, list]:
    """The index of the [start, end) interval holding `column` (NULL in none)."""
    cases = " ".join(f"WHEN {column} >= %s AND {column} < %s THEN {index}" for index in range(len(intervals)))
    return f"CASE {cases} END", [moment for interval in intervals for moment in interval]


def filters_sql(dimensions: dict, prefix: str = "") -> tuple[str, list]:
    """The conjunction of `column = value` for the chosen dimensions (TRUE for
    none); a tuple of values is `column = ANY(values)`."""
    clauses = [value_sql(f"{prefix}{column}", "%s", value) for column, value in dimensions.items()]
    return " AND ".join(clauses) or "TRUE", [value_param(value) for value in dimensions.values()]



def node_filters_sql(project, filters, table: str = "n") -> tuple[str, list]:
    """Every filter of a metrics.questions.Filters over the node table aliased
    `table` (raw rows of `project`): the dimensions, the model when set, the environment."""
    sql, params = filters_sql(filters.dimensions, f"{table}.")
    if filters.model:
        sql, params = f"{sql} AND {value_sql(f'{table}.model', '%s', filters.model)}", [*params, value_param(filters.model)]
    environment, environment_params = in_environment_sql(f"{table}.trace_id", filters.environment, project.pk)
    return f"{sql} AND {environment}", [*params, *environment_params]


def bucket_sql(step: str, column: str) -> str:
    """The start of `column`'s series bucket ("" is the whole window: NULL)."""
    return {"": "NULL::timestamptz", "day": f"date_trunc('day', {column}, 'UTC')",
            "hour": f"date_trunc('hour', {column}, 'UTC')"}[step]


def fetch(sql: str, params: list) -> list[tuple]:
    with reading_connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
