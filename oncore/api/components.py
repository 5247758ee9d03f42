"""What the OpenAPI schema says beyond ninja's own, for client generators to read: each error status of each
operation typed with exactly its codes (a union on `code`, each code with its own `detail`), the response
headers the server sends, the webhooks (OpenAPI 3.1 `webhooks`: each event's payload and its signature headers),
the servers, the tags with their descriptions, and a description for every path parameter. openapi.py's
`complete_schema` calls `complete`."""

import json
import re

from ninja.schema import NinjaGenerateJsonSchema
from pydantic.json_schema import models_json_schema

from oncore import idempotency

from .errors import DETAIL_SCHEMAS, ERRORS, describe_codes

REF = "#/components/schemas/{}"
COMMON_ERROR = "ErrorOut"  # the one error shape every error answer has (common_error)

# ---------------------------------------------------------------- headers

IDEMPOTENCY_PARAMETER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Any unique string of 1 to 255 printable ASCII characters (a random UUID). The same key and "
    "request within 24 hours replays the first answer without doing the work again (with `Idempotent-Replayed: "
    "true`); the same key with another request is refused (409 `idempotency_key_reused`); a key outside those "
    "characters is refused with 422 `validation_error`.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": idempotency.MAX_KEY_LENGTH,
        "pattern": idempotency.KEY_PATTERN,
    },
}
HEADERS = {
    "ApiVersion": (
        "OnCore-API-Version",
        "The API's version (semantic, as the schema's `info.version`): its major part moves with a change that "
        "can break a client. See the versioning policy.",
    ),
    "Deprecation": (
        "Deprecation",
        "Only when the request used a deprecated field, parameter or value (such as the run label `live_right`): "
        "when it was deprecated (RFC 9745, `@<unix time>`). Move to what the changelog names.",
    ),
    "Sunset": (
        "Sunset",
        "Only beside Deprecation: the earliest day the deprecated word may stop being read (RFC 8594, an HTTP "
        "date), six months after it was deprecated at least.",
    ),
    "RequestId": (
        "X-Request-Id",
        "The request's id: the one the client sent in X-Request-Id, else a new one. It is in the server's log "
        "line of the request; quote it when reporting a problem.",
    ),
    "Location": ("Location", "The URL of the new object."),
    "RetryAfter": ("Retry-After", "Seconds to wait before trying again."),
    "WWWAuthenticate": ("WWW-Authenticate", "`Bearer`: send an organization key as a bearer token."),
    "IdempotentReplayed": (
        "Idempotent-Replayed",
        "`true` when this answer replays the first answer to the same Idempotency-Key; absent otherwise.",
    ),
    "ContentRange": (
        "Content-Range",
        "`bytes START-END/LENGTH` on a part of the clip (206); `bytes */LENGTH` when the range is outside it (416).",
    ),
    "AcceptRanges": ("Accept-Ranges", "`bytes`: ask for part of the clip with a Range header."),
    "ContentDisposition": (
        "Content-Disposition",
        '`attachment; filename="..."`: the file name to save the download under.',
    ),
}
HEADERS_BY_STATUS = {"201": ["Location"], "429": ["RetryAfter"], "401": ["WWWAuthenticate"]}


def _headers(op: dict, method: str, status: str, response: dict) -> dict:
    names = ["RequestId", "ApiVersion", "Deprecation", "Sunset", *HEADERS_BY_STATUS.get(status, [])]
    if method == "post" and status.startswith("2"):
        names.append("IdempotentReplayed")
    content = response.get("content", {})
    if "text/csv" in content:
        names.append("ContentDisposition")
    if "audio/wav" in content:
        names += ["AcceptRanges", "ContentRange"] if status == "206" else ["AcceptRanges"]
    if status == "416":
        names.append("ContentRange")
    return {HEADERS[n][0]: {"$ref": f"#/components/headers/{n}"} for n in names}


# ---------------------------------------------------------------- typed errors


def pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text) if part)


def _schemas_of(models: list, components: dict) -> None:
    """Add the models' JSON schemas (and those they use) to the components, as ninja writes them."""
    if not models:
        return
    _, top = models_json_schema(
        [(m, "serialization") for m in models],
        ref_template="#/components/schemas/{model}",
        schema_generator=NinjaGenerateJsonSchema,
    )
    for name, schema in top.get("$defs", {}).items():
        components.setdefault(name, schema)


