"""The figures: each plot kind's drawing (plot_kinds.PLOTS), the figure of several runs, and
the style, legends and guide lines they share."""
