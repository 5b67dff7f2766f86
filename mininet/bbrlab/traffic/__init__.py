"""bbrlab's traffic layer: traffic and sampling inside the hosts: iperf3 flows, the short-flow programs, samplers."""