class ErrorTypes:
    """The error components of one schema: a body per code (and per detail shape where an operation names
    another), and a response body per set of codes."""

    def __init__(self, components: dict):
        self.components = components
        self.models: list = []

    def variant(self, code: str, detail: type | None) -> str:
        if detail is None:
            raise ValueError(
                f"The error code {code!r} has no detail shape of its own: name it in doc(details=...)."
            )
        own = ERRORS[code].detail is detail
        name = f"{pascal(code)}Error" if own else f"{pascal(code)}{detail.__name__}Error"
        if name not in self.components:
            self.models.append(detail)
            e = ERRORS[code]
            self.components[name] = {
                "type": "object",
                "title": name,
                "description": f"{e.title} ({e.status}). {e.what_to_do}",
                "required": ["code", "message", "detail"],
                "properties": {
                    "code": {"type": "string", "enum": [code], "description": "Stable: branch on it."},
                    "message": {
                        "type": "string",
                        "description": "What went wrong and what to do, for people.",
                    },
                    "detail": {"$ref": REF.format(detail.__name__)},
                },
            }
        return name

    def body(self, op_id: str, status: str, codes: list[str], details: dict[str, str]) -> str:
        variants = [
            self.variant(c, DETAIL_SCHEMAS[details[c]] if c in details else ERRORS[c].detail) for c in codes
        ]
        if len(variants) == 1:
            name = variants[0].removesuffix("Error") + "Response"
            error = {"$ref": REF.format(variants[0])}
        else:
            name = f"{pascal(op_id)}{status}Response"
            error = {
                "oneOf": [{"$ref": REF.format(v)} for v in variants],
                "discriminator": {
                    "propertyName": "code",
                    "mapping": {c: REF.format(v) for c, v in zip(codes, variants, strict=True)},
                },
            }
        self.components.setdefault(
            name,
            {
                "type": "object",
                "title": name,
                "description": describe_codes(codes) + f" Also an {COMMON_ERROR}, the common error type.",
                "allOf": [{"$ref": REF.format(COMMON_ERROR)}],
                "required": ["error"],
                "properties": {"error": error},
            },
        )
        return name

    def finish(self) -> None:
        _schemas_of(list(dict.fromkeys(self.models)), self.components)


# ---------------------------------------------------------------- the common error type


def common_error(components: dict) -> None:
    """ErrorOut and ErrorBody: the one shape every error answer has, for clients that want one error type. Each
    operation's errors are typed exactly (the per-operation responses); each of those is also an ErrorOut: the same
    `error` object whose `code` is one of ErrorBody's, `message` a string and `detail` an object."""
    components["ErrorBody"] = {
        "type": "object",
        "title": "ErrorBody",
        "description": "An error of any operation: its code, what to do, and the code's facts.",
        "required": ["code", "message", "detail"],
        "properties": {
            "code": {
                "type": "string",
                "enum": list(ERRORS),
                "description": "Stable: branch on it. The error guide says what to do about each. New codes may be "
                "added: treat an unknown one by its HTTP status.",
            },
            "message": {"type": "string", "description": "What went wrong and what to do, for people."},
            "detail": {
                "type": "object",
                "additionalProperties": True,
                "description": "The code's facts (may be {}); each operation's own error types say which.",
            },
        },
    }
    components[COMMON_ERROR] = {
        "type": "object",
        "title": COMMON_ERROR,
        "description": "The common error type: every error answer of every operation is one. Operations type their "
        "errors exactly (a union on `code`, each with its own `detail`); each of those is also an ErrorOut.",
        "required": ["error"],
        "properties": {"error": {"$ref": REF.format("ErrorBody")}},
    }


# ---------------------------------------------------------------- webhooks

SIGNATURE_HEADERS = [
    {
        "name": "OnCore-Signature",
        "in": "header",
        "required": True,
        "description": '`t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the endpoint\'s secret>`. '
        "Check it in constant time, and refuse a timestamp older than five minutes (a replay).",
        "schema": {"type": "string", "pattern": "^t=[0-9]+,v1=[0-9a-f]{64}$"},
    },
    {
        "name": "OnCore-Event-Id",
        "in": "header",
        "required": True,
        "description": "The event's id, as in the body's `id`: an event may arrive twice; do its work once.",
        "schema": {"type": "string"},
    },
    {
        "name": "OnCore-Event-Type",
        "in": "header",
        "required": True,
        "description": "The event's type, as in the body's `type`.",
        "schema": {"type": "string"},
    },
]


