"""The SHA-256 a summarized node keeps of each full text, so a later copy of
that text can be matched.

Read and written as 64 hex digits everywhere (the API, lookups, tests), but
PostgreSQL stores the 32 bytes (`bytea`): half the size of the hex text on
every summarized row. SQLite, the embedded smoke path, keeps the hex text.
"""

from django.db import models
from django.db.models.functions import SHA256

from core.dialect import is_postgres

DIGEST_BYTES = 32


class Sha256Field(models.Field):
    description = "A SHA-256 digest, as 64 hex digits"

    def db_type(self, connection):
        return "bytea" if is_postgres(connection) else f"char({DIGEST_BYTES * 2})"

    def from_db_value(self, value, expression, connection):
        return value if value is None or isinstance(value, str) else bytes(value).hex()

    def to_python(self, value):
        return self.from_db_value(value, None, None)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None:
            return None
        value = self.to_python(value)
        if len(value) != DIGEST_BYTES * 2:
            raise ValueError(f"a SHA-256 digest is {DIGEST_BYTES * 2} hex digits, not {value!r}")
        bytes.fromhex(value)  # refuses anything but hex digits
        return value.lower()

    def get_db_prep_value(self, value, connection, prepared=False):
        value = value if prepared else self.get_prep_value(value)
        if value is None or not is_postgres(connection):
            return value
        return bytes.fromhex(value)


class TextDigest(SHA256):
    """SHA-256 of a text column, as a `Sha256Field`. Django's SHA256 needs
    pgcrypto on PostgreSQL; its built-in sha256() (11+) does without, and
    answers the bytes the column stores. On SQLite Django registers SHA256
    itself (hex)."""

    output_field = Sha256Field()

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="sha256(convert_to(%(expressions)s, 'UTF8'))",
                           **extra_context)
