"""The published schemas are the schemas of what is published: every document under
/api/errors/ names /api/schema/error.json and validates against it, records validate
against /api/schema/record.json, and the OpenAPI file refers to the very same file."""

import json
from pathlib import Path

import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi

from errorkb import urls
from errorkb.content.load import parse_yaml
from tests.conftest import FIXTURE
from tests.test_build import _openapi_validator

# The real site's documents are validated by its build's report (test_build: W205).


def published(site: Path, url: str) -> dict:
    return json.loads((site / urls.output_path(url)).read_text())


def record(path: Path) -> dict:
    """A record as the generator reads it (dates stay strings)."""
    return parse_yaml(path.read_text(), path.name, []).data


def document_validator(site: Path) -> jsonschema.Draft202012Validator:
    """What a client does: fetch the schema the API names, check it, validate with it."""
    schema = published(site, urls.schema())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def documents(site: Path) -> list[Path]:
    """Every error document: both URLs of each record and of each alias."""
    return sorted(p for p in (site / "api/errors").iterdir() if p.is_file())


def test_every_fixture_document_validates_against_the_schema_it_names(fixture_site):
    validator = document_validator(fixture_site)
    schema_url = validator.schema["$id"]
    assert schema_url == "https://kb.example.org/api/schema/error.json"
    checked = 0
    for path in documents(fixture_site):
        doc = json.loads(path.read_text())
        assert doc["$schema"] == schema_url, path
        validator.validate(doc)
        checked += 1
    assert checked == 4 + 1  # four records and one alias


def test_the_document_schema_refuses_what_is_not_a_document(fixture_site):
    validator = document_validator(fixture_site)
    doc = published(fixture_site, urls.error_json("00000000000000a1"))
    broken = [
        # A record is not a document: no url, no computed values, ...
        record(FIXTURE / "content/errors/demo/00000000000000a1.yaml"),
        {k: v for k, v in doc.items() if k != "$schema"},
        {**doc, "$schema": "https://kb.example.org/api/schema/record.json"},
        {**doc, "computed": {**doc["computed"], "source_url": 42}},
        {**doc, "id": "not-an-id"},
        {**doc, "surprise": True},
    ]
    for bad in broken:
        assert list(validator.iter_errors(bad)), bad


def test_record_schema_is_published_under_its_own_name(fixture_site):
    schema = published(fixture_site, urls.record_schema())
    assert schema["$id"] == "https://kb.example.org/api/schema/record.json"
    assert schema["title"] == "errorkb error record"
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted((FIXTURE / "content/errors/demo").glob("*.yaml")):
        validator.validate(record(path))
    doc = published(fixture_site, urls.error_json("00000000000000a1"))
    assert list(validator.iter_errors(doc))  # a document has more than a record
    index = published(fixture_site, urls.api_index())
    assert index["schema"] == "https://kb.example.org/api/schema/error.json"
    assert index["record_schema"] == schema["$id"]


@pytest.mark.parametrize("which", ["fixture_site", "real_site"])
def test_openapi_file_validates_and_its_error_document_is_the_published_schema(which, request):
    site = request.getfixturevalue(which)
    spec = published(site, urls.openapi())
    validate_openapi(spec, base_uri=(site / "api/openapi.json").as_uri())
    ref = spec["components"]["schemas"]["ErrorDocument"]["$ref"]
    assert (site / "api" / ref).resolve() == (site / "api/schema/error.json").resolve()
    for path in spec["paths"]:
        if "{" not in path:
            assert (site / urls.output_path(path)).is_file(), path
    # The OpenAPI route to the schema and the published file accept and refuse alike.
    via_openapi = _openapi_validator(site, "ErrorDocument")
    direct = document_validator(site)
    doc = json.loads(documents(site)[0].read_text())
    assert via_openapi.is_valid(doc) and direct.is_valid(doc)
    bad = {**doc, "id": 7}
    assert not via_openapi.is_valid(bad) and not direct.is_valid(bad)
