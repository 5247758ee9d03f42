"""Breaking changes between two OpenAPI schemas of this API: what a client written against the old one (by hand or
generated) would trip on with the new one. Pure: two schemas (dicts) in, a sorted list of Break out.

What breaks, by direction (docs/api.md, Versions):
- an operation, a webhook event, a named schema (generated clients name them), a parameter, a request body, a
  response status or media type removed; an operation id changed;
- in what a client sends (parameters, request bodies): a new required parameter or field, a field removed (the
  API refuses fields it does not list), a type no longer accepted, an enum value removed, a range, a length, an
  item count or a pattern narrowed;
- in what the server answers (responses, webhook payloads): a field removed or no longer always present, a new
  type (null included) where the old schema promised another, an enum value removed (a client's `case` on it no
  longer compiles), a string turned into an enum or an enum into any string (generated types change), a variant
  of a union removed.
Additions are not breaks: new operations, optional parameters and fields, answer fields, response statuses, enum
values in answers and variants of a discriminated union in answers (a new error code; clients handle unknown
codes through the common error type).

Named schemas are compared once per direction, and their breaks are named by the schema ("FlagOut field ..."),
so a change to a shared schema is reported once, however many operations use it."""

from dataclasses import dataclass

REF = "#/components/schemas/"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
IN, OUT = "request", "answer"


@dataclass(frozen=True, order=True)
class Break:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def breaking_changes(old: dict, new: dict) -> list[Break]:
    """Every breaking change from `old` to `new` (OpenAPI 3.1 dicts), sorted."""
    return sorted(set(_Compare(old, new).run()))


