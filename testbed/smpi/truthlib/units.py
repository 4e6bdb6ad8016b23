"""Quantities: SimGrid 3.32's unit syntax parsed the way SimGrid parses a
platform (parse_bandwidth, parse_time, parse_speed; a cluster's radical
list), and times and rates formatted for the reports (_fmt_t, _fmt_bw).
"""

import math
import re


# ----------------------------------------------------------------------------
# Units (SimGrid 3.32, src/xbt/xbt_parse_units.cpp)


def _scale_table(unit, value, base2, base10):
    table = {unit: value}
    if base10:
        v = value
        for p in ["k", "M", "G", "T", "P", "E", "Z", "Y"]:
            v *= 1000.0
            table[p + unit] = v
    if base2:
        v = value
        for p in ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"]:
            v *= 1024.0
            table[p + unit] = v
    return table


_BW_UNITS = {}
_BW_UNITS.update(_scale_table("bps", 0.125, True, True))
_BW_UNITS.update(_scale_table("Bps", 1.0, True, True))
_TIME_UNITS = {"w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0,
               "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}
_SPEED_UNITS = {}
_SPEED_UNITS.update(_scale_table("f", 1.0, False, True))
_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


def _parse(text, units, default_unit, what):
    m = _NUM.match(text or "")
    if not m:
        raise ValueError("cannot parse %s %r" % (what, text))
    unit = m.group(2) or default_unit
    if unit not in units:
        raise ValueError("unknown unit %r in %s %r" % (unit, what, text))
    return float(m.group(1)) * units[unit]


def parse_bandwidth(text):
    return _parse(text, _BW_UNITS, "Bps", "bandwidth")


def parse_time(text):
    return _parse(text, _TIME_UNITS, "s", "time")


def parse_speed(text):
    # several pstates "1Gf,0.5Gf": the first is the default
    return _parse(text.split(",")[0], _SPEED_UNITS, "f", "speed")


def _radicals(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


def _fmt_t(s):
    if s is None or not math.isfinite(s):
        return str(s)
    if abs(s) >= 1e-3:
        return "%.4g ms" % (s * 1e3)
    return "%.4g us" % (s * 1e6)


def _fmt_bw(b):
    if b is None or not math.isfinite(b):
        return str(b)
    return "%.4g MB/s" % (b / 1e6)
