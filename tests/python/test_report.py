"""hetcoll report: the page and its plots from bench results and a profile,
and the page rendered by headless Chromium (every image decoded)."""
import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "bench/results/smpi_harness/profiles/three_subnets.json"


def fake_results(path: Path, ranks: int = 16) -> Path:
    """Bench rows as hetcoll-bench writes them: hetcoll, native and a forced
    algorithm for three collectives at three sizes."""
    rows = []
    for op in ("bcast", "allreduce", "alltoall"):
        for b in (1024, 65536, 1 << 20):
            t = 1e-4 + b * 1e-8
            for variant, k, alg in (("hetcoll", 1.0, "hierarchical"), ("native", 1.7, "native"),
                                    ("binomial_tree", 1.2, "binomial_tree")):
                rows.append({"op": op, "bytes": b, "variant": variant, "algorithm": alg,
                             "min_s": t * k * 0.95, "median_s": t * k, "times_s": [t * k] * 3,
                             "predicted_s": None if variant == "native" else t * k * 1.05,
                             "bound_s": t / 1.25})
    rows.append({"op": "barrier", "bytes": 0, "variant": "hetcoll", "algorithm": "hierarchical", "min_s": 1e-4,
                 "median_s": 1.1e-4, "times_s": [1.1e-4], "predicted_s": 1.0e-4})
    doc = {"tool": "hetcoll-bench test", "created": "2026-11-23T00:00:00Z", "ranks": ranks, "hosts": [],
           "model": str(PROFILE), "predictions": True, "procedure": "Fig. 2", "repeats": 3, "rows": rows}
    path.write_text(json.dumps(doc))
    return path


def images_of(page: Path) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page.read_text())]


