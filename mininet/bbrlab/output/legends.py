"""Legends that never cover the data they explain: a legend at the top of its axes gets
headroom (the axes' top raised until no line or point runs under it); legends beside the
axes or at their bottom are left where the figure put them."""

from __future__ import annotations


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


def legend_overlaps(ax) -> int:
    """How many of AX's data vertices its legend (when inside the axes) covers."""
    legend = ax.get_legend()
    if legend is None:
        return 0
    box = legend.get_window_extent()
    pts = _data_points(ax)
    return int(((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)).sum())


def clear_legends(fig) -> None:
    """Raise the top of every axes whose legend sits at its top, inside it, until no data
    runs under the legend: a legend never covers what it explains."""
    fig.canvas.draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or ax.get_yscale() not in ("linear", "log"):
            continue
        box = legend.get_window_extent().transformed(ax.transAxes.inverted())
        if box.x0 >= 1 or box.x1 <= 0 or box.y0 >= 1 or box.y1 <= 0 or (box.y0 + box.y1) / 2 < 0.5:
            continue  # beside the axes, or at their bottom (below curves that stay high)
        for _ in range(8):
            if not legend_overlaps(ax):
                break
            bottom, top = ax.get_ylim()
            # the data's top down to just below the legend (in decades on a log axis)
            share = max(0.3, box.y0 - 0.03)
            if ax.get_yscale() == "log":
                ax.set_ylim(bottom, bottom * (top / bottom) ** (1 / share))
            else:
                ax.set_ylim(bottom, bottom + (top - bottom) / share)
            fig.canvas.draw()
