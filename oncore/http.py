"""HTTP helpers shared by the dashboard and the API: a line's clip streamed with Range support, redirects to a
`next` URL that stay on this site, and the site's icon."""

from functools import cache
from pathlib import Path

from django.conf import settings
from django.http import HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from oncore import audio
from oncore.errors import MAX_ID


def ids_in(values) -> list[int]:
    """The ids among some strings (a query string's or a form's values): whole numbers from 1 to MAX_ID, each
    once, in order; anything else is left out."""
    ids = []
    for value in values:
        value = str(value).strip()
        if value.isascii() and value.isdigit() and len(value) <= 19 and 0 < int(value) <= MAX_ID:
            ids.append(int(value))
    return list(dict.fromkeys(ids))


def id_in(value) -> int | None:
    """The id a string holds (see ids_in), else None."""
    found = ids_in([value or ""])
    return found[0] if found else None


def clip_response(request, clip: audio.Clip) -> StreamingHttpResponse:
    """A clip's playback WAV with HTTP Range support, so a browser can seek: 200 for the whole clip, 206 for a
    range. Streamed a block at a time, and only the frames the range holds are decoded, so memory stays bounded
    whatever the clip's length. Raises ValueError for a range outside the clip (the caller answers 416 in its
    own shape)."""
    size = clip.wav_size
    wanted = audio.http_range(size, request.headers.get("Range"))
    if wanted is None:
        response = StreamingHttpResponse(clip.wav_bytes(), content_type="audio/wav")
        response["Content-Length"] = str(size)
    else:
        start, end = wanted
        response = StreamingHttpResponse(clip.wav_bytes(start, end), content_type="audio/wav", status=206)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "private, max-age=3600"
    return response


def safe_next(request, default: str) -> str:
    """The `next` URL a form sent (POST, else GET) when it stays on this site with an allowed scheme, else
    `default`. Never a view name: whatever is sent is only ever used as a URL."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return default


def redirect_next(request, default: str) -> HttpResponseRedirect:
    """Redirect to the form's `next` URL if it is safe (see safe_next), else to `default` (a URL)."""
    return HttpResponseRedirect(safe_next(request, default))


def query_without_page(request, *also) -> str:
    """The page's query string without its page (and fragment) number and the names in `also`, for the
    pagination links."""
    q = request.GET.copy()
    for name in ("page", "fragment", *also):
        q.pop(name, None)
    return q.urlencode()


@cache
def _icon() -> bytes:
    return (Path(settings.BASE_DIR) / "static" / "favicon.svg").read_bytes()


@require_GET
def favicon(request):
    """/favicon.ico, which browsers and feed readers ask for whatever a page links: the site's SVG icon."""
    return HttpResponse(
        _icon(), content_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )
