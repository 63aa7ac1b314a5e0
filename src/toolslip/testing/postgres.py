"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` and ``pg_ctl`` in a temporary folder.

The server listens on a Unix socket in its own folder only (no TCP port), trusts local connections and
is removed when stopped. It uses the binaries of the system's PostgreSQL (Debian's ``postgresql``
package puts them in ``/usr/lib/postgresql/VERSION/bin``). PostgreSQL refuses to run as root, so under
root the server runs as the ``postgres`` user the package creates (``nobody`` if there is none)::

    with PostgresServer() as server:
        journal = Journal(server.url())

``file_size_limit`` starts the server under that limit on the size of any file it writes
(``RLIMIT_FSIZE``, what ``ulimit -f`` sets): the kernel then refuses the write that would grow a table's
file past it, as it refuses a write to a full disk (``EFBIG`` instead of ``ENOSPC``; PostgreSQL ignores
the ``SIGXFSZ`` that goes with it). Write-ahead log segments are made 1 MB so that they stay under it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from ..core.errors import ConfigError

__all__ = ["PostgresServer", "postgres_bin"]


def postgres_bin() -> Path | None:
    """The folder of the newest installed PostgreSQL's ``initdb`` and ``pg_ctl``, or ``None``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    """One PostgreSQL server in a temporary folder, on a Unix socket; a context manager."""

    def __init__(self, *, file_size_limit: int | None = None, settings: dict[str, str] | None = None) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise ConfigError("no PostgreSQL server is installed; install it with `apt-get install postgresql`")
        self.bin = bin_dir
        self.file_size_limit = file_size_limit
        self.settings = {"fsync": "off", "max_connections": "200", **(settings or {})}
        """Server settings; ``fsync`` is off by default: a test server need not survive a power cut."""
        self.folder = Path(tempfile.mkdtemp(prefix="toolslip-pg-"))
        self.data = self.folder / "data"
        self._user = _server_user()

    def url(self, database: str = "postgres") -> str:
        """The connection URL of ``database`` on this server, as user ``postgres`` over its socket."""
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def start(self) -> PostgresServer:
        """Create the cluster (the first time) and start the server; returns when it accepts connections."""
        if not self.data.exists():
            if self._user is not None:
                os.chown(self.folder, self._user.pw_uid, self._user.pw_gid)
            os.chmod(self.folder, 0o700 if self._user is None else 0o755)
            wal = ["--wal-segsize=1"] if self.file_size_limit else []
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", *wal)
        options = " ".join(
            [f"-c listen_addresses='' -k {self.folder}", *(f"-c {k}={v}" for k, v in self.settings.items())]
        )
        self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: roll back open transactions and end the sessions; ``immediate``: crash)."""
        self._run("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", str(self.data))

    def restart(self) -> None:
        """Stop and start again: every session is ended, committed data stays."""
        self.stop()
        self.start()

    def remove(self) -> None:
        """Stop the server if it runs and delete its folder."""
        with contextlib.suppress(ConfigError):  # it was not running
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.remove()

    def _run(self, program: str, *args: str) -> None:
        """Run one of the server's programs as the server's user (and under the file size limit, if any)."""
        limit = ["prlimit", f"--fsize={self.file_size_limit}"] if self.file_size_limit is not None else []
        user = self._user
        try:
            subprocess.run(
                [*limit, str(self.bin / program), *args],
                check=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=self.folder,
                user=user.pw_uid if user else None,
                group=user.pw_gid if user else None,
                extra_groups=[] if user else None,
            )
        except subprocess.CalledProcessError as exc:
            raise ConfigError(f"{program} failed: {exc.stderr.decode(errors='replace').strip()}") from None


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server when we are root (``postgres``, else ``nobody``); ``None``: ourselves."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise ConfigError("PostgreSQL will not run as root and there is no `postgres` or `nobody` user to run it as")
