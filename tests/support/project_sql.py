"""Whether a SQL statement stays in one project, as Citus needs to route it to
one shard (issue 28): every project table it reads or writes is constrained to
the requester's project (`project_id = N`, or IN / ANY of that one value, on the
table itself or on a table its project_id is equated with), and every join
between two project tables equates their project_id (co-located joins).

Statements are captured from every connection with their parameters bound
(psycopg's client-side mogrify), then parsed with sqlglot."""

import os
import sys
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import count

import sqlglot
from django.apps import apps
from django.db import connections
from django.db.backends.postgresql.psycopg_any import mogrify
from sqlglot import exp

from tenancy.models import Project

PROJECT_TABLE = Project._meta.db_table
# Tables that hold no project's data: Django's own and the accounts.
EXEMPT_APPS = {"admin", "auth", "contenttypes", "sessions"}
DERIVED = object()  # a CTE or a subquery in FROM: its own tables are checked where they are read


def project_tables() -> set[str]:
    """Tables with a project_id column: Citus distributes them by it."""
    return {model._meta.db_table for model in apps.get_models()
            if model._meta.app_label not in EXEMPT_APPS
            and any(f.column == "project_id" for f in model._meta.concrete_fields)}


def child_tables_without_project_id() -> set[str]:
    """Tables whose rows belong to a project only through a parent's foreign key:
    not distributable until they carry project_id themselves."""
    owned = project_tables() | {PROJECT_TABLE}
    children: set[str] = set()
    grew = True
    while grew:
        grew = False
        for model in apps.get_models():
            table = model._meta.db_table
            if table in owned or table in children or model._meta.app_label in EXEMPT_APPS:
                continue
            if any(f.is_relation and f.concrete and f.related_model._meta.db_table in owned | children
                   for f in model._meta.concrete_fields):
                children.add(table)
                grew = True
    return children


APPS = ("alerts", "core", "denoise_dashboard", "evals", "metrics", "policy", "provenance", "tenancy")


@dataclass
class Statement:
    sql: str
    alias: str
    caller: str  # the innermost frame of our code that ran it, "path:line"
    by_django: str  # Django's Model method that wrote the SQL ("save", "delete"), or ""


@contextmanager
def capture():
    """Every statement run on any connection while inside, parameters bound."""
    seen: list[Statement] = []

    def record(alias):
        def wrapper(execute, sql, params, many, context):
            connection = context["connection"].connection
            text = sql if isinstance(sql, str) else sql.as_string(connection)
            bound = params[0] if many and params else params
            if bound is not None and connection is not None:
                try:
                    text = mogrify(text, bound, context["connection"])
                except Exception:  # an unadaptable parameter: judge the statement with its placeholders
                    pass
            caller, by_django = _origin()
            seen.append(Statement(" ".join((text if isinstance(text, str) else text.decode()).split()), alias,
                                  caller, by_django))
            return execute(sql, params, many, context)

        return wrapper

    with ExitStack() as stack:
        for connection in connections.all():
            stack.enter_context(connection.execute_wrapper(record(connection.alias)))
        yield seen


def _origin() -> tuple[str, str]:
    """Where a statement comes from: our innermost frame, and whether Django's
    instance save or delete (and its cascades) wrote it."""
    caller, by_django = "", ""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not caller and any(f"/{app}/" in path for app in APPS) and "/site-packages/" not in path \
                and "/tests/" not in path:
            caller = f"{os.path.relpath(path)}:{frame.f_lineno}"
        if path.endswith(os.path.join("django", "db", "models", "base.py")) and frame.f_code.co_name in (
                "_do_update", "_do_insert", "delete", "refresh_from_db"):
            by_django = by_django or frame.f_code.co_name
        if path.endswith(os.path.join("django", "db", "models", "deletion.py")):
            by_django = "delete"
        if path.endswith(os.path.join("django", "db", "models", "fields", "related_descriptors.py")) \
                and frame.f_code.co_name == "get_object":
            by_django = by_django or "get_object"
        frame = frame.f_back
    return caller, by_django


@dataclass
class _Frame:
    """One SELECT (or UPDATE/DELETE) level: the tables its FROM names, by alias."""

    parent: "_Frame | None"
    ctes: frozenset
    sources: dict = field(default_factory=dict)  # alias -> table name, or DERIVED
    id: int = field(default_factory=count().__next__)


