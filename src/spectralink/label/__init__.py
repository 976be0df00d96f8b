"""Label pairs in the browser: the active loop with a person, the items shown as they are.

``spectralink label`` serves one page on 127.0.0.1 that asks the pair the library's active
strategy chooses next, shows the two rows as images, text or values side by side, and draws
the clustering so far; every answer goes to a constraints file at once. The pieces, usable
from Python too:

* :class:`AnswerLog` (``_log.py``): the answers file, appended and flushed per answer.
* :class:`ItemView` (``_items.py``): what the page shows of a row.
* :class:`LabelSession` (``_session.py``): the loop (:class:`~spectralink.active.QuerySession`)
  fed by the page, rebuilt from the answers file at start, and the background preview.
* :class:`LabelServer`, :func:`create_app` (``_server.py``): the Flask application and its
  server (the optional ``[label]`` extra).
"""

from ._items import ItemView, parse_image_shape, read_column
from ._log import AnswerLog
from ._server import (
    EXTRA,
    TOKEN_HEADER,
    LabelServer,
    create_app,
    require_web_stack,
)
from ._session import PREVIEW_POINTS, LabelSession

__all__ = [
    "EXTRA",
    "PREVIEW_POINTS",
    "TOKEN_HEADER",
    "AnswerLog",
    "ItemView",
    "LabelServer",
    "LabelSession",
    "create_app",
    "parse_image_shape",
    "read_column",
    "require_web_stack",
]
