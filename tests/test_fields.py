"""The field catalogue and the typed models declare the same fields: a field added to one and
not the other fails here, before any surface drifts."""

import anyio
from mcp.types import Implementation

from contextd.app import App
from contextd.client import commands
from contextd.fields import HARDNESS, KINDS, RECORD_FIELDS, body_fields, text_fields
from contextd.mcp.server import build_server
from contextd.models import BODY_TYPES, Hardness, Kind, Origin, Record
from mcp import Client


def test_every_body_field_of_the_models_is_in_the_catalogue_in_order() -> None:
    for kind, body_type in BODY_TYPES.items():
        assert tuple(f.name for f in body_fields(kind)) == body_type.__struct_fields__, kind
    assert set(KINDS) == {str(k) for k in Kind}
    assert tuple(h.value for h in Hardness) == HARDNESS
    assert tuple(o.value for o in Origin) == commands.ORIGIN_NAMES


def test_the_record_fields_people_set_are_fields_of_a_record() -> None:
    assert {f.name for f in RECORD_FIELDS} <= set(Record.__struct_fields__)


def test_each_kinds_main_text_is_one_of_its_texts() -> None:
    for kind, spec in KINDS.items():
        assert text_fields(kind)[0] == spec.main
        assert spec.main == "title" or spec.main in BODY_TYPES[Kind(kind)].__struct_fields__


def test_each_record_tool_takes_its_kinds_fields_with_the_catalogues_descriptions(
    app: App,
) -> None:
    async def tools() -> dict[str, dict[str, object]]:
        info = Implementation(name="catalogue-check", version="1")
        async with Client(build_server(app), client_info=info) as client:
            listed = await client.list_tools()
        return {tool.name: tool.input_schema for tool in listed.tools}

    schemas = anyio.run(tools)
    for kind, spec in KINDS.items():
        properties = schemas[spec.tool]["properties"]
        assert isinstance(properties, dict)
        assert properties[spec.argument]["description"] == spec.title_help
        for field in body_fields(kind):
            assert properties[field.name]["description"] == field.described, field.name
