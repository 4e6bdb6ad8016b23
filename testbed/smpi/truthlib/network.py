"""Trees as profiles (docs/profile.md): to_profile_network() writes a tree
as a version 2 profile's "network", model_profile() the whole profile
hetcoll would plan on were the probe exact, profile_tree() reads a
profile's network back as a tree.
"""

def to_profile_network(tree_):
    """A tree as a profile's "network" (docs/profile.md): host indices into
    tree_["hosts"] (the profile's hosts[] must list them in that order)."""
    out = []
    for nd in tree_["nodes"]:
        p = {"name": nd["name"], "parent": nd["parent"]}
        if "host" in nd:
            p["host"] = nd["host"]
        if nd["parent"] >= 0:
            if nd.get("shared"):
                p["both"] = {"bandwidth": nd["up"]["bandwidth"], "latency": nd["up"]["latency"], "how": "declared"}
            else:
                for k in ("up", "down"):
                    p[k] = {"bandwidth": nd[k]["bandwidth"], "latency": nd[k]["latency"], "how": "declared"}
        if nd.get("fabric"):
            p["fabric"] = {"bandwidth": nd["fabric"]["bandwidth"], "latency": nd["fabric"]["latency"],
                           "how": "declared"}
        out.append(p)
    return out


def model_profile(tree_, o_s=1e-6, o_r=1e-6, created="1970-01-01T00:00:00Z"):
    """The platform as hetcoll would plan on it were the probe exact: a
    version 2 profile (docs/profile.md) whose network is the tree, one rank
    per host in tree_["hosts"] order, each host's send and receive overheads
    SMPI's (o_s, o_r per message, s), its per-byte send cost its interface's
    (1 / the leaf's link up), no receive copy, no computing cost (the
    project's SMPI settings do not simulate a reduction's arithmetic), one
    latency subnet. For the planner's property tests on generated platforms
    (scripts/regret.py --generated): what it chooses there against the
    simulation of what it would run."""
    hosts = tree_["hosts"]
    nodes = tree_["nodes"]
    leaf = {nd["host"]: nd for nd in nodes if "host" in nd}
    free = 1e-300  # a link that never limits (bandwidth 0): its per-byte cost

    def per_byte(nd):
        bw = nd["up"]["bandwidth"] if nd.get("up") else 0.0
        return 1.0 / bw if bw > 0 else free

    measure = lambda x: {"min": x, "median": x}  # noqa: E731
    return {
        "format": "hetcoll-profile", "version": 2,
        "measured": {"created": created, "tool": "testbed/smpi/truth.py (the platform's tree)",
                     "mpi": "none: the platform declared", "mode": "concurrent", "ranks": len(hosts), "repeats": 0,
                     "budget_s": 0.0, "seconds": 0.0, "budget_exhausted": False, "phases": {},
                     "small_bytes": 8, "large_bytes": 262144},
        "hosts": [{"name": h, "ranks": [k], "subnet": 0, "Sc": measure(o_s), "Sm": per_byte(leaf[k]),
                   "Rc": measure(o_r), "Rm": 0.0, "gamma": 0.0, "copy": 0.0} for k, h in enumerate(hosts)],
        "subnets": {"threshold": 0.2, "count": 1, "gap": 0.0},
        "ring": {"hosts": list(range(len(hosts))), "crossings": 0},
        "network": to_profile_network(tree_),
        "reductions": [], "lambda": [], "model": {"receives_use_cpu": False}, "tuned": [],
    }


def profile_tree(profile):
    """A profile's "network" (version 2) as a tree; its hosts are the
    profile's hosts[] names. A tree (a dict with "nodes") is returned as is."""
    if "nodes" in profile:
        return profile
    net = profile.get("network")
    if not net:
        raise ValueError("the profile has no network (a version 2 profile's tree)")
    hosts = [h["name"] for h in profile.get("hosts") or []]
    nodes = []
    for nd in net:
        node = {"name": nd.get("name", ""), "parent": nd["parent"]}
        if "host" in nd:
            node["host"] = nd["host"]
        if nd["parent"] >= 0:
            zero = {"bandwidth": 0.0, "latency": 0.0}
            both = nd.get("both")
            node["up"] = dict(both or nd.get("up") or zero)
            node["down"] = dict(both or nd.get("down") or zero)
            node["shared"] = both is not None
        if nd.get("fabric"):
            node["fabric"] = dict(nd["fabric"])
        nodes.append(node)
    return {"platform": profile.get("platform", "profile"), "hosts": hosts, "nodes": nodes}