def _webhooks(events: list, components: dict) -> dict:
    """OpenAPI 3.1 webhooks: one POST per event, its payload schema and the signature headers."""
    _schemas_of([e["payload"] for e in events], components)
    return {
        e["name"]: {
            "post": {
                "operationId": f"on_{e['name'].replace('.', '_')}",
                "summary": e["name"],
                "description": e["description"],
                "tags": ["Webhooks"],
                "security": [],
                "parameters": SIGNATURE_HEADERS,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": REF.format(e["payload"].__name__)}}},
                },
                "responses": {
                    "200": {"description": "Any 2xx answer, within 10 seconds, delivers the event."},
                    "400": {
                        "description": "Anything else (or no answer) is tried again later, with backoff."
                    },
                },
            }
        }
        for e in events
    }


# ---------------------------------------------------------------- the whole

# Path parameters, described once: every operation names its objects the same way.
PATH_PARAMETERS = {
    "bank_id": "The bank's id (GET /banks).",
    "call_id": "The call's id (GET /calls).",
    "flag_id": "The flag's id (GET /flags).",
    "line_id": "The line's id (a call's `line_items`).",
    "transcriber_id": "The transcriber's id in the catalogue (GET /transcribers).",
    "run_id": "The full-call run's id (GET /runs).",
    "run_line_id": "The run line's id (GET /runs/{run_id}/lines or /review).",
    "webhook_id": "The webhook endpoint's id (GET /webhooks).",
    "delivery_id": "The delivery's id (GET /webhooks/{webhook_id}/deliveries).",
    "vocabulary_id": "The vocabulary's id (GET /vocabularies).",
}


def complete(schema: dict, *, servers: list, tags: dict, events: list) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    errors = ErrorTypes(components)
    used_tags: list[str] = []
    for item in schema["paths"].values():
        for method, op in item.items():
            used_tags += [t for t in op.get("tags", []) if t not in used_tags]
            for parameter in op.get("parameters", []):
                if parameter["in"] == "path" and not parameter.get("description"):
                    parameter["description"] = PATH_PARAMETERS[parameter["name"]]
            for status, response in op["responses"].items():
                codes = response.get("x-error-codes")
                if codes:
                    body = errors.body(op["operationId"], status, codes, response.pop("x-error-details", {}))
                    response["content"] = {"application/json": {"schema": {"$ref": REF.format(body)}}}
                response["headers"] = _headers(op, method, status, response)
    errors.finish()
    common_error(components)
    schema["components"]["headers"] = {
        name: {"description": description, "schema": {"type": "string"}}
        for name, (_header, description) in HEADERS.items()
    }
    if events:
        schema["webhooks"] = _webhooks(events, components)
        used_tags += [] if "Webhooks" in used_tags else ["Webhooks"]
    schema["servers"] = servers
    missing = [t for t in used_tags if not tags.get(t)]
    if missing:
        raise ValueError(f"Describe the API tags {missing} (OnCoreAPI.describe_tag).")
    schema["tags"] = [{"name": t, "description": tags[t]} for t in used_tags]
    request_defaults_in_words(schema)


def _reached(node, components: dict) -> set[str]:
    refs = re.compile(r'"#/components/schemas/([^"]+)"')
    reached: set[str] = set()
    todo = set(refs.findall(json.dumps(node)))
    while todo:
        name = todo.pop()
        reached.add(name)
        todo |= set(refs.findall(json.dumps(components.get(name, {})))) - reached
    return reached


def request_defaults_in_words(schema: dict) -> None:
    """A request body field the server fills in when it is left out says its default in words, not with
    `default`: generators read `default` as "always present" (openapi-typescript's default settings make such a
    field required in a `components/schemas` type, so `{"name": ...}` would not compile as a BankIn), which is
    true of answers, not of requests. Only the schemas that nothing but request bodies reach change."""
    components = schema.get("components", {}).get("schemas", {})
    bodies, others = [], []
    for item in schema["paths"].values():
        for op in item.values():
            bodies.append(op.get("requestBody", {}))
            others.append([op.get("parameters", []), op.get("responses", {})])
    only_requests = _reached(bodies, components) - _reached([others, schema.get("webhooks", {})], components)
    for name in sorted(only_requests):
        for prop in components[name].get("properties", {}).values():
            if "default" in prop:
                default = prop.pop("default")
                if prop.get("type") == "number" and isinstance(default, str):  # a Decimal's default
                    default = float(default)
                value = json.dumps(default, ensure_ascii=False)
                text = prop.get("description", "").rstrip()
                prop["description"] = f"{text} Default when left out: `{value}`.".strip()


def referenced(schema: dict) -> set[str]:
    """The component schemas the paths and webhooks reach, and the common error type."""
    return _reached(
        [schema["paths"], schema.get("webhooks", {}), {"$ref": REF.format(COMMON_ERROR)}],
        schema.get("components", {}).get("schemas", {}),
    )
