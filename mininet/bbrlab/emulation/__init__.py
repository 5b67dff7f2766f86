"""bbrlab's emulation layer: the emulated network: topology plan, Mininet network, links, shapers, link schedules, preflight."""