class _Check:
    def __init__(self, tables: set[str], project: Project):
        self.tables = tables
        self.project = project
        self.parent: dict = {}
        self.pins: dict = {}  # key -> set of project ids (or DERIVED)
        self.joins: list = []  # (key, key, where) pairs that must share a class
        self.physical: list = []  # (key, table) of every project table read or written
        self.problems: list[str] = []

    # union-find over project_id columns, keyed (frame id, alias)
    def find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def union(self, a, b):
        self.parent.setdefault(a, a)
        self.parent.setdefault(b, b)
        self.parent[self.find(a)] = self.find(b)

    def pin(self, key, value):
        self.pins.setdefault(key, set()).add(value)

    def statement(self, tree):
        self.query(tree, None, frozenset())
        pinned: dict = {}
        for key, values in self.pins.items():
            pinned.setdefault(self.find(key), set()).update(values)
        for key, table in self.physical:
            values = pinned.get(self.find(key), set())
            if not values:
                self.problems.append(f"{table} is not filtered to one project")
            strays = {v for v in values if v is not DERIVED and v != self.project.pk}
            if strays:
                self.problems.append(f"{table} is filtered to project {sorted(strays)}, "
                                     f"the requester's is {self.project.pk}")
        for a, b, what in self.joins:
            if self.find(a) != self.find(b):
                self.problems.append(f"the join of {what} does not equate their project_id")

    def query(self, node, parent, ctes):
        if isinstance(node, exp.Subquery):
            return self.query(node.this, parent, ctes)
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            ctes = ctes | {cte.alias_or_name for cte in with_.expressions}
            for cte in with_.expressions:
                self.query(cte.this, parent, ctes)
        if isinstance(node, exp.SetOperation):
            self.query(node.left, parent, ctes)
            self.query(node.right, parent, ctes)
            return
        frame = _Frame(parent, ctes)
        predicates = []
        if isinstance(node, exp.Select):
            from_ = node.args.get("from_") or node.args.get("from")
            if from_ is not None:
                self.source(frame, from_.this)
            for join in node.args.get("joins") or []:
                self.source(frame, join.this)
                if join.args.get("on") is not None:
                    predicates.append(join.args["on"])
        elif isinstance(node, (exp.Update, exp.Delete)):
            self.source(frame, node.this)
            extra = node.args.get("from_") or node.args.get("from")
            if extra is not None:
                self.source(frame, extra.this)
            for using in node.args.get("using") or []:
                self.source(frame, using)
        elif isinstance(node, exp.Insert):
            self.insert(node, frame)
        else:
            return
        if node.args.get("where") is not None:
            predicates.append(node.args["where"].this)
        for predicate in predicates:
            for conjunct in _conjuncts(predicate):
                self.conjunct(frame, conjunct)
        self.joined_within(frame)
        for inner in _nested_queries(node):
            self.query(inner, frame, ctes)

    def source(self, frame, node):
        if isinstance(node, exp.Table):
            name = node.name
            alias = node.alias_or_name
            if name in frame.ctes:
                frame.sources[alias] = DERIVED
            else:
                frame.sources[alias] = name
                if name in self.tables:
                    self.physical.append(((frame.id, alias), name))
        elif isinstance(node, (exp.Subquery, exp.Values, exp.Unnest)) or node.alias:
            frame.sources[node.alias_or_name] = DERIVED
        key = (frame.id, node.alias_or_name)
        if frame.sources.get(node.alias_or_name) is DERIVED:
            self.pin(key, DERIVED)

    def insert(self, node, frame):
        target = node.this
        table = target.this if isinstance(target, exp.Schema) else target
        if table.name not in self.tables:
            return
        columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else []
        if "project_id" not in columns:
            self.problems.append(f"an INSERT into {table.name} names no project_id")
            return
        rows = node.expression
        if isinstance(rows, exp.Values):
            at = columns.index("project_id")
            values = {_value(row.expressions[at]) for row in rows.expressions}
            if values != {self.project.pk}:
                self.problems.append(f"an INSERT into {table.name} writes project_id {values}, "
                                     f"the requester's is {self.project.pk}")

    def joined_within(self, frame):
        mine = [(frame.id, alias) for alias, table in frame.sources.items() if table in self.tables]
        for i, a in enumerate(mine):
            for b in mine[i + 1:]:
                self.joins.append((a, b, f"{frame.sources[a[1]]} and {frame.sources[b[1]]}"))

    def resolve(self, frame, column: exp.Column):
        """The (frame, alias) a column belongs to, and that source's table."""
        alias = column.table
        here = frame
        while here is not None:
            if alias and alias in here.sources:
                return (here.id, alias), here.sources[alias]
            if not alias:
                owners = [a for a, t in here.sources.items() if t in self.tables or t is DERIVED]
                if len(here.sources) == 1 or len(owners) == 1:
                    chosen = next(iter(here.sources)) if len(here.sources) == 1 else owners[0]
                    return (here.id, chosen), here.sources[chosen]
                return None, None
            here = here.parent
        return None, None

    def project_key(self, frame, node):
        """The key of a column that names a project: a project table's project_id,
        or the project table's own id."""
        if not isinstance(node, exp.Column):
            return None
        key, table = self.resolve(frame, node)
        if key is None:
            return None
        if node.name == "project_id" and (table in self.tables or table is DERIVED):
            return key
        if table == PROJECT_TABLE and node.name == "id":
            return key
        return None

    def conjunct(self, frame, node):
        node = _unparen(node)
        if isinstance(node, exp.EQ):
            left, right = _uncast(node.this), _uncast(node.expression)
            a, b = self.project_key(frame, left), self.project_key(frame, right)
            if a and b:
                self.union(a, b)
            elif a or b:
                key, other = (a, right) if a else (b, left)
                if isinstance(other, exp.Any):
                    values = _array_values(other.this)
                    if len(values) == 1:
                        self.pin(key, values[0])
                elif isinstance(other, exp.Literal):
                    self.pin(key, _value(other))
            elif isinstance(left, exp.Column) and left.name == "slug" and isinstance(right, exp.Literal):
                key, table = self.resolve(frame, left)
                if table == PROJECT_TABLE and right.this == self.project.slug:
                    self.pin(key, self.project.pk)
            self.correlation(frame, left, right)
        elif isinstance(node, exp.In) and not node.args.get("query"):
            key = self.project_key(frame, _uncast(node.this))
            values = [_value(_uncast(v)) for v in node.expressions]
            if key and len(set(values)) == 1:
                self.pin(key, values[0])

    def correlation(self, frame, left, right):
        """An equality between this frame's project table and an outer one's is a
        join: it must come with their project_id equated."""
        keys = []
        for side in (left, right):
            if isinstance(side, exp.Column):
                key, table = self.resolve(frame, side)
                if key and table in self.tables:
                    keys.append((key, table))
        if len(keys) == 2 and keys[0][0][0] != keys[1][0][0]:
            (a, ta), (b, tb) = keys
            self.joins.append((a, b, f"{ta} and {tb} (a correlated subquery)"))


