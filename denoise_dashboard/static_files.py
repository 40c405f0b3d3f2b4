"""Static files as a first visit wants them: content-hashed names cached for a
year (immutable), gzip and brotli copies made once by `collectstatic`, and
served to the ASGI server without Django's sync-iterator warning.

`make run` and `make test` collect into STATIC_ROOT. Before any collection (a
checkout's `pytest`, DEBUG) there is no manifest: a name it lacks keeps its plain
form, which WhiteNoise serves from the finders with a short cache.
"""

import os

from django.core.handlers.asgi import ASGIRequest
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.storage import CompressedManifestStaticFilesStorage

ONE_YEAR = 365 * 24 * 60 * 60
CHUNK_BYTES = 64 * 1024


class Storage(CompressedManifestStaticFilesStorage):
    def stored_name(self, name):
        try:
            return super().stored_name(name)
        except ValueError:  # not collected (yet): the finders' plain name
            return name

    def compress_files(self, paths):
        # A hashed name names its content: copies made by an earlier collection still
        # hold, so `make run` compresses only what changed (brotli's best is slow).
        fresh = [path for path in paths
                 if not all(os.path.exists(self.path(path) + suffix) for suffix in (".gz", ".br"))]
        yield from super().compress_files(fresh)


async def _chunks(file):
    # Local files in the page cache: a read is brief enough for the event loop,
    # where Django's handler would run each chunk of a sync iterator in a thread.
    try:
        while chunk := file.read(CHUNK_BYTES):
            yield chunk
    finally:
        file.close()


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    FOREVER = ONE_YEAR  # a hashed name never changes content

    @staticmethod
    def serve(static_file, request):
        response = WhiteNoiseMiddleware.serve(static_file, request)
        file = getattr(response, "file_to_stream", None)
        if isinstance(request, ASGIRequest) and file is not None:
            response.streaming_content = _chunks(file)
        return response
