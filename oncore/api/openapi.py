"""The API's reference: the server-rendered reference page built from the OpenAPI schema, and what the schema
says beyond ninja's own (`complete_schema`: the Idempotency-Key of every POST, the 415 of every JSON body, the
response headers, every error code, no unused components)."""

import json
import re

from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from ninja.openapi.docs import DocsBase

from .components import IDEMPOTENCY_PARAMETER, complete, referenced
from .errors import ERRORS, describe_codes

# ---------------------------------------------------------------- the reference page


class ReferencePage(DocsBase):
    """A server-rendered reference built from the OpenAPI schema: works offline, loads no script. It is read a
    section at a time (on a phone the whole of it was 400 KB and hundreds of screens tall): the page lists every
    tag with its operations, and ?tag=<name> shows that tag's operations in full with the schemas they use."""

    def render_page(self, request, api, **kwargs):
        schema = api.get_openapi_schema(path_params=kwargs, request=request)
        context = reference_context(schema, request.GET.get("tag"))
        return render(request, "api/reference.html", context, status=404 if context["unknown_tag"] else 200)


def code_spans(text: str) -> str:
    """Escape the text and show `backquoted` parts as code, for the reference and the error guide."""
    return mark_safe(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text or "")))


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def type_label(schema: dict) -> str:
    """A short human name for a JSON schema: 'integer', 'FlagOut', 'array of string', 'string or null'."""
    if not schema:
        return "any"
    if "$ref" in schema:
        return _ref_name(schema["$ref"])
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return " or ".join(dict.fromkeys(type_label(s) for s in schema[combo]))
    if "enum" in schema:
        return "one of " + ", ".join(json_value(v) for v in schema["enum"])
    kind = schema.get("type", "object")
    if kind == "array":
        return f"array of {type_label(schema.get('items', {}))}"
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    return kind


def _limits(schema: dict) -> str:
    parts = []
    for key, label in (
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ):
        if key in schema:
            parts.append(f"{label} {schema[key]}")
    if "default" in schema:
        parts.append(f"default {json_value(schema['default'])}")
    return ", ".join(parts)


def json_value(value) -> str:
    """A value as the API reads and writes it: JSON ("false", "null", "\"batch\""), never Python's repr."""
    return json.dumps(value, ensure_ascii=False)


def _fields(schema: dict) -> list[dict]:
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": type_label(prop),
            "required": name in required,
            "limits": _limits(prop),
            "description": code_spans(prop.get("description", "")),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def _refs(node) -> set[str]:
    """The component names a part of the schema refers to, directly."""
    if isinstance(node, dict):
        found = {_ref_name(node["$ref"])} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for k, v in node.items() if k != "$ref"))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def _reached(ops: list, components: dict) -> list[str]:
    """The component schemas these operations reach, through each other too, by name."""
    todo, seen = set().union(*(_refs(op) for op in ops)) if ops else set(), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in components:
            continue
        seen.add(name)
        todo |= _refs(components[name]) - seen
    return sorted(seen)


def reference_context(schema: dict, tag: str | None = None) -> dict:
    """The reference page's context: every tag with its operations (the index), and with `tag`, that tag's
    operations in full with the schemas they reach (`unknown_tag` when no tag has that name)."""
    components = schema.get("components", {}).get("schemas", {})

    def resolved(s: dict) -> dict:
        return components.get(_ref_name(s["$ref"]), {}) if "$ref" in s else s

    operations, raw = [], {}
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            raw.setdefault((op.get("tags") or ["API"])[0], []).append(op)
            body = None
            if "requestBody" in op:
                content_type, media = next(iter(op["requestBody"]["content"].items()))
                body_schema = media.get("schema", {})
                body = {
                    "content_type": content_type,
                    "type": type_label(body_schema),
                    "fields": _fields(resolved(body_schema)),
                }
            operations.append(
                {
                    "id": op.get("operationId", ""),
                    "method": method.upper(),
                    "path": path,
                    "tag": (op.get("tags") or ["API"])[0],
                    "summary": op.get("summary", ""),
                    "description": code_spans(op.get("description", "")),
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": type_label(p.get("schema", {})),
                            "limits": _limits(p.get("schema", {})),
                            "description": code_spans(p.get("description", "")),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "body": body,
                    "responses": [
                        {
                            "status": status,
                            "description": code_spans(r.get("description", "")),
                            "types": [
                                f"{ct}: {type_label(m.get('schema', {}))}"
                                for ct, m in r.get("content", {}).items()
                            ],
                        }
                        for status, r in sorted(
                            op.get("responses", {}).items(), key=lambda item: str(item[0])
                        )
                    ],
                }
            )
    tags: dict[str, list] = {}
    for op in operations:
        tags.setdefault(op["tag"], []).append(op)
    said = {t["name"]: code_spans(t.get("description", "")) for t in schema.get("tags", [])}
    info = schema.get("info", {})
    shown = tag if tag in tags else None
    return {
        "info": {**info, "description": code_spans(info.get("description", ""))},
        "tags": [(name, ops, said.get(name, "")) for name, ops in tags.items()],
        "tag": shown,
        "unknown_tag": tag if tag and shown is None else "",
        "operations": tags.get(shown, []),
        "description": said.get(shown, ""),
        "schemas": [
            {
                "name": name,
                "description": code_spans(components[name].get("description", "")),
                "fields": _fields(components[name]),
                "type": type_label(components[name]) if "properties" not in components[name] else "object",
            }
            for name in (_reached(raw[shown], components) if shown else [])
        ],
        "openapi_url": reverse("api:openapi-json"),
        "errors_url": reverse("api_errors"),
    }


# ---------------------------------------------------------------- what the schema says beyond ninja's own


def _add_codes(responses: dict, *codes: str) -> None:
    for code in codes:
        status = str(ERRORS[code].status)
        response = responses.setdefault(status, {"x-error-codes": []})
        if code not in response["x-error-codes"]:  # a new list: the operation's own stays as declared
            response["x-error-codes"] = [*response["x-error-codes"], code]
        response["description"] = describe_codes(response["x-error-codes"])


def _prune_components(schema: dict) -> None:
    """Drop the component schemas no operation or webhook reaches (ninja lists the query parameter models too)."""
    components = schema.get("components", {}).get("schemas", {})
    for name in set(components) - referenced(schema):
        del components[name]


def complete_schema(schema: dict, *, servers: list, tags: dict, events: list, rate_limited=()) -> None:
    """What ninja does not write itself: the Idempotency-Key of every POST, the 415 of every JSON body, the 429 of
    every operation under a rate limit (`rate_limited`: their ids), each error status typed with exactly its codes,
    the response headers, the webhooks, servers and tags (components.py), and no unused components."""
    for item in schema["paths"].values():
        for method, op in item.items():
            responses = {str(status): response for status, response in op["responses"].items()}
            if op["operationId"] in rate_limited:
                _add_codes(responses, "rate_limited")
            if method == "post":
                op.setdefault("parameters", []).append(IDEMPOTENCY_PARAMETER)
                _add_codes(responses, "invalid_request", "idempotency_key_reused")
            if "application/json" in op.get("requestBody", {}).get("content", {}):
                _add_codes(responses, "unsupported_media_type")
            op["responses"] = dict(sorted(responses.items()))
    complete(schema, servers=servers, tags=tags, events=events)
    _prune_components(schema)