def _conjuncts(node):
    node = _unparen(node)
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


def _unparen(node):
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _uncast(node):
    node = _unparen(node)
    while isinstance(node, exp.Cast):
        node = _unparen(node.this)
    return node


def _value(node):
    node = _uncast(node)
    if isinstance(node, exp.Literal):
        return int(node.this) if not node.is_string and node.this.lstrip("-").isdigit() else node.this
    return node.sql()


def _array_values(node):
    node = _uncast(node)
    if isinstance(node, exp.Array):
        return [_value(v) for v in node.expressions]
    if isinstance(node, exp.Literal) and node.is_string and node.this.startswith("{"):
        return [v for v in node.this.strip("{}").split(",") if v]
    return [None, None]


def _nested_queries(node):
    """The queries directly inside `node` (not inside one of those)."""
    for child in node.iter_expressions():
        if isinstance(child, exp.With):
            continue
        if isinstance(child, (exp.Select, exp.SetOperation)):
            yield child
        else:
            yield from _nested_queries(child)


DML = (exp.Select, exp.SetOperation, exp.Update, exp.Delete, exp.Insert)


def problems_of(sql: str, project: Project, tables: set[str]) -> list[str]:
    """Why `sql` does not stay in `project`; [] when it does or names no project table."""
    if not any(table in sql for table in tables):
        return []
    try:
        trees = sqlglot.parse(sql, read="postgres")
    except sqlglot.errors.ParseError as error:
        return [f"unparsed: {error}"]
    found = []
    for tree in trees:
        if tree is None or not isinstance(tree, DML):
            continue
        check = _Check(tables, project)
        check.statement(tree)
        found.extend(check.problems)
    return found
