"""Reading the API server's own counts: writes and LISTs by verb and resource/subresource, watch events
and their size by resource, terminated watchers; and what a run shows per graph."""

from __future__ import annotations

from collections import Counter

from bench import apiserver_metrics as am

METRICS = """\
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="deployments",subresource="",verb="APPLY"} 300
apiserver_request_total{code="200",resource="deployments",subresource="status",verb="PUT"} 1200
apiserver_request_total{code="409",resource="deployments",subresource="status",verb="PUT"} 12
apiserver_request_total{code="200",resource="deployments",subresource="",verb="LIST"} 40
apiserver_request_total{code="200",resource="pods",subresource="binding",verb="POST"} 300
apiserver_request_total{code="200",resource="pods",subresource="",verb="GET"} 7
# TYPE apiserver_terminated_watchers_total counter
apiserver_terminated_watchers_total{group="",resource="pods",version="v1"} 2
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="apps",resource="deployments",version="v1"} 900
# TYPE apiserver_watch_events_sizes histogram
apiserver_watch_events_sizes_bucket{group="apps",resource="deployments",version="v1",le="+Inf"} 900
apiserver_watch_events_sizes_sum{group="apps",resource="deployments",version="v1"} 4.608e+06
apiserver_watch_events_sizes_count{group="apps",resource="deployments",version="v1"} 900
# HELP apiserver_request_duration_seconds Response latency
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_count{resource="deployments",subresource="",verb="APPLY"} 300
"""


def test_writes_lists_and_watch_events_are_summed_and_gets_left_out() -> None:
    """Every response code counts (a refused write was still served); LISTs count (a dropped watcher
    lists again), GETs do not; the watch events sent, and their size in KiB, are counted by resource,
    and so are the watchers the API server terminated."""
    assert am.served_counts(METRICS) == Counter(
        {
            "APPLY deployments": 300,
            "LIST deployments": 40,
            "TERMINATED-WATCHERS pods": 2,
            "PUT deployments/status": 1212,
            "POST pods/binding": 300,
            "WATCH-EVENTS deployments": 900,
            "WATCH-KB deployments": 4500,
        }
    )


def test_per_graph_divides_and_drops_the_rare_ones() -> None:
    """Per graph, rounded; writes rarer than one per ten graphs are noise of other controllers."""
    served = Counter({"PUT deployments/status": 1212, "POST pods/binding": 300, "PUT leases": 5})
    assert am.per_graph(served, 100) == {"POST pods/binding": 3.0, "PUT deployments/status": 12.1}


def test_per_graph_shows_every_read_and_terminated_watcher_as_a_count() -> None:
    """A re-list or a dropped watcher is rare and matters: shown however few, not divided."""
    served = Counter({"LIST pods": 3, "WATCH pods": 25, "TERMINATED-WATCHERS pods": 1, "PUT leases": 5})
    assert am.per_graph(served, 100) == {"LIST pods": 3, "TERMINATED-WATCHERS pods": 1, "WATCH pods": 25}


def test_only_the_counted_families_are_parsed() -> None:
    """The lines read are those of the four counted families (the histogram's sum alone); every other
    family, and the histogram's buckets and count, are dropped before parsing."""
    kept = am.counted_lines(METRICS).splitlines()
    assert not [line for line in kept if "request_duration" in line or "_bucket" in line or "_count" in line]
    assert len(kept) == 14


def test_families_named_like_the_counted_ones_are_left_out() -> None:
    """A family whose name only begins like a counted one is neither kept nor counted."""
    noise = """\
# HELP apiserver_watch_events_sizes_total_x other family sharing a prefix
# TYPE apiserver_watch_events_sizes_total_x counter
apiserver_watch_events_sizes_total_x{resource="deployments"} 7
# TYPE apiserver_request_total_extra counter
apiserver_request_total_extra{resource="deployments",verb="APPLY"} 5
# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_bucket{operation="get",type="x",le="0.005"} 1
etcd_request_duration_seconds_sum{operation="get",type="x"} 0.5
"""
    assert am.served_counts(noise + METRICS) == am.served_counts(METRICS)
    assert am.counted_lines(noise) == ""
