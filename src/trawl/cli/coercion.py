"""Option values that need no pydantic: coerced here, everything else by typer.

typer (0.29) coerces every parameter's value through a pydantic ``TypeAdapter``, even a
default of None, so any command loads pydantic and builds an adapter per parameter:
10.7 MB resident before ``trawl crawl`` fetches anything (bench/RESULTS.md, "Many
hosts: memory"), in a process whose other use for pydantic is none (only the server's
API models need it). The values a command line gives are mostly plain: a string, a
list of strings, a decimal number within its bounds, a path. For those the answer is
certain without pydantic, and this module gives it. Anything else (a bad or signed
number, a bound crossed, a choice, a type not listed here) goes to typer's own
coercion, built on first use, so typer's answers and error messages are unchanged.

It reaches into typer's private ``_TyperParameter.get_runtime_param``; with a typer
that lacks it, ``install`` does nothing and typer coerces everything, as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

_UNSURE = object()
_INTEGER = re.compile(r"[0-9]{1,18}\Z")  # ASCII digits: int() would take others too
_DECIMAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?\Z")


def plain_value(descriptor: Any, value: Any) -> Any:
    """``value`` as typer would coerce it for ``descriptor`` (typer's TypeDescriptor),
    or ``_UNSURE`` where only typer can say (and word the error)."""
    annotation = descriptor.annotation
    info = descriptor.parameter_info
    if info.parser is not None or descriptor.file_annotation is not None:
        return _UNSURE
    if annotation is str:
        return value if type(value) is str else _UNSURE
    if annotation is int or annotation is float:
        pattern = _INTEGER if annotation is int else _DECIMAL
        if type(value) is not str or info.clamp or not pattern.match(value):
            return _UNSURE
        number = annotation(value)
        if (info.min is not None and number < info.min) or (
            info.max is not None and number > info.max
        ):
            return _UNSURE
        return number
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        if isinstance(value, list | tuple) and all(type(v) is str for v in value):
            return list(value)
        return _UNSURE
    return _UNSURE


def install() -> None:
    """Put this module's coercion in front of typer's, where typer has the hook."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_path, routes_to_path
        from typer.core import _TyperParameter
    except ImportError:  # another typer: its own coercion, unchanged
        return
    if not callable(getattr(_TyperParameter, "get_runtime_param", None)):
        return

    class Plain(RuntimeParam):
        """Plain values here; typer's own coercion (pydantic) for the rest."""

        def __init__(self, descriptor: Any) -> None:
            super().__init__(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
            object.__setattr__(self, "descriptor", descriptor)
            object.__setattr__(self, "typer_param", None)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            descriptor = self.descriptor  # type: ignore[attr-defined]
            if routes_to_path(descriptor.annotation, descriptor.parameter_info):
                path_type = descriptor.parameter_info.path_type or descriptor.annotation
                # A NUL makes the path checks raise ValueError, which typer words as its
                # own error: its coercion answers that (no command line holds one).
                if path_type is Path and type(value) is str and value and "\x00" not in value:
                    # typer's own path checks, given the Path its pydantic would make
                    return coerce_cli_path(
                        Path(value),
                        descriptor.parameter_info,
                        path_type=Path,
                        param=param,
                        ctx=ctx,
                    )
            else:
                plain = plain_value(descriptor, value)
                if plain is not _UNSURE:
                    return plain
            if self.typer_param is None:  # type: ignore[attr-defined]
                object.__setattr__(self, "typer_param", build_runtime_param(descriptor))
            return self.typer_param._coerce_value(value, param=param, ctx=ctx)  # type: ignore[attr-defined]

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            self._runtime_param = Plain(self.type_descriptor)
        return self._runtime_param

    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