class _Compare:
    def __init__(self, old: dict, new: dict):
        self.old, self.new = old, new
        self.breaks: list[Break] = []
        self.seen: set = set()  # named schemas compared (with themselves), by direction
        self.active: set = set()  # two different named schemas being compared

    def add(self, where: str, what: str) -> None:
        self.breaks.append(Break(where, what))

    def run(self) -> list[Break]:
        old_names = set(self.old.get("components", {}).get("schemas", {}))
        new_names = set(self.new.get("components", {}).get("schemas", {}))
        for name in sorted(old_names - new_names):
            self.add(f"schema {name}", "removed")
        for path, item in self.old.get("paths", {}).items():
            for method, op in item.items():
                if method not in METHODS:
                    continue
                where = f"{method.upper()} {path}"
                found = self.new.get("paths", {}).get(path, {}).get(method)
                if found is None:
                    self.add(where, "operation removed")
                else:
                    self.operation(where, op, found)
        for name, item in self.old.get("webhooks", {}).items():
            found = self.new.get("webhooks", {}).get(name)
            if found is None:
                self.add(f"webhook {name}", "event removed")
                continue
            for media, old_media, new_media in self.media(
                f"webhook {name}", item["post"].get("requestBody", {}), found["post"].get("requestBody", {})
            ):
                self.schema(f"webhook {name} payload ({media})", old_media, new_media, OUT)
        return self.breaks

    # ---------------------------------------------------------------- operations

    def operation(self, where: str, old: dict, new: dict) -> None:
        if old.get("operationId") != new.get("operationId"):
            self.add(where, f"operationId {old.get('operationId')!r} became {new.get('operationId')!r}")
        old_params = {(p["in"], p["name"]): p for p in (self.resolve(p) for p in old.get("parameters", []))}
        new_params = {
            (p["in"], p["name"]): p for p in (self.resolve(p, self.new) for p in new.get("parameters", []))
        }
        for key, param in old_params.items():
            here = f"{where} {key[0]} parameter {key[1]}"
            if key not in new_params:
                self.add(here, "removed")
                continue
            if new_params[key].get("required") and not param.get("required"):
                self.add(here, "became required")
            self.schema(here, param.get("schema", {}), new_params[key].get("schema", {}), IN)
        for key, param in new_params.items():
            if key not in old_params and param.get("required"):
                self.add(f"{where} {key[0]} parameter {key[1]}", "new required parameter")
        old_body, new_body = old.get("requestBody"), new.get("requestBody")
        if old_body and not new_body:
            self.add(where, "request body removed")
        elif new_body and new_body.get("required") and not (old_body or {}).get("required"):
            self.add(where, "request body became required")
        if old_body and new_body:
            for media, old_media, new_media in self.media(f"{where} request body", old_body, new_body):
                self.schema(f"{where} request body ({media})", old_media, new_media, IN)
        for status, response in old.get("responses", {}).items():
            found = new.get("responses", {}).get(status)
            if found is None:
                self.add(where, f"response {status} removed")
                continue
            for media, old_media, new_media in self.media(f"{where} response {status}", response, found):
                self.schema(f"{where} response {status} ({media})", old_media, new_media, OUT)

    def media(self, where: str, old: dict, new: dict):
        """(media type, old schema, new schema) of each media type both have; a removed one is a break."""
        new_content = new.get("content", {})
        for media, content in old.get("content", {}).items():
            if media not in new_content:
                self.add(where, f"media type {media} removed")
            else:
                yield media, content.get("schema", {}), new_content[media].get("schema", {})

    # ---------------------------------------------------------------- schemas

    def resolve(self, node: dict, root: dict | None = None) -> dict:
        while "$ref" in node:
            kind, name = node["$ref"].split("/")[-2:]
            node = (root or self.old).get("components", {}).get(kind, {}).get(name, {})
        return node

    def alternatives(self, schema: dict, root: dict) -> list[tuple[str, dict]]:
        """The schema as a list of (label, schema): each member of anyOf/oneOf, each type of a type list, each
        named by its component ($ref) or by its type."""
        name = schema["$ref"].removeprefix(REF) if "$ref" in schema else None
        schema = self.resolve(schema, root)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return [alt for member in schema[key] for alt in self.alternatives(member, root)]
        if len(schema.get("allOf", [])) == 1 and not ({"type", "properties"} & set(schema)):
            return self.alternatives(schema["allOf"][0], root)  # a named type under another name
        types = schema.get("type")
        if isinstance(types, list):
            return [(name or t, {**schema, "type": t}) for t in types]
        if "const" in schema:
            schema = {**schema, "enum": [schema["const"]]}
        kind = types or ("object" if "properties" in schema else _enum_kind(schema.get("enum")))
        return [(name or kind, {**schema, "type": kind})]

    def schema(self, where: str, old: dict, new: dict, direction: str) -> None:
        """Compare two schemas: a named one once per direction (its breaks named by it), two different named ones
        wherever they meet (a cycle through them is walked once)."""
        names = (old.get("$ref"), new.get("$ref"))
        if not (names[0] and names[1]):
            return self.compare(where, old, new, direction)
        key = (names, direction)
        if names[0] == names[1]:
            if key not in self.seen:
                self.seen.add(key)
                self.compare(f"schema {names[0].removeprefix(REF)} ({direction})", old, new, direction)
        elif key not in self.active:
            self.active.add(key)
            self.compare(where, old, new, direction)
            self.active.discard(key)

    def compare(self, where: str, old: dict, new: dict, direction: str) -> None:
        old_alts = self.alternatives(old, self.old)
        new_alts = self.alternatives(new, self.new)
        union = self.resolve(new, self.new)
        discriminated = "discriminator" in union
        for label, old_alt in old_alts:
            match = _match(label, old_alt, new_alts)
            if match is None:
                if old_alt["type"] == "null" and direction == OUT:
                    continue  # no longer null in answers: nothing a client handles breaks
                if old_alt["type"] is None:
                    continue  # any value before: nothing narrower to hold the new one to
                self.add(where, f"no longer {_label(label, old_alt)}")
                continue
            self.one(where, old_alt, match, direction)
        if direction == OUT and not _is_any(old):
            for label, new_alt in new_alts:
                if _match(label, new_alt, old_alts) is None and not discriminated:
                    self.add(where, f"may now be {_label(label, new_alt)}")

    def one(self, where: str, old: dict, new: dict, direction: str) -> None:
        kind = old["type"]
        if kind == "object":
            self.object(where, old, new, direction)
        elif kind == "array":
            self.schema(f"{where} items", old.get("items", {}), new.get("items", {}), direction)
            if direction == IN:
                self.narrowed(where, old, new, ("maxItems",), ("minItems",))
        elif kind in ("string", "integer", "number", "boolean"):
            self.enum(where, old.get("enum"), new.get("enum"), direction)
            if old.get("format") != new.get("format") and (new.get("format") or direction == OUT):
                self.add(where, f"format {old.get('format')!r} became {new.get('format')!r}")
            if direction == IN:
                self.narrowed(where, old, new, ("maximum", "exclusiveMaximum", "maxLength"), ("minimum",))
                self.narrowed(where, old, new, (), ("exclusiveMinimum", "minLength"))
                if new.get("pattern") and new.get("pattern") != old.get("pattern"):
                    self.add(where, f"pattern {old.get('pattern')!r} became {new['pattern']!r}")

    def enum(self, where: str, old: list | None, new: list | None, direction: str) -> None:
        if old is not None and new is not None:
            for value in old:
                if value not in new:
                    self.add(where, f"enum value {value!r} removed")
        elif old is None and new is not None:  # a request takes less; an answer's type is no longer the same
            self.add(where, f"now only one of {new!r}" if direction == IN else f"became an enum of {new!r}")
        elif old is not None and new is None and direction == OUT:
            self.add(where, "no longer an enum")

    def narrowed(self, where: str, old: dict, new: dict, upper: tuple, lower: tuple) -> None:
        for key in upper:
            if key in new and (key not in old or new[key] < old[key]):
                self.add(where, f"{key} {old.get(key)!r} became {new[key]!r}")
        for key in lower:
            if key in new and (key not in old or new[key] > old[key]):
                self.add(where, f"{key} {old.get(key)!r} became {new[key]!r}")

    def object(self, where: str, old: dict, new: dict, direction: str) -> None:
        old_props, new_props = old.get("properties", {}), new.get("properties", {})
        old_required, new_required = set(old.get("required", [])), set(new.get("required", []))
        for name, prop in old_props.items():
            here = f"{where} field {name}"
            if name not in new_props:
                if new.get("additionalProperties") not in (None, False) and direction == IN:
                    continue  # any field is still taken
                self.add(here, "removed")
                continue
            if direction == OUT and name in old_required and name not in new_required:
                self.add(here, "no longer always present")
            self.schema(here, prop, new_props[name], direction)
        if direction == IN:
            for name in sorted(new_required - old_required):
                self.add(
                    f"{where} field {name}",
                    "new required field" if name not in old_props else "became required",
                )
        old_extra, new_extra = old.get("additionalProperties"), new.get("additionalProperties")
        if isinstance(old_extra, dict) and isinstance(new_extra, dict):
            self.schema(f"{where} values", old_extra, new_extra, direction)


def _enum_kind(values) -> str | None:
    if not values:
        return None
    kinds = {type(v) for v in values}
    return (
        {str: "string", bool: "boolean", int: "integer", float: "number"}.get(kinds.pop())
        if len(kinds) == 1
        else None
    )


def _is_any(schema: dict) -> bool:
    return not any(
        k in schema for k in ("$ref", "type", "anyOf", "oneOf", "allOf", "enum", "const", "properties")
    )


def _label(label: str, schema: dict) -> str:
    return label if label == schema.get("type") else f"{label} ({schema.get('type')})"


def _match(label: str, alt: dict, others: list):
    """The alternative among `others` that `alt` (labelled `label`) corresponds to: the same component, else the
    same type (an integer is a number too: a request's old integer is taken by a new number, an answer's new
    integer was a number before)."""
    for other_label, other in others:
        if other_label == label:
            return other
    named = label != alt["type"]
    for other_label, other in others:
        other_named = other_label != other["type"]
        if other["type"] == alt["type"] and not (named and other_named):
            return other
    if alt["type"] == "integer":
        return next((o for _, o in others if o["type"] == "number"), None)
    return None
