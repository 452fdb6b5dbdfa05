"""The static JSON API: one document per error, lists, the schema and its OpenAPI description.

The error document is also what the HTML page is rendered from, so the page and
the API can never disagree.
"""

import copy
import json
import posixpath
from collections.abc import Iterator

from generator.content import template
from generator.content.load import Content, Record, load_schema
from generator.site import markup, urls
from generator.site.linking import Links, modified, same_file, same_function

_MARKDOWN_FIELDS = ("meaning", "trigger", "prevention", "status_note")
_MARKDOWN_LISTS = ("situations", "solutions")


def error_document(record: Record, content: Content, links: Links) -> dict:
    """The record's fields, its markdown as HTML, and values computed from other records."""
    base = content.site["base_url"]
    data = record.data
    project = content.projects[record.project]
    source = data["source"]
    ref = source.get("ref", project.ref)
    nearby, in_file = same_file(links, record)
    in_function, in_function_count = same_function(links, record)
    doc = {
        "$schema": urls.absolute(base, urls.schema()),
        "schema_version": urls.SCHEMA_VERSION,
        **data,
        "url": urls.absolute(base, urls.error_json(record.id)),
        "html_url": urls.absolute(base, urls.error(record.id)),
        "modified": modified(record),
        "html": _html_fields(data),
        "computed": {
            "title": record.title,
            "status": data.get("status", "active"),
            "curated": record.curated,
            "project": {"key": project.key, "name": project.name, "repo": project.repo},
            "ref": ref,
            "source_url": urls.github_blob(project.repo, ref, source["path"], source.get("line")),
            "sites": [
                {**site, "url": urls.github_blob(project.repo, ref, site["path"], site.get("line"))}
                for site in source.get("sites", [])
            ],
            "placeholders": template.placeholders(data["message"]),
            "related": [_summary(r, base) for r in links.related[record.id]],
            "referenced_by": [_summary(r, base) for r in links.referenced_by.get(record.id, [])],
            "same_file": [_summary(r, base) for r in nearby],
            "same_file_count": in_file,
            "same_function": [
                {**_summary(r, base), "line": r.data["source"].get("line")} for r in in_function
            ],
            "same_function_count": in_function_count,
            "file_html_url": urls.absolute(base, urls.source_file(project.key, source["path"])),
            "guides": [
                {
                    "slug": g.slug,
                    "title": g.title,
                    "html_url": urls.absolute(base, urls.guide(g.slug)),
                }
                for g in links.guides.get(record.id, [])
            ],
            "edit_url": urls.github_edit(content.site["repo"], content.site["branch"], record.path),
        },
    }
    return doc


def _html_fields(data: dict) -> dict:
    out = {}
    for name in _MARKDOWN_FIELDS:
        if name in data:
            out[name] = markup.markdown(data[name])
    for name in _MARKDOWN_LISTS:
        if name in data:
            out[name] = [markup.markdown(item) for item in data[name]]
    for name in ("example_fix", "defensive"):
        if "note" in data.get(name, {}):
            out[f"{name}_note"] = markup.markdown(data[name]["note"])
    for name, about in data.get("params", {}).items():
        if "about" in about:
            out.setdefault("params", {})[name] = markup.markdown_inline(about["about"])
    return out


def _summary(record: Record, base: str) -> dict:
    """How other documents refer to a record."""
    out = {
        "id": record.id,
        "project": record.project,
        "exception": record.data["exception"],
        "title": record.title,
        "url": urls.absolute(base, urls.error_json(record.id)),
        "html_url": urls.absolute(base, urls.error(record.id)),
    }
    if "summary" in record.data:
        out["summary"] = record.data["summary"]
    return out


def dumps(doc: object) -> bytes:
    """Stable JSON: sorted keys, so the same content gives the same bytes. Compact: tools
    parse it and browsers pretty-print it, and only compact output uses json's C encoder
    (5x faster, a third smaller)."""
    body = json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (body + "\n").encode()


def record_files(rid: str, doc: dict) -> list[tuple[str, bytes]]:
    """A record's JSON document, at both of its URLs."""
    body = dumps(doc)
    return [(urls.error_json(rid), body), (urls.error_json_bare(rid), body)]


def api_files(content: Content, links: Links) -> Iterator[tuple[str, bytes]]:
    """The files under /api/ that are not one record's document."""
    base = content.site["base_url"]
    for alias, target in sorted(content.aliases.items()):
        doc = error_document(content.records[target], content, links)
        yield from record_files(alias, {**doc, "alias": alias})
    yield urls.api_index(), dumps(index_document(content, links))
    for key in content.projects:
        yield urls.project_json(key), dumps(project_document(content, links, key))
    yield urls.schema(), dumps(error_document_schema(base))
    yield urls.record_schema(), dumps(record_schema(base))
    yield urls.openapi(), dumps(openapi_document(base))
    not_found = {
        "schema_version": urls.SCHEMA_VERSION,
        "status": 404,
        "error": "not found",
        "index": urls.absolute(base, urls.api_index()),
    }
    yield urls.api_not_found(), dumps(not_found)


def index_document(content: Content, links: Links) -> dict:
    base = content.site["base_url"]
    return {
        "schema_version": urls.SCHEMA_VERSION,
        "title": content.site["title"],
        "count": len(content.records),
        "projects": [
            {
                "key": key,
                "name": project.name,
                "repo": project.repo,
                "count": sum(len(recs) for recs in links.by_file.get(key, {}).values()),
                "url": urls.absolute(base, urls.project_json(key)),
                "html_url": urls.absolute(base, urls.project(key)),
            }
            for key, project in content.projects.items()
        ],
        "guides": [
            {"slug": g.slug, "title": g.title, "html_url": urls.absolute(base, urls.guide(g.slug))}
            for g in content.guides
        ],
        "schema": urls.absolute(base, urls.schema()),
        "record_schema": urls.absolute(base, urls.record_schema()),
        "openapi": urls.absolute(base, urls.openapi()),
    }


