"""What the PettingZoo and Gymnasium doors share (docs/doors.md): opening a game behind the doors
with its options, and ``render()`` as the state's text."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from . import _core


def open_game(
    path: Any,
    params: Optional[Mapping[str, float]] = None,
    objects: int = 64,
    reward: Optional[str] = None,
    turn_order: Optional[str] = None,
    overlays: Iterable[str] = (),
    simultaneous: Optional[bool] = None,
) -> "_core.DoorGame":
    """A WGDL game or grounded GDL description behind the doors; ``params`` sets WGDL
    parameters by name."""
    return _core.open_door(
        str(path),
        params=[(k, float(v)) for k, v in (params or {}).items()],
        turn_order=turn_order,
        overlays=list(overlays),
        objects=objects,
        reward=reward,
        simultaneous=simultaneous,
    )


def render_text(render_mode: Optional[str], state: Any) -> Optional[str]:
    """``render()`` of an environment: the state's text (``ansi``), printed (``human``), or
    nothing (no render mode, or no state yet)."""
    if render_mode is None or state is None:
        return None
    text = str(state)
    if render_mode == "human":
        print(text)
        return None
    return text
