"""Readium's Guided Navigation JSON Schema, from the pinned copy in tests/data (PROVENANCE.md there), as a
validator whose ``$ref`` s resolve among the pinned files only: nothing is ever fetched."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "data" / "readium-guided-navigation"
SCHEMA_FILES = (
    "document.schema.json",
    "object.schema.json",
    "roles.schema.json",
    "text.schema.json",
    "description.schema.json",
)
_UNCLOSED_ID = '"id": {\n      "type": "string"\n    }\n    "audioref"'
"""object.schema.json as published at 0e6d5415 lacks the comma after its ``id`` property (PROVENANCE.md)."""


def object_schema_text() -> str:
    """The pinned object schema with its one missing comma put back; loudly wrong if the pinned file changes."""
    text = (SCHEMA_DIR / "object.schema.json").read_text(encoding="utf-8")
    if text.count(_UNCLOSED_ID) != 1:
        raise AssertionError("object.schema.json is no longer the pinned 0e6d5415 version: review the repair")
    return text.replace(_UNCLOSED_ID, _UNCLOSED_ID.replace("}\n", "},\n", 1))


def pinned_schemas() -> dict[str, dict[str, Any]]:
    """File name -> parsed schema, the object schema repaired."""
    found: dict[str, dict[str, Any]] = {}
    for name in SCHEMA_FILES:
        text = object_schema_text() if name == "object.schema.json" else (SCHEMA_DIR / name).read_text("utf-8")
        found[name] = json.loads(text)
    return found


@cache
def registry() -> Registry[Any]:
    """The pinned schemas under their own ``$id`` s; a Registry without a retriever, so a ``$ref`` to anything
    else fails (Unresolvable) instead of going to the network."""
    resources = [(schema["$id"], Resource.from_contents(schema)) for schema in pinned_schemas().values()]
    return Registry().with_resources(resources)


@cache
def validator() -> Draft7Validator:
    """document.schema.json's validator, formats (``uri-reference``) checked."""
    document = pinned_schemas()["document.schema.json"]
    return Draft7Validator(document, registry=registry(), format_checker=Draft7Validator.FORMAT_CHECKER)


def schema_errors(document: object) -> list[str]:
    """Every way ``document`` breaks the schema, as ``path: message`` lines (empty when it validates)."""
    errors = sorted(validator().iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}" for error in errors]
