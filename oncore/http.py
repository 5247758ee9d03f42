"""HTTP helpers shared by the dashboard and the API."""

from django.http import HttpResponse

from oncore import audio


def wav_response(request, data: bytes) -> HttpResponse:
    """WAV bytes with HTTP Range support, so a browser can seek: 200 for the whole clip, 206 for a range.
    Raises ValueError for a range outside the clip (the caller answers 416 in its own shape)."""
    wanted = audio.http_range(len(data), request.headers.get("Range"))
    if wanted is None:
        response = HttpResponse(data, content_type="audio/wav")
    else:
        start, end = wanted
        response = HttpResponse(data[start : end + 1], content_type="audio/wav", status=206)
        response["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "private, max-age=3600"
    return response
