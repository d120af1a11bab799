"""SQLite's spelling of what is not portable: json_each, `IS`, scalar max, instr."""

from typing import ClassVar

from contextd.storage.dialect import Dialect

__all__ = ["SQLITE", "SqliteDialect"]


class SqliteDialect(Dialect):
    name: ClassVar[str] = "sqlite"
    null_safe_eq: ClassVar[str] = "IS"
    # CROSS JOIN makes SQLite look each listed id up by its index instead of scanning.
    index_join: ClassVar[str] = "CROSS JOIN"

    def column_names(self, table: str) -> tuple[str, tuple[object, ...]]:
        return "SELECT name FROM pragma_table_info(?) ORDER BY cid", (table,)

    def json_rows(self, source: str, alias: str) -> str:
        return f"json_each({source}) AS {alias}"

    def json_list_has(self, column: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = ?)"

    def greatest(self, first: str, second: str) -> str:
        return f"max({first}, {second})"

    def contains(self, text: str) -> str:
        return f"instr({text}, ?) > 0"


SQLITE = SqliteDialect()
