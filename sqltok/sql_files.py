"""The SQL the pipeline runs lives in `.sql` files (installed as `sqltok.sql`); this reads them."""
from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def sql_text(name: str) -> str:
    """The text of `sql/<name>.sql`."""
    return files("sqltok.sql").joinpath(f"{name}.sql").read_text(encoding="utf-8")


def run_script(con, name: str) -> None:
    """Run every statement of `sql/<name>.sql` on `con`."""
    con.execute(sql_text(name))
