"""Legends that never cover the data they explain. A legend inside its axes that covers a
line, a point, a bar or a text is moved, in this order: to the first corner or edge of the
axes the data leave empty; else beside the axes, when no panel stands to their right (the
figure widened for it, the panels keeping their size); else to the axes' top, raised until
no data runs under it. Legends placed beside the axes or below them are left where the
figure put them."""

from __future__ import annotations

# where a legend may sit inside its axes, in the order tried: (x, y) of its lower left corner
# as a share of the room the axes leave around it (0: at the left or bottom edge, 1: at the
# right or top edge)
SPOTS = ((1, 1), (0, 1), (0, 0), (1, 0), (1, 0.5), (0, 0.5), (0.5, 1), (0.5, 0))
BESIDE_INCHES = 0.1  # between the axes (their tick labels included) and a legend beside them


def _panel(ax) -> list:
    """AX and the axes drawn over it (twinx): what a legend on AX must not cover."""
    return [other for other in ax.figure.axes if other is ax or other.get_position().bounds == ax.get_position().bounds]


def _data_points(ax, per_segment: int = 16):
    """Points along every data line AX draws (its path, steps included, sampled between
    vertices) and its scatter points, in display coordinates. Guides across the whole axes
    (axhline, axvline: drawn in axes coordinates on one side) are not data."""
    import numpy as np

    found = []
    for line in ax.get_lines():
        if line.get_transform() != ax.transData:
            continue
        xy = line.get_transform().transform(line.get_path().vertices)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1:
            steps = np.linspace(0.0, 1.0, per_segment, endpoint=False)[None, :, None]
            xy = np.concatenate([(xy[:-1, None, :] + steps * (xy[1:, None, :] - xy[:-1, None, :])).reshape(-1, 2),
                                 xy[-1:]])
        found.append(xy)
    found += [c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections if len(c.get_offsets())]
    return np.concatenate(found) if found else np.empty((0, 2))


def _boxes(ax) -> list:
    """The display boxes of AX's bars and texts (annotations included)."""
    renderer = ax.figure.canvas.get_renderer()
    bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_transform().contains_branch(ax.transData)]
    return bars + [t.get_window_extent(renderer) for t in ax.texts if t.get_visible() and t.get_text().strip()]


def _covered(panel: list, box) -> int:
    """How many data points, bars and texts of the axes PANEL the display box BOX covers."""
    count = 0
    for ax in panel:
        pts = _data_points(ax)
        count += int(((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0)
                      & (pts[:, 1] <= box.y1)).sum())
        count += sum(box.overlaps(other) for other in _boxes(ax))
    return count


def legend_overlaps(ax) -> int:
    """How many of AX's data points, bars and texts (and those of axes drawn over it) its
    legend covers."""
    legend = ax.get_legend()
    return 0 if legend is None else _covered(_panel(ax), legend.get_window_extent())


def _inside(ax, legend) -> bool:
    """Whether LEGEND sits over AX (not beside it or below it)."""
    box = legend.get_window_extent().transformed(ax.transAxes.inverted())
    return box.x0 < 1 and box.x1 > 0 and box.y0 < 1 and box.y1 > 0


def _place(ax, legend, x0: float, y0: float) -> None:
    """LEGEND's lower left corner at (X0, Y0), in AX's coordinates (shares of its width and
    height): anchored to a box exactly its size, wherever its loc would put it in a larger one."""
    box = legend.get_window_extent()
    pad = legend.borderaxespad * legend.prop.get_size_in_points() * ax.figure.dpi / 72
    width, height = ax.get_window_extent().width, ax.get_window_extent().height
    legend.set_bbox_to_anchor((x0 - pad / width, y0 - pad / height, (box.width + 2 * pad) / width,
                               (box.height + 2 * pad) / height))


def _free_spot(ax, legend) -> tuple[float, float] | None:
    """The first of SPOTS inside AX where LEGEND would cover nothing (axes coordinates of its
    lower left corner), or None."""
    from matplotlib.transforms import Bbox

    box, frame = legend.get_window_extent(), ax.get_window_extent()
    pad = legend.borderaxespad * legend.prop.get_size_in_points() * ax.figure.dpi / 72
    room_x, room_y = frame.width - box.width - 2 * pad, frame.height - box.height - 2 * pad
    if room_x < 0 or room_y < 0:
        return None
    for sx, sy in SPOTS:
        x0, y0 = frame.x0 + pad + sx * room_x, frame.y0 + pad + sy * room_y
        if not _covered(_panel(ax), Bbox.from_bounds(x0, y0, box.width, box.height)):
            return (x0 - frame.x0) / frame.width, (y0 - frame.y0) / frame.height
    return None


def _last_in_its_row(ax) -> bool:
    """No other panel of AX's figure stands to its right."""
    here = ax.get_position()
    return not any(other.get_position().x0 >= here.x1 and other.get_position().y0 < here.y1
                   and other.get_position().y1 > here.y0 for other in ax.figure.axes)


def _beside(fig, ax, legend) -> None:
    """LEGEND beside AX at its top, the figure widened as much as it needs (its panels keep
    their size in inches)."""
    renderer = fig.canvas.get_renderer()
    right = max(a.get_tightbbox(renderer).x1 for a in _panel(ax))
    frame = ax.get_window_extent()
    box = legend.get_window_extent()
    _place(ax, legend, (right - frame.x0) / frame.width + BESIDE_INCHES * fig.dpi / frame.width,
           1 - box.height / frame.height)
    fig.canvas.draw()
    beyond = legend.get_window_extent().x1 + BESIDE_INCHES * fig.dpi - fig.bbox.width
    if beyond > 0:
        old = fig.get_figwidth()
        new = old + beyond / fig.dpi
        params = fig.subplotpars
        fig.set_size_inches(new, fig.get_figheight())
        fig.subplots_adjust(left=params.left * old / new, right=params.right * old / new)


def _headroom(fig, ax, legend) -> None:
    """LEGEND at the top of AX, where its corner was, and AX's top raised (in decades on a
    log axis) until no data runs under it."""
    box = legend.get_window_extent().transformed(ax.transAxes.inverted())
    _place(ax, legend, box.x0, 1 - box.height - 0.02)
    fig.canvas.draw()
    for _ in range(8):
        if not legend_overlaps(ax):
            break
        box = legend.get_window_extent().transformed(ax.transAxes.inverted())
        bottom, top = ax.get_ylim()
        share = max(0.3, box.y0 - 0.03)  # the data's top down to just below the legend
        if ax.get_yscale() == "log":
            ax.set_ylim(bottom, bottom * (top / bottom) ** (1 / share))
        else:
            ax.set_ylim(bottom, bottom + (top - bottom) / share)
        fig.canvas.draw()


def clear_legends(fig) -> None:
    """Move every legend inside its axes that covers data (see the module's docstring)."""
    fig.canvas.draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not _inside(ax, legend) or not legend_overlaps(ax):
            continue
        spot = _free_spot(ax, legend)
        if spot is not None:
            _place(ax, legend, *spot)
        elif _last_in_its_row(ax):
            _beside(fig, ax, legend)
        elif ax.get_yscale() in ("linear", "log"):
            _headroom(fig, ax, legend)
        fig.canvas.draw()


def right_of_axes(fig, legend, most: float) -> float:
    """Where the axes of FIG may end (subplots_adjust's right, at most MOST) for LEGEND,
    beside the last axes, to stay inside the figure: several runs' labels are long."""
    inches = legend.get_window_extent(fig.canvas.get_renderer()).width / fig.dpi
    return min(most, 1 - (inches + 0.35) / fig.get_figwidth())
