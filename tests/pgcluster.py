"""A throwaway PostgreSQL cluster for tests and benchmarks: unix socket only, no TCP.

PostgreSQL refuses to run as root, so as root the cluster is made and run as the ``postgres``
user (``runuser``); otherwise as the current user. ``Cluster.start()`` returns ``None`` with
the reason when the binaries are missing.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

PORT = 5432  # only names the socket file, inside a folder of our own

TEST_SETTINGS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
    "-c shared_buffers=128MB"
)


def missing_binaries() -> str | None:
    """Why a cluster cannot be started here, or None."""
    absent = [name for name in ("initdb", "pg_ctl") if shutil.which(name) is None]
    if absent:
        return (
            f"PostgreSQL binaries not found on PATH ({', '.join(absent)}): install PostgreSQL "
            "(e.g. Debian's postgresql-15) to run the PostgreSQL backend tests"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing (PostgreSQL refuses to run as root)"
    return None


@dataclass
class Cluster:
    root: Path
    settings: str = TEST_SETTINGS
    databases: list[str] = field(default_factory=list)

    @property
    def socket_dir(self) -> str:
        return str(self.root)

    def url(self, database: str = "postgres", user: str = "postgres", password: str | None = None
            ) -> str:
        auth = f"{user}:{password}" if password is not None else user
        return f"postgresql://{auth}@/{database}?host={self.socket_dir}&port={PORT}"

    def _as_owner(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv

    def _run(self, argv: list[str]) -> None:
        subprocess.run(self._as_owner(argv), check=True, capture_output=True, text=True)

    @classmethod
    def create(cls, settings: str = TEST_SETTINGS) -> "Cluster":
        root = Path(tempfile.mkdtemp(prefix="backscroll-pg-"))
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(root, owner.pw_uid, owner.pw_gid)
        os.chmod(root, 0o700)
        cluster = cls(root, settings)
        cluster._run([
            "initdb", "-D", str(root / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8",
            "--locale=C", "--no-sync",
        ])
        # The superuser gets in without a password (fixtures); every other role needs its
        # password, so wrong credentials and role rights are real in tests.
        hba = root / "data" / "pg_hba.conf"
        hba.write_text("local all postgres trust\nlocal all all scram-sha-256\n")
        cluster.start()
        return cluster

    def start(self) -> None:
        options = f"-p {PORT} -k {self.socket_dir} -c listen_addresses='' {self.settings}"
        self._run([
            "pg_ctl", "-D", str(self.root / "data"), "-o", options, "-l",
            str(self.root / "log"), "-w", "start",
        ])

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            self._as_owner(["pg_ctl", "-D", str(self.root / "data"), "-m", mode, "-w", "stop"]),
            capture_output=True,
        )

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def sql(self, statement: str, database: str = "postgres") -> list[tuple]:
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def new_database(self, template: str | None = None) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        clause = f" TEMPLATE {template}" if template else ""
        self.sql(f"CREATE DATABASE {name}{clause}")
        self.databases.append(name)
        return name

    def drop_database(self, name: str) -> None:
        self.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
