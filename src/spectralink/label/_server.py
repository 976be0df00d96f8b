"""The local web server of the labelling page (Flask, the ``[label]`` extra).

It binds to 127.0.0.1 only; every request must carry the run's token (in the page's URL,
sent back by the page in a header) and name this server as its host, so that neither
another user of the machine without the URL nor another site open in the browser can
answer, read or undo. It sends one page, JSON, and the image files of the data's image
column, nothing else.
"""

from __future__ import annotations

import hmac
import logging
import mimetypes
import secrets
import threading
from importlib import resources

from ..exceptions import MissingExtraError
from ._session import LabelSession

#: What to install when Flask is missing.
EXTRA = 'pip install "spectralink[label]"'
#: The header the page sends the token in.
TOKEN_HEADER = "X-Spectralink-Token"
_ANSWERS = {"same": True, "different": False, "skip": None}


def require_web_stack() -> None:
    """Raise :class:`~spectralink.exceptions.MissingExtraError` (naming the extra) when
    Flask is missing."""
    try:
        import flask  # noqa: F401
    except ImportError:
        raise MissingExtraError(
            f"spectralink label needs the optional web stack: {EXTRA}"
        ) from None


def new_token() -> str:
    """A per-run secret for the page's URL."""
    return secrets.token_urlsafe(24)


def create_app(session: LabelSession, token: str, port: int | None = None):
    """The Flask application serving ``session`` to holders of ``token``.

    ``port`` (when known) restricts the accepted ``Host`` header to this server.
    """
    require_web_stack()
    from flask import Flask, abort, jsonify, request, send_file

    app = Flask("spectralink.label")
    page = resources.files("spectralink.label").joinpath("page.html").read_text("utf-8")
    hosts = None if port is None else {f"127.0.0.1:{port}", f"localhost:{port}"}

    @app.before_request
    def check_request():
        if hosts is not None and request.host not in hosts:
            abort(403)  # a page of another site reaching 127.0.0.1 under its own name
        given = request.headers.get(TOKEN_HEADER) or request.args.get("token", "")
        if not hmac.compare_digest(given.encode(), token.encode()):
            abort(403)

    @app.after_request
    def no_cache(response):
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.get("/")
    def index():
        return page, 200, {"Content-Type": "text/html; charset=utf-8"}

    @app.get("/api/state")
    def state():
        return jsonify(session.state())

    @app.post("/api/answer")
    def answer():
        body = request.get_json(silent=True) or {}
        pair, given = body.get("pair"), body.get("answer")
        if given not in _ANSWERS or not _is_pair(pair, session.n):
            return jsonify(error="expected {'pair': [i, j], 'answer': same|different|skip}"), 400
        try:
            session.answer((int(pair[0]), int(pair[1])), _ANSWERS[given])
        except LookupError as exc:
            return jsonify(error=str(exc), state=session.state()), 409
        return jsonify(session.state())

    @app.post("/api/undo")
    def undo():
        pair = session.undo()
        out = session.state()
        # the page names the rows as the answers file does: by ID when the data has them
        ids = session.view.ids
        out["undone"] = None if pair is None else [str(t) if ids is None else ids[t] for t in pair]
        out["undone_index"] = None if pair is None else [int(t) for t in pair]
        return jsonify(out)

    @app.get("/api/layout")
    def layout():
        return jsonify(session.layout())

    @app.get("/api/preview")
    def preview():
        return jsonify(session.preview_state())

    @app.get("/api/image/<int:i>")
    def image(i: int):
        path = session.view.image_path(i) if 0 <= i < session.n else None
        if path is None or not path.is_file():
            abort(404)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if not mime.startswith("image/"):
            abort(404)
        return send_file(path, mimetype=mime)

    return app


def _is_pair(pair: object, n: int) -> bool:
    return (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n for v in pair)
    )


class LabelServer:
    """The labelling page served on 127.0.0.1 in a background thread.

    ``url`` is the page's address with its token; ``shutdown()`` stops serving.
    """

    def __init__(self, session: LabelSession, port: int = 0, token: str | None = None) -> None:
        require_web_stack()
        from werkzeug.serving import make_server

        self.session = session
        self.token = new_token() if token is None else token
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
        self._server = make_server("127.0.0.1", port, None, threaded=True)
        self.port = self._server.server_port
        self._server.app = create_app(session, self.token, self.port)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="spectralink-label", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def start(self) -> LabelServer:
        self.session.fitter.start()
        self.session.start_preview()
        self._thread.start()
        return self

    def shutdown(self) -> None:
        self._server.shutdown()
        self.session.close()
