"""The pinned copy of Readium's Guided Navigation JSON Schema: the files are the published bytes, its ``$ref`` s
resolve among them and nowhere else, and it refuses documents that break it (so the export's check can fail).
The export of real pages is validated in test_read_along.py."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft7Validator
from referencing.exceptions import Unresolvable

from comic_narrator.web.guided import ROLE_OF_KIND
from tests.web.guided_schema import SCHEMA_DIR, SCHEMA_FILES, object_schema_text, pinned_schemas, registry
from tests.web.guided_schema import schema_errors as errors

VALID: dict[str, Any] = {
    "guided": [
        {
            "id": "page1",
            "imgref": "pages/page-0001.png",
            "audioref": "narration.m4a#t=0.000,9.500",
            "children": [
                {
                    "id": "page1-panel1",
                    "role": ["panel"],
                    "imgref": "pages/page-0001.png#xywh=10,20,300,400",
                    "character": ["Pepper"],
                    "children": [
                        {
                            "id": "p001-t01",
                            "role": ["bubble"],
                            "imgref": "pages/page-0001.png#xywh=40,60,120,80",
                            "audioref": "narration.m4a#t=0.500,2.250",
                            "text": "Carrot, get out the map!",
                            "character": ["Pepper"],
                        }
                    ],
                }
            ],
        }
    ]
}


def test_the_pinned_files_are_the_published_bytes() -> None:
    table = (SCHEMA_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    recorded = dict(re.findall(r"^\| `([a-z]+\.schema\.json)` \|.*\| `([0-9a-f]{64})` \|$", table, re.MULTILINE))
    assert sorted(recorded) == sorted(SCHEMA_FILES)
    for name in SCHEMA_FILES:
        assert hashlib.sha256((SCHEMA_DIR / name).read_bytes()).hexdigest() == recorded[name], name


def test_the_object_schema_is_repaired_to_the_document_schemas_own_copy() -> None:
    with pytest.raises(json.JSONDecodeError):  # as published: the comma after "id" is missing
        json.loads((SCHEMA_DIR / "object.schema.json").read_text(encoding="utf-8"))
    repaired = json.loads(object_schema_text())
    own_copy = pinned_schemas()["document.schema.json"]["$defs"]["object"]
    assert (repaired["type"], repaired["properties"], repaired["anyOf"]) == (
        own_copy["type"],
        own_copy["properties"],
        own_copy["anyOf"],
    )


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_each_schema_is_a_valid_draft_07_schema(name: str) -> None:
    """What the repository's own CI checks (validate-json-schema.yml: every schema/*.schema.json against the JSON
    Schema meta-schema), here on the pinned files (the object schema once repaired). Formats are left out of this
    check: text.schema.json's language-tag pattern uses ECMA-262 named groups, ``(?<name>...)``, as JSON Schema
    regexes may, which Python's ``re`` (``(?P<name>...)``) cannot compile. The export writes ``text`` as a string,
    so that pattern (for a text object's ``language``) is never applied to it."""
    Draft7Validator.check_schema(pinned_schemas()[name], format_checker=None)


def test_references_resolve_among_the_pinned_files_and_nowhere_else() -> None:
    resolver = registry().resolver()
    for name in SCHEMA_FILES:
        uri = f"https://readium.org/guided-navigation/schema/{name}"
        assert resolver.lookup(uri).contents == pinned_schemas()[name]
    # README's link objects live in another repository's schema: never fetched.
    with pytest.raises(Unresolvable):
        resolver.lookup("https://readium.org/webpub-manifest/schema/link.schema.json")


def test_the_export_uses_only_the_schemas_roles() -> None:
    roles = set(pinned_schemas()["roles.schema.json"]["enum"])
    assert set(ROLE_OF_KIND.values()) | {"panel"} <= roles


def _balloon(document: dict[str, Any]) -> dict[str, Any]:
    balloon: dict[str, Any] = document["guided"][0]["children"][0]["children"][0]
    return balloon


BREAKAGES: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    # breakage: (the change, the path of the error it must raise)
    "the comic examples' speechBubble": (
        lambda d: _balloon(d).update(role=["speechBubble"]),
        "guided/0/children/0/children/0/role/0",
    ),
    "a page role": (lambda d: d["guided"][0].update(role=["page"]), "guided/0/role/0"),
    "a role as a string": (lambda d: d["guided"][0]["children"][0].update(role="panel"), "guided/0/children/0/role"),
    "empty text": (lambda d: _balloon(d).update(text=""), "guided/0/children/0/children/0/text"),
    "nothing to show or play": (
        lambda d: [_balloon(d).pop(key) for key in ("imgref", "audioref", "text")],
        "guided/0/children/0/children/0",
    ),
    "a space in a file name": (
        lambda d: _balloon(d).update(imgref="pages/page 1.png#xywh=1,2,3,4"),
        "guided/0/children/0/children/0/imgref",
    ),
    "no children in a list": (
        lambda d: d["guided"][0]["children"][0].update(children=[]),
        "guided/0/children/0/children",
    ),
    "no pages": (lambda d: d.update(guided=[]), "guided"),
    "no guided": (lambda d: d.pop("guided"), "(root)"),
}


def test_the_valid_document_validates() -> None:
    assert errors(VALID) == []


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_document_fails(breakage: str) -> None:
    change, where = BREAKAGES[breakage]
    document = copy.deepcopy(VALID)
    change(document)
    found = errors(document)
    assert where in [error.split(": ", 1)[0] for error in found], found
