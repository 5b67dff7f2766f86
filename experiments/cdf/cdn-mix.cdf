# Object sizes of the cdn-mix experiment: size (bytes), index, cumulative probability.
# bbrlab's own numbers, not a measured distribution: a CDN's mix of small web objects
# (median about 35 KB) with a tail of multi-MB downloads (8 % over 1 MB, 3 % over 3 MB,
# up to 8 MB), so both the FCT of small objects and the throughput of large ones can be
# judged within a minute or two of arrivals. Mean: 371 KB (workload.Sizes.mean).
# Sizes between two lines are interpolated linearly (empirical traffic generator's rule).
1000 1 0.0
10000 2 0.35
50000 3 0.60
100000 4 0.70
300000 5 0.82
1000000 6 0.92
3000000 7 0.97
8000000 8 1.0
