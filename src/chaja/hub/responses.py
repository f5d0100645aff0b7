"""JSON that always renders: the response class of every hub answer, errors included."""
from __future__ import annotations

import json
import math
from typing import Any

from fastapi.responses import JSONResponse


class SafeJSONResponse(JSONResponse):
    """JSON that always renders: text that cannot be UTF-8 (a lone surrogate echoed back
    in a validation error) is written with ``\\u`` escapes; a non-finite number as null."""

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (UnicodeEncodeError, ValueError):
            return json.dumps(_finite(content), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
