"""``python -m ldp.datasets describe NAME [key=value ...]``: a data set's summary figures.

Parameters are the loader's, written ``key=value`` or ``--key=value``; values are read as
int, float, ``none``/``true``/``false`` or else kept as text, e.g.::

    python -m ldp.datasets describe zipf n=100000 m=16 drop_top=20
    python -m ldp.datasets describe kosarak --path=/data/kosarak.dat --item_rule=first
"""

from __future__ import annotations

import argparse
import sys

from ldp.datasets import LOADERS, describe, format_description, load


def parse_value(text: str) -> object:
    """``"10"`` -> 10, ``"1e6"`` -> 1000000, ``"1.5"`` -> 1.5, ``none``/``true``/``false``."""
    lowered = text.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text.replace("_", ""))
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "e" in lowered else number


def parse_params(items: list[str]) -> dict[str, object]:
    """``["n=10", "--m=16"]`` -> ``{"n": 10, "m": 16}``."""
    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.removeprefix("--").partition("=")
        if not sep or not key:
            raise SystemExit(f"expected key=value, got {item!r}")
        params[key.replace("-", "_")] = parse_value(value)
    return params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ldp.datasets", description="Describe a data set of ldp.datasets."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "describe",
        help="print n, distinct values, top shares, 16th/32nd frequencies and the Zipf slope",
    )
    command.add_argument("name", choices=sorted(LOADERS))
    command.add_argument("params", nargs="*", help="loader parameters, key=value")
    args, extra = parser.parse_known_args(argv)
    params = parse_params(list(args.params) + extra)
    try:
        dataset = load(args.name, **params)
    except (TypeError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_description(describe(dataset)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
