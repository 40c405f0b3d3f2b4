"""A PostgreSQL server of the test's own (initdb in a temporary directory, its
own port), for tests that stop the database: never the shared one."""

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.serving import REPO, free_port

BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)


def as_postgres(*command: str) -> list[str]:
    # initdb and postgres refuse to run as root.
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)


class OwnPostgres:
    def __init__(self, standby_of: "OwnPostgres | None" = None):
        """A new cluster of our own; with `standby_of`, a streaming replica of that
        (running) cluster, copied from it with pg_basebackup."""
        if BIN is None or shutil.which("runuser") is None and os.geteuid() == 0:
            raise RuntimeError("PostgreSQL server binaries are not installed")
        self.dir = Path(tempfile.mkdtemp(prefix="denoise-own-pg-"))
        os.chmod(self.dir, 0o777)
        self.data = self.dir / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/denoise_outage"
        try:
            if standby_of is None:
                subprocess.run(as_postgres(str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres",
                                           "--auth=trust", "--no-sync", "-E", "UTF8"), check=True, capture_output=True)
                # initdb's trust pg_hba already admits replication connections from 127.0.0.1.
                with open(self.data / "postgresql.conf", "a") as conf:
                    conf.write("wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n")
            else:
                # -R writes standby.signal and primary_conninfo: the copy starts as a hot standby.
                # A fast checkpoint: the default one is spread over minutes when much was written (a migration).
                subprocess.run(as_postgres(str(BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p",
                                           str(standby_of.port), "-U", "postgres", "-D", str(self.data), "-R",
                                           "-X", "stream", "--no-sync", "--checkpoint=fast"),
                               check=True, capture_output=True)
        except BaseException:
            # No object comes back to destroy(): the half-made directory goes here (Ctrl-C included).
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def sql(self, statement: str, database: str = "denoise_outage") -> str:
        """One statement through psql; its output, unaligned and without headers."""
        return subprocess.run(as_postgres(str(BIN / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                                          "postgres", "-d", database, "-Atc", statement),
                              check=True, capture_output=True, text=True).stdout.strip()

    def start(self):
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        subprocess.run(as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-l",
                                   str(self.dir / "server.log"), "-w", "-t", "60", "start"),
                       check=True, capture_output=True)

    def stop(self):
        # fast: clients are disconnected at once, as when a database server goes away.
        subprocess.run(as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60",
                                   "stop"), check=True, capture_output=True)

    def create_database(self):
        subprocess.run(as_postgres(str(BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                                   "denoise_outage"), check=True, capture_output=True)

    def destroy(self):
        subprocess.run(as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"),
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def manage(database_url: str, *args: str, **env: str) -> str:
    """`manage.py` on that database, as an operator runs it (`env` added to
    its environment); what it printed."""
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, check=True, capture_output=True, text=True,
                          env={"DATABASE_URL": database_url, "PATH": "/usr/bin:/bin", **env}).stdout


@contextmanager
def migrated_cluster():
    """A running cluster of our own with the project's database, migrated;
    destroyed afterwards. Skips the test where no server can be run."""
    try:
        server = OwnPostgres()
    except (RuntimeError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot run a PostgreSQL server of our own: {error}")
    server.start()
    try:
        server.create_database()
        manage(server.url, "migrate", "-v0")
        yield server
    finally:
        server.destroy()
