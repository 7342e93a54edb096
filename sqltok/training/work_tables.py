"""One training run's work tables and views, owned by one object that drops them all at the end."""
from __future__ import annotations

import pyarrow as pa

PREFIX = "__sqltok_"


class WorkTables:
    """The names of a run's TEMP work tables and registered Arrow views, by role.

    `with WorkTables(con) as work:` hands out `work.table("pretoken_counts")` (the caller creates it)
    and `work.view("eligible_units", arrow)`; leaving the block, however it is left (an error, a
    KeyboardInterrupt), drops every table and view of the run, so a failed run leaves nothing behind.
    """

    def __init__(self, con) -> None:
        self._con = con
        self._tables: list[str] = []
        self._views: list[str] = []

    def table(self, role: str) -> str:
        """The name of the run's work table for `role`, dropped at the end."""
        name = PREFIX + role
        if name not in self._tables:
            self._tables.append(name)
        return name

    def view(self, role: str, data: pa.Table) -> str:
        """Register `data` as the run's view for `role` (replacing an earlier one); its name."""
        name = PREFIX + role
        self._con.register(name, data)
        if name not in self._views:
            self._views.append(name)
        return name

    def release(self, name: str) -> None:
        """Drop table or view `name` of the run now, where its memory is needed before the end."""
        if name in self._tables:
            self._tables.remove(name)
            self._con.execute(f'DROP TABLE IF EXISTS "{name}"')
        elif name in self._views:
            self._views.remove(name)
            self._con.unregister(name)

    def __enter__(self) -> "WorkTables":
        return self

    def __exit__(self, *exc) -> None:
        for name in reversed(self._tables):
            self._con.execute(f'DROP TABLE IF EXISTS "{name}"')
        for name in self._views:
            self._con.unregister(name)
