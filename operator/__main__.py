"""Entry point: `dynamo-operator [flags]` runs the operator; `version` and `render` are offline tools."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from dynamo_operator.flags import build_parser, options_from_args


def package_version() -> str:
    try:
        return metadata.version("dynamo-operator")
    except metadata.PackageNotFoundError:
        return "0.0.0-unknown"


def render(filename: str, *, namespace: str, with_lws: bool, operator_version: str = "") -> int:
    # Imported here: rendering needs the generation code, running the operator does not need it first.
    from dynamo_operator.internal.dynamo.render import render_documents

    text = sys.stdin.read() if filename == "-" else Path(filename).read_text()
    sys.stdout.write(
        render_documents(text, namespace=namespace, with_lws=with_lws, operator_version=operator_version)
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse flags and dispatch; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    match args.command:
        case "version":
            print(package_version())
            return 0
        case "render":
            try:
                return render(
                    args.filename,
                    namespace=args.render_namespace,
                    with_lws=args.with_lws,
                    operator_version=args.operator_version,
                )
            except (OSError, ValueError) as err:
                print(f"dynamo-operator render: {err}", file=sys.stderr)
                return 1
        case _:
            from dynamo_operator.app import run_operator

            return asyncio.run(run_operator(options_from_args(args)))


if __name__ == "__main__":
    sys.exit(main())