def test_report_has_every_plot(tmp_path):
    from hetcoll import report

    page = report.build([str(fake_results(tmp_path / "bench.json"))], str(PROFILE), str(tmp_path / "out"))
    text = page.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained: nothing to fetch
    imgs = images_of(page)
    expected = ["time_vs_size", "predicted_vs_measured", "speedup", "lambda", "network", "schedule_bcast_1024",
                "schedule_bcast_1048576", "schedule_allreduce_1048576"]
    if not shutil.which("dot"):
        expected = expected[:5]
    assert len(imgs) == len(expected)
    for name in expected:
        png = (tmp_path / "out" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, name
        w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert w > 300 and h > 100 and w * h > 150000, (name, w, h)
    for png in imgs:
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["median_ratio"] == pytest.approx(1.7)
    assert summary["median_error"] == pytest.approx(0.05, rel=1e-6)
    # The table: every (op, size) with hetcoll's algorithm and the ratio.
    assert text.count("<tr>") == 1 + 10
    assert "1.70×" in text and "hierarchical" in text
    # The physical bound beside each row: hetcoll's time is 1.25x it.
    assert "× bound" in text and text.count("1.25×") == 9
    assert all(r["x_bound"] == pytest.approx(1.25) for r in summary["rows"] if r["op"] != "barrier")


def test_report_refuses_what_is_not_a_result(tmp_path, run_cli):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    code, out, err = run_cli("report", str(bad), str(PROFILE), "-o", str(tmp_path / "o"))
    assert code != 0 and "not a hetcoll bench result" in err
    code, out, err = run_cli("report", str(PROFILE), "-o", str(tmp_path / "o"))
    assert code != 0 and "at least one results file and the profile" in err
    code, out, err = run_cli("report", str(fake_results(tmp_path / "b.json")), str(tmp_path / "missing.json"),
                             "-o", str(tmp_path / "o"))
    assert code != 0 and not (tmp_path / "o" / "index.html").exists()


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(tmp_path):
    """The page in a real browser: every image decodes (the page's own
    check, read from the DOM after load), and a screenshot that is not
    blank — kept for the README when HETCOLL_SCREENSHOT names a file."""
    from hetcoll import report

    page = report.build([str(fake_results(tmp_path / "bench.json"))], str(PROFILE), str(tmp_path / "out"))
    n = len(images_of(page))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000"]
    dom = subprocess.run([chromium(), *flags, "--window-size=1280,2400", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert f'data-images="{n}/{n}"' in dom, dom[-500:]
    # Nothing wider than a 1280 px window (the page measures itself after load).
    import re

    over = re.search(r'data-overflow="(-?\d+)"', dom)
    assert over and int(over.group(1)) <= 0, dom[-300:]
    # What an engineer reads first: a table of contents, what ran, how to use it, the data linked.
    for text in ("<nav>", "What ran", "Use it", "export HETCOLL_PROFILE=", "data/bench.json", "spread"):
        assert text in dom, text
    assert "<h1>hetcoll: measured against native MPI" in dom  # the page's own title, not a figure's
    shot = tmp_path / "shot.png"
    subprocess.run([chromium(), *flags, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg
    import numpy as np

    pixels = mpimg.imread(str(shot))
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1200
    assert np.std(pixels[..., :3]) > 0.05  # not blank: plots and tables drawn
    if os.environ.get("HETCOLL_SCREENSHOT"):
        shutil.copy(shot, os.environ["HETCOLL_SCREENSHOT"])


def test_bench_builds_its_mpirun_command(run_cli, tmp_path):
    code, out, err = run_cli("bench", "--np", "3", "--ops", "bcast,alltoallv", "--sizes", "1k,1M", "--algorithms",
                             "binomial_tree", "--profile", str(PROFILE), "-o", str(tmp_path / "b.json"), "--dry-run",
                             "--max-repeats", "9",
                             "--", "--mca", "btl", "self,tcp")
    assert code == 0, err
    assert "-n 3" in out and "hetcoll-bench" in out and "--sizes 1024,1048576" in out
    assert "--algorithms binomial_tree" in out and "--mca btl self,tcp" in out and "--max-repeats 9" in out
    code, out, err = run_cli("bench", "--np", "2", "--profile", str(tmp_path / "missing.json"), "--dry-run")
    assert code != 0


def test_latency_bound_rows_compare_the_synchronized_start():
    """Where hetcoll-bench timed both variants from a synchronized start, the
    summary compares those (and the prediction with them); where only one
    variant has it, both stay on Fig. 2; results written before the
    synchronized start used the call timed alone."""
    from hetcoll import report

    def row(variant, median, sync=None, alone=None, pred=None):
        r = {"op": "bcast", "bytes": 1024, "ranks": 11, "variant": variant, "algorithm": variant,
             "median_s": median, "predicted_s": pred}
        if sync is not None:
            r["sync_median_s"] = sync
        if alone is not None:
            r["alone_median_s"] = alone
        return r

    both = report.summary_rows([row("hetcoll", 1e-4, sync=2e-3, pred=2.2e-3), row("native", 3e-4, sync=4e-3)])[0]
    assert both["timing"] == "synchronized start"
    assert both["hetcoll_s"] == 2e-3 and both["native_s"] == 4e-3
    assert abs(both["ratio"] - 2.0) < 1e-12 and abs(both["error"] - 0.1) < 1e-12
    one = report.summary_rows([row("hetcoll", 1e-4, sync=2e-3), row("native", 3e-4)])[0]
    assert one["timing"] == "Fig. 2" and one["hetcoll_s"] == 1e-4 and one["native_s"] == 3e-4
    old = report.summary_rows([row("hetcoll", 1e-4, alone=5e-3), row("native", 3e-4, alone=6e-3)])[0]
    assert old["timing"] == "alone" and old["hetcoll_s"] == 5e-3
    assert report.measured(row("hetcoll", 1e-4, sync=2e-3, alone=5e-3)) == 2e-3


def test_the_drawings_show_the_algorithm_that_ran(tmp_path):
    """For every row of a bench result the report would draw the algorithm
    that ran; a call the bench did not run is drawn as the MPI layer decides
    it (the decision point `hetcoll plan` shows), never the first candidate."""
    from hetcoll import _core, report

    ranks = json.loads(PROFILE.read_text())["measured"]["ranks"]
    ran = {("bcast", 1024): "binomial_tree", ("bcast", 1 << 20): "scatter_collect",
           ("allreduce", 1 << 20): "ring_allreduce", ("allreduce", 1024): "recursive_doubling_allreduce"}
    rows = []
    for (op, b), alg in ran.items():
        for variant, k, a in (("hetcoll", 1.0, alg), ("native", 1.5, "native")):
            rows.append({"op": op, "bytes": b, "variant": variant, "algorithm": a, "min_s": k * 1e-4,
                         "median_s": k * 1e-4, "times_s": [k * 1e-4], "predicted_s": None})
    doc = {"tool": "hetcoll-bench test", "created": "2026-11-25T00:00:00Z", "ranks": ranks, "hosts": [],
           "model": str(PROFILE), "predictions": False, "procedure": "Fig. 2", "repeats": 1, "rows": rows}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    results, _ = report.load_results([str(tmp_path / "b.json")])
    summ = report.summary_rows(results)
    p = json.loads(PROFILE.read_text())
    assert len(summ) == len(ran)
    for r in summ:
        assert report.drawn_algorithm(summ, p, str(PROFILE), r["op"], r["bytes"]) == (ran[(r["op"], r["bytes"])], "ran")
    # Not run: the decision, as `hetcoll plan` (the MPI layer's decision point) gives it.
    model = _core.group_model(_core.parse_model(f"profile:{PROFILE}"), [], ranks)
    decided = _core.decide(_core.collective("bcast", ranks, 8192, elem_size=8), model)["algorithm"]
    assert report.drawn_algorithm(summ, p, str(PROFILE), "bcast", 65536) == (decided, "decided")
    if shutil.which("dot"):
        page = report.build([str(tmp_path / "b.json")], str(PROFILE), str(tmp_path / "out"))
        text = page.read_text()
        for (op, b), alg in ran.items():
            if (op, b) in (("bcast", 1024), ("bcast", 1 << 20), ("allreduce", 1 << 20)):
                assert f"{op} of {report._size(b)}: {alg} (" in text, (op, b, alg)
                assert f"The {op} that ran at {report._size(b)}" in text


def test_lambda_is_drawn_only_where_the_postal_model_applies():
    """The profile says when Bruck's λ fits are below 1 (the postal model does
    not describe the network): the report draws λ(m) only otherwise."""
    from hetcoll import profile as prof
    from hetcoll import report

    assert report.postal_applies(prof.load(str(PROFILE)))
    netns = prof.load(str(ROOT / "bench" / "results" / "netns" / "profile.json"))
    assert netns["lambda"] and not report.postal_applies(netns)
    assert any("postal model does not describe" in line for line in prof.lambda_lines(netns))
