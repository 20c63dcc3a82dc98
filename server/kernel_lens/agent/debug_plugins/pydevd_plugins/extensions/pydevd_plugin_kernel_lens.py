"""debugpy (pydevd) extension: a Triton block under the interpreter (``tl.tensor`` whose handle
holds a NumPy array) shows in the Variables view as its array — ``float32[1024] min … max …``,
with the array, its shape and dtype as children — instead of the wrapped handle.

Loaded by pydevd from any ``pydevd_plugins/extensions`` folder on ``sys.path`` (the Debug Kernel
session puts this one there); a module name starting with ``pydevd_plugin``.
"""

from typing import Any

from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider

__all__ = ["TritonBlockResolver", "TritonBlockText"]


def _is_block(type_object: Any) -> bool:
    return getattr(type_object, "__name__", "") == "tensor" and getattr(
        type_object, "__module__", ""
    ).startswith("triton.language")


def _array(obj: Any) -> Any:
    import numpy as np

    data = getattr(getattr(obj, "handle", None), "data", None)
    if not isinstance(data, np.ndarray):
        return None
    tl_type = getattr(obj, "type", None)
    if tl_type is not None and getattr(tl_type, "is_block", lambda: False)():
        shape = tuple(int(s) for s in tl_type.shape)
        if data.shape != shape:
            data = np.broadcast_to(data, shape)
        return data
    return data.reshape(-1)[0] if data.size == 1 else data


def _text(obj: Any) -> str:
    try:
        from kernel_lens.agent.stages.interp_values import describe_value

        described = describe_value("·", obj)
    except Exception:
        described = None
    if not described:
        return repr(obj)
    return str(described["text"]).split(": ", 1)[-1]


class TritonBlockResolver:
    """The block's array (``block``), shape and dtype as children."""

    def can_provide(self, type_object: Any, type_name: str) -> bool:
        return _is_block(type_object)

    def get_dictionary(self, obj: Any) -> dict[str, Any]:
        array = _array(obj)
        out: dict[str, Any] = {"block": array}
        out["dtype"] = str(getattr(obj, "dtype", ""))
        shape = getattr(array, "shape", None)
        if shape is not None:
            out["shape"] = tuple(shape)
        return out

    def resolve(self, obj: Any, attribute: str) -> Any:
        return self.get_dictionary(obj).get(attribute)


class TritonBlockText:
    """``int32[1024] 0 1 2 … 1023`` for a block, as Show Values writes it."""

    def can_provide(self, type_object: Any, type_name: str) -> bool:
        return _is_block(type_object)

    def get_str(self, val: Any) -> str:
        return _text(val)


TypeResolveProvider.register(TritonBlockResolver)
StrPresentationProvider.register(TritonBlockText)
