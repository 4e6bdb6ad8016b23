"""The code of testbed/smpi/truth.py (the truth of a SimGrid platform, and
the checks that hold hetcoll's probe to it), one part a module:

    units       SimGrid's unit syntax parsed; times and rates formatted
    routes      the platform XML read into zones and links, SimGrid's routes
                (Truth, load)
    tree        the platform's tree, derived from its routes (tree)
    network     trees as profiles and back (to_profile_network,
                model_profile, profile_tree)
    tree_check  trees compared (diff_trees, check_tree: truth.py --tree)
    checks      a profile's pair measurements against the truth (check,
                check_agree, eco_partition)
    show        the truth and the tree printed (truth.py without a profile)

Use it through truth.py (`import truth` with testbed/smpi on sys.path, or
the script): it re-exports the names callers use and is the CLI.
"""
