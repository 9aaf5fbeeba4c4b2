"""structlog configuration: JSON lines for machines (default), coloured console for humans.

Context travels in contextvars (`structlog.contextvars.bind_contextvars`), so the worker binds
`controller`, `namespace`, `name` and `reconcile_id` once and every log line of that reconcile,
down to the client, carries them.
"""

from __future__ import annotations

import enum
import logging
import sys

import orjson
import structlog


class LogFormat(enum.StrEnum):
    JSON = "json"
    CONSOLE = "console"


def configure_logging(*, level: str = "info", fmt: LogFormat | str = LogFormat.JSON) -> None:
    """Route structlog and the stdlib `logging` module to stderr in one format at one level."""
    numeric = logging.getLevelNamesMapping().get(level.upper())
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")
    fmt = LogFormat(fmt)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor
    # Tracebacks never carry local variables: they would copy objects, tokens and whole specs into
    # every error line (megabytes per minute under load, and secrets in logs).
    if fmt is LogFormat.JSON:
        shared += [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        ]
        renderer = structlog.processors.JSONRenderer(serializer=_dumps)
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        cache_logger_on_first_use=True,
    )
    # Third-party libraries log through the stdlib; give them the same renderer and level.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)


def _dumps(obj: object, **_: object) -> str:
    # orjson is several times faster than json and never fails on datetimes; `default=str`
    # keeps odd values (exceptions, enums) loggable instead of crashing the log call.
    return orjson.dumps(obj, default=str).decode()