def project_document(content: Content, links: Links, key: str) -> dict:
    base = content.site["base_url"]
    project = content.projects[key]
    files = links.by_file.get(key, {})
    return {
        "schema_version": urls.SCHEMA_VERSION,
        "key": key,
        "name": project.name,
        "repo": project.repo,
        "ref": project.ref,
        "count": sum(len(recs) for recs in files.values()),
        "errors": [
            {
                **_summary(rec, base),
                "path": path,
                "line": rec.data["source"].get("line"),
                "modified": modified(rec),
            }
            for path, recs in files.items()
            for rec in recs
        ],
    }


def record_schema(base_url: str) -> dict:
    """The record schema as the site publishes it, identified by its address there."""
    return {**load_schema(), "$id": urls.absolute(base_url, urls.record_schema())}


def error_document_schema(base_url: str) -> dict:
    """JSON Schema of an error document: the record schema plus the computed fields. The one
    schema of /api/errors/<id>.json: published on its own, and the OpenAPI file's
    ErrorDocument."""
    schema = copy.deepcopy(load_schema())
    own_url = urls.absolute(base_url, urls.schema())
    schema["$id"] = own_url
    schema["title"] = "errorkb error document"
    schema["description"] = (
        "What /api/errors/<id>.json holds: an error record (its schema: "
        f"{urls.absolute(base_url, urls.record_schema())}), its markdown rendered to HTML, "
        "and values computed from other records."
    )
    url = {"type": "string", "format": "uri"}
    summary = {"type": "object", "required": ["id", "title", "url", "html_url"]}
    schema["required"] += [
        "$schema",
        "schema_version",
        "url",
        "html_url",
        "modified",
        "html",
        "computed",
    ]
    schema["properties"].update(
        {
            "$schema": {"const": own_url, "description": "this schema"},
            "schema_version": {"const": urls.SCHEMA_VERSION},
            "url": url,
            "html_url": url,
            "modified": {"type": ["string", "null"]},
            "alias": {
                "$ref": "#/$defs/id",
                "description": "the former id this copy is served under",
            },
            "html": {
                "type": "object",
                "description": "markdown fields rendered to HTML",
                "additionalProperties": True,
            },
            "computed": {
                "type": "object",
                "required": ["title", "project", "source_url", "related", "edit_url"],
                "properties": {
                    "title": {"type": "string"},
                    "curated": {
                        "type": "boolean",
                        "description": "explained by a person (meaning, trigger or solutions); "
                        "false for a record only extracted from the source",
                    },
                    "source_url": url,
                    "edit_url": url,
                    "file_html_url": {
                        **url,
                        "description": "the page of every error raised in the record's file",
                    },
                    "related": {"type": "array", "items": summary},
                    "referenced_by": {"type": "array", "items": summary},
                    "same_file": {"type": "array", "items": summary},
                    "same_file_count": {"type": "integer", "minimum": 0},
                    "same_function": {
                        "type": "array",
                        "description": "errors raised in the same function, the nearest few",
                        "items": {
                            **summary,
                            "properties": {"line": {"type": ["integer", "null"]}},
                        },
                    },
                    "same_function_count": {"type": "integer", "minimum": 0},
                },
            },
        }
    )
    return schema


def openapi_document(base_url: str) -> dict:
    """OpenAPI 3.1 description of the static files under /api/."""

    def get(summary: str, ref: str, params: list | None = None) -> dict:
        op = {
            "summary": summary,
            "responses": {
                "200": {
                    "description": "OK",
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}
                    },
                },
                "404": {
                    "description": "No such file; the body of /api/404.json",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NotFound"}}
                    },
                },
            },
        }
        if params:
            op["parameters"] = params
        return {"get": op}

    rid = {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
    }
    project = {"name": "project", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "errorkb static API",
            "version": str(urls.SCHEMA_VERSION),
            "description": "Read-only JSON files, generated with the site.",
        },
        "servers": [{"url": base_url.rstrip("/")}],
        "paths": {
            "/api/errors/{id}.json": get(
                "One error record, with computed values", "ErrorDocument", [rid]
            ),
            "/api/errors/{id}": get(
                "The same document, extensionless form", "ErrorDocument", [rid]
            ),
            "/api/index.json": get("Counts, projects and guides", "Index"),
            "/api/projects/{project}.json": get("All errors of a project", "Project", [project]),
            urls.schema(): get("JSON Schema of an error document (ErrorDocument)", "AnyObject"),
            urls.record_schema(): get("JSON Schema of a record in content/", "AnyObject"),
        },
        "components": {
            "schemas": {
                # The published schema itself, by reference: one copy, one truth.
                "ErrorDocument": {
                    "$ref": posixpath.relpath(urls.schema(), posixpath.dirname(urls.openapi()))
                },
                "Index": {
                    "type": "object",
                    "required": ["schema_version", "count", "projects"],
                    "properties": {"count": {"type": "integer"}, "projects": {"type": "array"}},
                },
                "Project": {
                    "type": "object",
                    "required": ["schema_version", "key", "count", "errors"],
                    "properties": {
                        "count": {"type": "integer"},
                        "errors": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["id", "title", "url", "html_url"],
                            },
                        },
                    },
                },
                "NotFound": {
                    "type": "object",
                    "required": ["status", "error"],
                    "properties": {"status": {"const": 404}, "error": {"type": "string"}},
                },
                "AnyObject": {"type": "object"},
            }
        },
    }
