#!/usr/bin/env python3
"""Ground truth of a SimGrid platform, and a checker for hetcoll-probe profiles.

    python3 testbed/smpi/truth.py PLATFORM.xml PROFILE.json
            [--tolerance 0.05] [--os 1e-6] [--or 1e-6] [--envelope 16]
            [--tcp-gamma 4194304] [--no-partition] [--hosts FILE]
    python3 testbed/smpi/truth.py PLATFORM.xml          # print the truth only
    python3 testbed/smpi/truth.py PLATFORM.xml --tree [--json]   # its tree
    python3 testbed/smpi/truth.py PLATFORM.xml PROFILE.json --tree [--tolerance 0.10]
            [--no-duplex]     # a version 2 profile's network (or a generated
                              # NAME.tree.json) against the platform's tree

As a module:

    t = truth.load("testbed/smpi/platforms/three_subnets.xml")
    t.hosts           # host names, in the order of the .hosts file beside the
                      # platform (the rank order of testbed/smpi/run)
    t.latency(i, j)   # sum of the latencies of the links on SimGrid's route, s
    t.bandwidth(i, j) # bottleneck bandwidth of that route (min over links), B/s
    t.route(i, j)     # the route's link names, in order
    t.subnet_of       # per host, the id of the zone holding it, numbered by
                      # first appearance in hosts order
    truth.tree(path)  # the platform as a tree of links, derived from the
                      # routes (hetcoll's profile version 2 "network"; see
                      # "The platform's tree" below); check_tree() compares
                      # a profile's with it, diff_trees() two trees exactly

Routes are resolved the way SimGrid 3.32 does (NetZoneImpl::
get_global_route_with_netzones): find the zone that is the common ancestor
of the two hosts; if both are directly in it, take its local route; otherwise
take its route between the two child zones holding them, which names gateways
(gw_src, gw_dst), and recurse from the source to gw_src and from gw_dst to the
destination. Local routes:

  * <cluster> (flat topology; SimGrid builds a StarZone): host -> anything
    goes up [limiter, host link (its _UP half if SPLITDUPLEX, the cluster
    default), backbone]; anything -> host goes down [backbone, host link
    (_DOWN half), limiter]; the cluster's router has empty up and down routes.
    A host-to-host route is up(src) + down(dst) without duplicates, so the
    backbone counts once. Link names: <id>_link_<radical>[_UP|_DOWN],
    <id>_backbone, <id>_link_<radical>_limiter.
  * <zone routing="Cluster"> with <host_link id up down>, <cabinet> and an
    optional <backbone>: the same star routes, up [up, backbone], down
    [backbone, down].
  * <zone routing="Full"> with <route> and <zoneRoute>: the listed links;
    a symmetrical route (the default) also gives the reverse route, links in
    reverse order, UP and DOWN halves of split-duplex links swapped, and the
    gateways swapped.

Only these constructs are understood (others raise ValueError); they cover
testbed/smpi/platforms/*.xml.

The CLI check models SimGrid's CM02 network model without cross traffic, as
testbed/smpi/run configures it: an m-byte message between hosts i and j
takes os + L + (m + 16) / B + or, with L = latency(i, j), 16 bytes the MPI
envelope SMPI adds to every message (smpi_request.cpp), and B the bottleneck
bandwidth capped by the TCP window, min(bandwidth(i, j), gamma / (2 L))
(network/TCP-gamma, 4 MiB by default; it does not bind on these platforms).
For every ordered pair it compares the profile's one-way small-message time
(pairs.small_min) with os + L + (s + 16) / B + or, and the profile's
bandwidth (l - s) / (large_min - small_min), s and l the message sizes in
profile["measured"], with B.

SMPI 3.32 details behind --os/--or: os (smpi/os) is paid only by blocking
sends below smpi/send-is-detached-thresh (64 KiB); an MPI_Isend pays
smpi/ois instead (0 unless configured), so pass --os 0 for a probe whose
small ping is an MPI_Isend. or (smpi/or) is paid only for messages below
that threshold. A 1 MiB message pays neither, so a measured bandwidth is
(l - s) / ((l - s) / B - os - or): 0.02% above B at 125 MB/s, 0.25% at
1.25 GB/s; within any sensible tolerance, so B is the expectation. It also checks that the profile's host subnet
ids group the hosts exactly like the platform's zones do (ids may be
renamed). Exit status 0 if every relative error is within the tolerance and
the partition matches, 1 otherwise, 2 on bad input.

--tree compares a profile's "network" with the tree derived from the routes
(check_tree): the same groups of hosts where the platform can show them
(each misplaced host reported), and every group's capacity each way — the
most it can move across its edge, so a limiting uplink, NIC or WAN link is
held to its capacity — within the tolerance (default 10 %); one line per
disagreement, exit status 1 on any. The profile may hold a subset of the
platform's hosts: the truth is then the tree of those hosts' routes.

The code is in truthlib/ beside this file, a module a part (its
__init__.py lists them); this module re-exports the names callers use and
is the CLI.
"""

