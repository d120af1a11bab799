"""PostgreSQL's spelling of what is not portable: JSON lists through jsonb, GREATEST, strpos,
vectors through pgvector, and which rows each developer may see."""

from typing import ClassVar

from contextd.storage.dialect import Dialect
from contextd.storage.vector_bytes import encode

__all__ = ["POSTGRES", "PostgresDialect"]


class PostgresDialect(Dialect):
    name: ClassVar[str] = "postgresql"
    null_safe_eq: ClassVar[str] = "IS NOT DISTINCT FROM"
    index_join: ClassVar[str] = "JOIN"
    vector_placeholder: ClassVar[str] = "CAST(? AS vector)"
    apart: ClassVar[bool] = True

    def __init__(self, developer: str = "") -> None:
        self.own_developer = developer  # '' (no store opened yet): the team's rows only

    def column_names(self, table: str) -> tuple[str, tuple[object, ...]]:
        return (
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
            (table,),
        )

    def json_rows(self, source: str, alias: str) -> str:
        return f"jsonb_array_elements_text(CAST({source} AS jsonb)) AS {alias}(value)"

    def json_list_has(self, column: str) -> str:
        return f"CAST({column} AS jsonb) @> jsonb_build_array(CAST(? AS text))"

    def greatest(self, first: str, second: str) -> str:
        return f"GREATEST({first}, {second})"

    def contains(self, text: str) -> str:
        return f"strpos({text}, CAST(? AS text)) > 0"

    def vector_param(self, vector: list[float]) -> object:
        return "[" + ",".join(repr(float(x)) for x in vector) + "]"

    def vector_column(self, expression: str) -> str:
        return f"CAST({expression} AS real[])"

    def vector_blob(self, value: object) -> bytes:
        assert isinstance(value, list)
        return encode(value)


POSTGRES = PostgresDialect()