import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # loaded by its path (tests/python/test_platforms.py): truthlib is beside it
    sys.path.append(_HERE)

from truthlib.checks import (check, check_agree, check_alone, check_interfaces,  # noqa: E402,F401
                             check_sharing, eco_partition)
from truthlib.network import model_profile, profile_tree, to_profile_network  # noqa: E402,F401
from truthlib.routes import Truth, load  # noqa: E402,F401
from truthlib.show import _print_tree, _print_truth  # noqa: E402
from truthlib.tree import tree  # noqa: E402
from truthlib.tree_check import _TreeView, check_tree, diff_trees  # noqa: E402,F401
from truthlib.units import parse_bandwidth, parse_speed, parse_time  # noqa: E402,F401


# ----------------------------------------------------------------------------
# CLI


def _tree_main(t, args):
    """truth.py PLATFORM --tree [PROFILE]: print the tree, or check a profile's."""
    if not args.profile:
        try:
            tr = tree(t)
        except ValueError as e:
            print("truth.py: %s" % e, file=sys.stderr)
            return 2
        if args.json:
            json.dump(tr, sys.stdout, indent=1)
            print()
        else:
            _print_tree(tr)
        return 0
    tolerance = 0.10 if args.tolerance is None else args.tolerance
    try:
        with open(args.profile) as f:
            other = profile_tree(json.load(f))
        names = [h for h in other["hosts"] if h in t.host_speed]
        truth_tree = tree(t, names=names)
        bad, notes = check_tree(truth_tree, other, tolerance, duplex=not args.no_duplex)
    except (OSError, KeyError, TypeError, ValueError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    print("tree of %s vs %s: %d hosts, tolerance %g" % (os.path.basename(t.platform),
                                                       os.path.basename(args.profile), len(names), tolerance))
    for line in bad:
        print("  DISAGREE %s" % line)
    for line in notes:
        print("  %s" % line)
    print("PASS" if not bad else "FAIL (%d disagreements)" % len(bad))
    return 0 if not bad else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("platform")
    ap.add_argument("profile", nargs="?")
    ap.add_argument("--hosts", help="host file (default: the .hosts file beside the platform)")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="relative error allowed (default 0.05; with --tree 0.10)")
    ap.add_argument("--os", dest="o_s", type=float, default=1e-6, help="send overhead per message, s")
    ap.add_argument("--or", dest="o_r", type=float, default=1e-6, help="receive overhead per message, s")
    ap.add_argument("--envelope", type=int, default=16,
                    help="bytes SMPI adds to every message (MPI envelope), default 16")
    ap.add_argument("--tcp-gamma", type=float, default=4194304.0,
                    help="SimGrid network/TCP-gamma, bytes (0: no window cap)")
    ap.add_argument("--partition", choices=["zones", "eco", "none"], default="zones",
                    help="the partition required: the platform's zones (default), ECO's rule on the true times "
                    "(slow_hosts: each slow host apart), or none (reported only)")
    ap.add_argument("--bandwidth", choices=["pairs", "alone", "none"], default="pairs",
                    help="check every pair's bandwidth (sequential profiles), or each class's bandwidth measured "
                    "alone (concurrent profiles: pairs of a round share uplinks), or neither (a platform whose "
                    "links differ by direction: a class is one rate both ways; its tree holds them, --tree)")
    ap.add_argument("--agree", metavar="PROFILE2", help="also require this profile of the same platform (the other "
                    "mode) to give the same partition and per-pair latencies within the tolerance")
    ap.add_argument("--tree", action="store_true",
                    help="the platform's tree (derived from its routes); with a profile, check the profile's "
                    "network (version 2) or a generated .tree.json against it")
    ap.add_argument("--json", action="store_true", help="with --tree and no profile: print the tree as JSON")
    ap.add_argument("--no-duplex", action="store_true",
                    help="with --tree: do not require the profile to tell a limiting link carrying both "
                    "directions from one link each way")
    args = ap.parse_args(argv)
    try:
        t = load(args.platform, args.hosts)
    except (ValueError, OSError, ET.ParseError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    if args.tree:
        return _tree_main(t, args)
    if args.tolerance is None:
        args.tolerance = 0.05
    if not args.profile:
        _print_truth(t)
        return 0
    try:
        with open(args.profile) as f:
            profile = json.load(f)
    except (OSError, ValueError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2
    try:
        ok = check(t, profile, args.tolerance, args.o_s, args.o_r, args.tcp_gamma,
                   False if args.partition == "none" else args.partition, args.envelope, bandwidth=args.bandwidth)
        if args.agree:
            with open(args.agree) as f:
                ok = check_agree(profile, json.load(f), args.tolerance) and ok
            print("PASS" if ok else "FAIL")
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        print("truth.py: bad profile: %s" % e, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
