//! The HTML report of real runs (a small SQLite run, a small index-lab sweep, and the two
//! compared; an online-DDL test, and one with two methods on PostgreSQL; an `ab`; an index-lab
//! sweep on PostgreSQL with its build progress)
//! rendered by headless Chromium (Debian's `chromium`): no console messages, every
//! expected chart present in the rendered DOM and drawn (lines, bars), nothing loaded from the
//! network, and a screenshot kept in `<target>/test-artefacts/` for a person to look at.

use crate::common;

use common::*;
use ixbench::server::ServerKind;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium on the PATH, or `None` (skipped; a failure under CI=true).
fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(o) = Command::new("which").arg(name).output() {
            if o.status.success() {
                let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
                if !p.is_empty() {
                    return Some(PathBuf::from(p));
                }
            }
        }
    }
    None
}

/// Where screenshots are kept: `<target>/test-artefacts/`.
fn artefacts() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What headless Chromium made of a page.
struct Rendered {
    /// The DOM after loading (`--dump-dom`).
    dom: String,
    /// Console messages Chromium logged (`INFO:CONSOLE` lines).
    console: Vec<String>,
}

/// Load `page` in headless Chromium with a new empty profile and no network services; with
/// `shot`, also take a screenshot there.
fn render(chrome: &Path, page: &Path, shot: Option<&Path>) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let run = |extra: &[String]| {
        let o = Command::new(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                &format!("--user-data-dir={}", profile.path().display()),
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        assert!(
            o.status.success(),
            "chromium failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o
    };
    let o = run(&["--dump-dom".to_string()]);
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    if let Some(shot) = shot {
        let _ = std::fs::remove_file(shot);
        run(&[
            "--window-size=1400,6000".to_string(),
            format!("--screenshot={}", shot.display()),
        ]);
        let png = std::fs::read(shot).expect("screenshot written");
        assert!(png.starts_with(b"\x89PNG"), "not a PNG: {}", shot.display());
        assert!(
            png.len() > 20_000,
            "screenshot too small: {} bytes",
            png.len()
        );
    }
    Rendered {
        dom: String::from_utf8_lossy(&o.stdout).into_owned(),
        console,
    }
}

/// What a person at a 1400 px window would see wrong, measured by Chromium's layout: elements
/// wider than the page, text boxes of a chart overlapping each other or leaving the chart,
/// table cells with a number of more than 4 significant digits, and charts with no mark
/// drawn. Found by a copy of the page with a small script added (the report itself has none).
#[derive(Debug, Default, serde::Deserialize)]
struct Layout {
    width: f64,
    wide: Vec<String>,
    overlaps: Vec<String>,
    digits: Vec<String>,
    empty: Vec<String>,
}

const LAYOUT_JS: &str = r#"<script>(function(){
var W = document.documentElement.clientWidth;
var out = {width: W, wide: [], overlaps: [], digits: [], empty: []};
document.querySelectorAll('body *').forEach(function(e){
  var r = e.getBoundingClientRect();
  if (r.width > 0 && r.right > W + 0.5) out.wide.push(e.tagName + '#' + (e.id || '') + ' right=' + Math.round(r.right));
});
document.querySelectorAll('figure').forEach(function(fig){
  var svg = fig.querySelector('svg');
  if (!svg) return;
  var marks = svg.querySelectorAll('polyline, rect, circle').length;
  if (marks < 2) out.empty.push(fig.id);
  var ts = Array.prototype.filter.call(svg.querySelectorAll('text'), function(t){ return t.textContent.trim().length > 0; });
  var rs = ts.map(function(t){ return t.getBoundingClientRect(); });
  var sb = svg.getBoundingClientRect();
  for (var i = 0; i < rs.length; i++) {
    var a = rs[i];
    if (a.left < sb.left - 1 || a.right > sb.right + 1) out.overlaps.push(fig.id + ': "' + ts[i].textContent.trim() + '" outside its chart');
    for (var j = i + 1; j < rs.length; j++) {
      var b = rs[j];
      var ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      var oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (ox > 1 && oy > 1) out.overlaps.push(fig.id + ': "' + ts[i].textContent.trim() + '" over "' + ts[j].textContent.trim() + '"');
    }
  }
});
document.querySelectorAll('td').forEach(function(td){
  var t = td.textContent.trim();
  if (/^-?[0-9]+\.[0-9]+x?$/.test(t)) {
    var d = t.replace(/[^0-9]/g, '').replace(/^0+/, '');
    if (d.length > 4) out.digits.push(t);
  }
});
var pre = document.createElement('pre');
pre.id = 'ixbench-layout';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
})();</script>"#;

/// [`Layout`] of `page` at 1400 px.
fn layout(chrome: &Path, page: &Path) -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("layout.html");
    let html = std::fs::read_to_string(page).unwrap();
    std::fs::write(
        &copy,
        html.replace("</body>", &format!("{LAYOUT_JS}</body>")),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            "--window-size=1400,2000",
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", copy.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&o.stdout);
    let json = dom
        .split("<pre id=\"ixbench-layout\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| {
            panic!(
                "no layout from chromium: {}",
                String::from_utf8_lossy(&o.stderr)
            )
        });
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// A page a person can read at 1400 px: nothing wider than the window, no text of a chart
/// over another or outside it, no number with more than 4 significant digits, no empty chart.
fn assert_readable(chrome: &Path, page: &Path) {
    let l = layout(chrome, page);
    assert!(l.width >= 1300.0, "window {} px", l.width);
    assert!(
        l.wide.is_empty(),
        "{}: wider than the page: {:?}",
        page.display(),
        l.wide
    );
    assert!(
        l.overlaps.is_empty(),
        "{}: overlapping text: {:?}",
        page.display(),
        l.overlaps
    );
    assert!(
        l.digits.is_empty(),
        "{}: numbers with more than 4 significant digits: {:?}",
        page.display(),
        l.digits
    );
    assert!(
        l.empty.is_empty(),
        "{}: empty charts: {:?}",
        page.display(),
        l.empty
    );
}

/// Text as the page holds it (HTML-escaped).
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The `<figure>` element with this id in the DOM.
fn figure<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<figure id=\"{id}\""))
        .unwrap_or_else(|| panic!("chart {id} missing from the rendered page"));
    let end = dom[start..].find("</figure>").expect("figure closed") + start;
    &dom[start..end]
}

/// Assert a chart is drawn: an SVG with a size, and at least `lines` polylines with 2+ points
/// (data lines and axes) or `rects` filled rectangles (bars, spans, background).
fn assert_drawn(dom: &str, id: &str, lines: usize, rects: usize) {
    let f = figure(dom, id);
    assert!(f.contains("<svg"), "{id}: no svg");
    assert!(!f.contains("chart not drawn"), "{id}: {f}");
    let polylines = f
        .split("<polyline")
        .skip(1)
        .filter(|p| {
            let pts = p
                .split("points=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("");
            pts.split_whitespace().count() >= 2
        })
        .count();
    let rect_count = f.matches("<rect").count();
    assert!(
        polylines >= lines,
        "{id}: {polylines} polylines, want {lines}"
    );
    assert!(
        rect_count >= rects,
        "{id}: {rect_count} rects, want {rects}"
    );
}

/// Every element id in the page is unique (several runs on one page get prefixes).
fn assert_unique_ids(dom: &str) {
    let mut ids: Vec<&str> = dom
        .split(" id=\"")
        .skip(1)
        .filter_map(|r| r.split('"').next())
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate element ids");
}

/// The page loads nothing: no script, no external reference (the only URL is SVG's namespace).
fn assert_self_contained(html: &str) {
    assert!(!html.contains("<script"), "report has a script");
    assert!(!html.contains("<link"), "report links a file");
    assert!(!html.contains(" src="), "report loads a file");
    let urls = html.matches("http://").count() + html.matches("https://").count();
    let ns = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(urls, ns, "report names a URL other than the SVG namespace");
}

#[test]
fn console_messages_are_seen() {
    // The check below is only worth something if it sees a console error when there is one.
    let Some(chrome) = chromium() else {
        return skip("console_messages_are_seen", "chromium is not installed").unwrap_or_default();
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<html><body><p>x</p><script>console.error('report-test-boom')</script></body></html>",
    )
    .unwrap();
    let r = render(&chrome, &page, None);
    assert!(
        r.console.iter().any(|l| l.contains("report-test-boom")),
        "{:?}",
        r.console
    );
}

#[test]
fn reports_render_in_chromium() {
    let Some(chrome) = chromium() else {
        return skip("reports_render_in_chromium", "chromium is not installed").unwrap_or_default();
    };
    let tmp = tempfile::tempdir().unwrap();
    let shots = artefacts();

    // A small insert-benchmark run on SQLite: every step.
    let run = tmp.path().join("run");
    let o = ixbench(&[
        "run",
        "--out",
        run.to_str().unwrap(),
        "--rows",
        "20000",
        "--rows2",
        "5000",
        "--query-seconds",
        "1.5",
        "--rates",
        "100,400",
        "--interval",
        "0.5",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let run_html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert_self_contained(&run_html);
    let r = render(
        &chrome,
        &run.join("report.html"),
        Some(&shots.join("report-run.png")),
    );
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    let steps: Vec<String> = run_json(&run)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    // over time: data lines (several steps: several polylines per series) plus the axes
    assert_drawn(&r.dom, "timeline-rates", 4, 3);
    assert_drawn(&r.dom, "timeline-queries", 4, 3);
    assert_drawn(&r.dom, "timeline-maxlat", 6, 3);
    for s in ["l.i1", "l.i2", "qr100", "qp400"] {
        assert!(steps.iter().any(|x| x == s), "{s} not in {steps:?}");
        let id = s.replace('.', "-");
        assert_drawn(&r.dom, &format!("step-{id}"), 3, 1);
        // one curve per operation: l.i1 and l.i2 insert + delete, query steps + query
        let ops = if s.starts_with('q') { 3 } else { 2 };
        assert_drawn(&r.dom, &format!("pct-{id}"), 2 + ops, 1);
    }
    // CPU per operation: a bar per step that measured it (SQLite: the client's only)
    assert_drawn(&r.dom, "cpu-per-op", 2, 1 + 4);
    // issue 30: the answer first (a line per step with its rates and p99), then the charts,
    // then the tables, then the details
    let answer_at = r.dom.find("id=\"answer\"").expect("the answer");
    let chart_at = r.dom.find("<figure").expect("a chart");
    let table_at = r.dom.find("id=\"table-steps\"").expect("steps table");
    let details_at = r.dom.find("id=\"details\"").expect("details");
    assert!(answer_at < chart_at && chart_at < table_at && table_at < details_at);
    let run_result: ixbench::results::RunResult =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    let answer = ixbench::export::summary::answer(&run_result);
    assert_eq!(answer.len(), run_result.steps.len() + 1, "{answer:?}");
    for (line, st) in answer.iter().zip(&run_result.steps) {
        assert!(line.text.starts_with(&format!("{}: ", st.name)), "{line:?}");
        if st.summary.ips > 0.0 && st.index_builds.is_empty() {
            let ips = ixbench::format::rate(st.summary.ips);
            assert!(
                line.text.contains(&format!("{ips} rows inserted/s")),
                "{line:?}"
            );
        }
        for l in st.latency.iter().filter(|l| l.latency.count > 0) {
            let p99 = ixbench::format::ms(l.latency.p99_us);
            assert!(
                line.text.contains(&format!("{} {p99} ms", l.op)),
                "{line:?}"
            );
        }
        // in the page as the answer says it
        assert!(r.dom.contains(&html_text(&line.text)), "{}", line.text);
    }
    assert_eq!(
        answer.last().unwrap().text,
        format!("checks: all {} passed", run_result.all_checks().len())
    );
    assert_readable(&chrome, &run.join("report.html"));
    // rates of a bulk load and of throttled writers differ by orders of magnitude: log scale,
    // with ticks a decade apart (a linear axis has no 100 beside 1000)
    let rates = figure(&r.dom, "timeline-rates");
    assert!(rates.contains("log scale"), "rates not on a log scale");
    assert!(
        svg_text(rates, "100") && svg_text(rates, "1000"),
        "no decade ticks on the rates axis"
    );
    // equal insert and delete rates: the first line is drawn wider, the second runs inside it,
    // dashed
    assert!(
        rates.contains("stroke-width=\"4\"") && rates.contains("stroke-width=\"2\""),
        "insert and delete lines drawn alike"
    );
    assert!(
        rates.contains("stroke-dasharray"),
        "deleted rows not dashed"
    );
    // axis labels whole inside their SVG (a centred label wider than its plot is clipped)
    assert_text_fits(
        figure(&r.dom, "cpu-per-op"),
        "microseconds of CPU per operation",
    );
    assert_text_fits(figure(&r.dom, "pct-l-i1"), "percentile");
    for f in ["pct-l-i1", "pct-qr100"] {
        let fig = figure(&r.dom, f);
        let last = ["99.99999%", "99.9999%", "99.999%", "99.99%", "99.9%", "99%"]
            .into_iter()
            .find(|l| svg_text(fig, l))
            .unwrap_or_else(|| panic!("{f}: no percentile tick"));
        assert_text_fits(fig, last);
    }
    assert!(r.dom.contains("id=\"checks-summary\""));
    assert!(r.dom.contains("check(s) passed"), "checks not all passed");
    // SQLite has no separate server: no server I/O figures, so no I/O chart
    assert!(!r.dom.contains("id=\"io-per-op\""));

    // A small index-lab sweep: bars of build time per knob point with the spread of repeats.
    let lab = tmp.path().join("lab");
    let o = ixbench(&[
        "index",
        "--out",
        lab.to_str().unwrap(),
        "--rows",
        "5000",
        "--knob",
        "cache_size=-2000,-64000",
        "--repeat",
        "2",
        "--strategy",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let lab_json = run_json(&lab);
    // build groups (knobs, build, mode) and those repeated
    let (groups, repeated) = {
        let keys: Vec<String> = lab_json["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| format!("{} {} {}", b["knobs"], b["build"], b["mode"]))
            .collect();
        let mut uniq = keys.clone();
        uniq.sort();
        uniq.dedup();
        let repeated = uniq
            .iter()
            .filter(|k| keys.iter().filter(|x| x == k).count() > 1)
            .count();
        (uniq.len(), repeated)
    };
    assert!(
        repeated >= 2,
        "{repeated} repeated build groups of {groups}"
    );
    let r = render(
        &chrome,
        &lab.join("report.html"),
        Some(&shots.join("report-index.png")),
    );
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    // a bar per knob point and build, plus the background
    assert_drawn(&r.dom, "builds", 2, groups + 1);
    // repeats: each repeated group's min..max drawn as an error bar (marked at the median)
    assert!(
        figure(&r.dom, "builds").matches("<circle").count() >= repeated,
        "no spread marks"
    );
    assert_drawn(&r.dom, "strategies", 2, 3);
    // the index lab leads with its answer and its own chart (the builds), not the load's
    let builds_at = r.dom.find("<figure id=\"builds\"").unwrap();
    assert!(r.dom.find("id=\"answer\"").unwrap() < builds_at);
    assert!(
        r.dom.find("<figure").unwrap() == builds_at,
        "the first chart is not the builds'"
    );
    let lab_result: ixbench::results::RunResult =
        serde_json::from_str(&std::fs::read_to_string(lab.join("run.json")).unwrap()).unwrap();
    let answer = ixbench::export::summary::answer(&lab_result);
    // 2 repeats a point: too few for the noise rule to call a winner
    assert!(
        answer.iter().any(|l| l
            .text
            .starts_with("knob point with the quickest builds: cache_size=")
            && l.text
                .contains("; NO VERDICT: too few runs to call a winner")),
        "{answer:?}"
    );
    assert!(
        answer.iter().any(|l| l.text.starts_with("load strategies")),
        "{answer:?}"
    );
    for l in &answer {
        assert!(r.dom.contains(&html_text(&l.text)), "{}", l.text);
    }
    assert_readable(&chrome, &lab.join("report.html"));

    // `ixbench report A B -o FILE`: both runs and the comparison bars; B is A itself here,
    // so nothing may be flagged.
    let cmp = tmp.path().join("cmp.html");
    let o = ixbench(&[
        "report",
        run.to_str().unwrap(),
        run.to_str().unwrap(),
        "-o",
        cmp.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let r = render(&chrome, &cmp, Some(&shots.join("report-compare.png")));
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    assert_drawn(&r.dom, "compare-new", 1, 3);
    assert!(!figure(&r.dom, "compare-new").contains("REGRESSION"));
    // the verdict first (the verdict model's words), the ratios on a log axis
    let answer = &r.dom[r.dom.find("id=\"answer\"").unwrap()..];
    assert!(
        answer.find("verdict new vs base: ").unwrap() < answer.find("<figure").unwrap(),
        "verdict not first"
    );
    assert!(figure(&r.dom, "compare-new").contains("log scale"));
    assert_readable(&chrome, &cmp);
    assert_drawn(&r.dom, "r1-timeline-rates", 4, 3);
    assert_drawn(&r.dom, "r2-timeline-rates", 4, 3);

    // `ixbench compare --html FILE` writes the same comparison.
    let page = tmp.path().join("compare.html");
    let o = ixbench(&[
        "compare",
        run.to_str().unwrap(),
        run.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        // one run per side is NO VERDICT (exit 5); this test is about the page
        "--pass-on",
        "no-verdict",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert_drawn(&html, "compare-new", 1, 3);
    assert!(
        html.contains("0 figure(s) worse beyond the noise"),
        "{html}"
    );
    assert_readable(&chrome, &page);

    // Regenerated in place, the single-run report is the same page as the one the run wrote.
    let o = ixbench(&["report", run.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(run.join("report.html")).unwrap(),
        run_html
    );
}

#[test]
fn report_errors_are_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ixbench(&["report", tmp.path().to_str().unwrap()]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("no run.json"), "{err}");
    let o = ixbench(&[
        "report",
        tmp.path().to_str().unwrap(),
        tmp.path().to_str().unwrap(),
    ]);
    let err = assert_one_line_error(&o);
    assert!(err.contains("no run.json") || err.contains("-o"), "{err}");
}

/// Assert the SVG text `label` in `figure` lies whole inside the SVG's width: its anchor `x`
/// and about 8.5 px a character of the charts' 16 px SVG font (an estimate).
fn assert_text_fits(figure: &str, label: &str) {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        tag.split(&format!(" {name}=\""))
            .nth(1)?
            .split('"')
            .next()?
            .parse()
            .ok()
    };
    let svg_tag = &figure[figure.find("<svg").expect("svg")..];
    let width = attr(&svg_tag[..svg_tag.find('>').unwrap()], "width").expect("svg width");
    let mut found = false;
    for part in figure.split("<text").skip(1) {
        let Some(end) = part.find("</text>") else {
            continue;
        };
        let (tag, body) = part[..end].split_once('>').unwrap();
        if body.trim() != label {
            continue;
        }
        found = true;
        let x = attr(tag, "x").expect("text x");
        let w = label.chars().count() as f64 * 8.5;
        let (l, r) = if tag.contains("text-anchor=\"middle\"") {
            (x - w / 2.0, x + w / 2.0)
        } else if tag.contains("text-anchor=\"end\"") {
            (x - w, x)
        } else {
            (x, x + w)
        };
        assert!(
            l >= 0.0 && r <= width,
            "'{label}' at {l:.0}..{r:.0} px is clipped by the {width} px SVG"
        );
    }
    assert!(found, "'{label}' not drawn whole in {figure}");
}

/// A label drawn in a chart's SVG (plotters writes `<text ...>\nLABEL\n</text>`).
fn svg_text(figure: &str, label: &str) -> bool {
    figure.contains(&format!(">\n{label}\n<")) || figure.contains(&format!(">{label}<"))
}

/// `ixbench ddl`: per knob point, the load's TPS and latency second by second with the
/// baseline, the DDL and the recovery marked, and the before/during/after table.
#[test]
fn ddl_report_renders() {
    let Some(chrome) = chromium() else {
        return skip("ddl_report_renders", "chromium is not installed").unwrap_or_default();
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ddl");
    let o = ixbench(&[
        "ddl",
        "--out",
        out.to_str().unwrap(),
        "--table-size",
        "3000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "2",
        "--recovery-seconds",
        "2",
        "--knob",
        "cache_size=-2000,-8000",
        "--pass-on",
        "no-verdict",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_self_contained(&html);
    let r = render(
        &chrome,
        &out.join("report.html"),
        Some(&artefacts().join("report-ddl.png")),
    );
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    let run = run_json(&out);
    let points = run["ddl"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for n in 1..=points.len() {
        // transactions/s and the offered rate; spans: baseline shaded, the DDL, its end mark
        assert_drawn(&r.dom, &format!("ddl-{n}-tps"), 2 + 2, 2);
        let f = figure(&r.dom, &format!("ddl-{n}-tps"));
        assert!(svg_text(f, "baseline"), "{f}");
        assert!(
            svg_text(f, "DDL start") || svg_text(f, "DDL end"),
            "DDL not marked: {f}"
        );
        // p50, p99, max; max dashed so p99 under it shows
        assert_drawn(&r.dom, &format!("ddl-{n}-latency"), 3 + 2, 2);
        let lat = figure(&r.dom, &format!("ddl-{n}-latency"));
        assert!(lat.contains("stroke-dasharray"), "max not dashed: {lat}");
        let w = r
            .dom
            .split(&format!("id=\"ddl-{n}-windows\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no windows table for point {n}"));
        let w = &w[..w.find("</table>").unwrap()];
        for name in ["baseline", "during", "after"] {
            assert!(w.contains(&format!("<td>{name}</td>")), "{name}: {w}");
        }
    }
    // the answer first: a line per point with its verdict in ddl's words
    let ddl_result: ixbench::results::RunResult =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let answer = ixbench::export::summary::answer(&ddl_result);
    let d = ddl_result.ddl.as_ref().unwrap();
    for (n, p) in d.points.iter().enumerate() {
        // the point's verdict lines first, then its figures and recovery
        let line = answer
            .iter()
            .rev()
            .find(|l| l.text.starts_with(&format!("point {} (", n + 1)))
            .unwrap_or_else(|| panic!("point {n}: {answer:?}"));
        if let Some(i) = &p.impact {
            assert!(
                line.text
                    .contains(&ixbench::export::ddl::recovery_verdict(i)),
                "{line:?}"
            );
        }
    }
    let answer_at = r.dom.find("id=\"answer\"").unwrap();
    assert!(answer_at < r.dom.find("<figure").unwrap());
    assert!(r.dom.find("<figure").unwrap() < r.dom.find("id=\"table-ddl\"").unwrap());
    assert_readable(&chrome, &out.join("report.html"));
    // `ixbench report` writes the same page again (the ddl tables included)
    let o = ixbench(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("report.html")).unwrap(),
        html
    );
}

/// The index lab on PostgreSQL: the progress timeline of each knob point's builds, from
/// `pg_stat_progress_create_index` (SQLite reports no progress: no such chart there).
#[test]
fn index_progress_renders() {
    let Some(chrome) = chromium() else {
        return skip("index_progress_renders", "chromium is not installed").unwrap_or_default();
    };
    let Some(srv) = start_server("index_progress_renders", ServerKind::Postgres, false) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("lab");
    let o = ixbench(&[
        "index",
        "--target",
        &srv.url(),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "300000",
        "--knob",
        "maintenance_work_mem=1MB,64MB",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let run = run_json(&out);
    let sampled = run["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| !b["progress"].as_array().unwrap().is_empty())
        .count();
    assert!(sampled > 0, "no build has progress samples");
    let r = render(
        &chrome,
        &out.join("report.html"),
        Some(&artefacts().join("report-index-pg.png")),
    );
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    assert_readable(&chrome, &out.join("report.html"));
    // a series per knob point with progress figures (points marked: few samples), axes
    let f = figure(&r.dom, "build-progress");
    assert!(f.contains("maintenance_work_mem=1MB"), "{f}");
    assert!(f.contains("maintenance_work_mem=64MB"), "{f}");
    // Each point is marked when there are few (at most 60 in all, src/export/chart.rs); slow
    // builds sample more, and then only the lines are drawn.
    let circles = f.matches("<circle").count();
    let line_points: usize = f
        .split("<polyline")
        .skip(1)
        .map(|p| {
            p.split("points=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .sum();
    if circles == 0 {
        assert!(line_points > 60, "no point marked among {line_points}: {f}");
    } else {
        assert!(circles >= 4, "{f}");
    }
    assert_drawn(&r.dom, "build-progress", 2, 1);
    // SQLite's lab has no progress view: no empty chart
    let lite = tmp.path().join("lite");
    let o = ixbench(&["index", "--out", lite.to_str().unwrap(), "--rows", "2000"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(lite.join("report.html")).unwrap();
    assert!(
        !html.contains("build-progress"),
        "progress chart without progress"
    );
}

/// Every check a run.json holds, whatever command wrote it, as (where it is kept, name, ok):
/// read here from the JSON itself, not through ixbench's own list of them.
fn checks_in(run: &serde_json::Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let mut add = |place: &str, v: &serde_json::Value| {
        for c in v["checks"].as_array().into_iter().flatten() {
            out.push((
                place.to_string(),
                c["name"].as_str().unwrap().to_string(),
                c["ok"].as_bool().unwrap(),
            ));
        }
    };
    for key in ["steps", "builds", "strategies", "oltp", "timeseries"] {
        for v in run[key].as_array().into_iter().flatten() {
            add(key, v);
        }
    }
    for p in run["ddl"]["points"].as_array().into_iter().flatten() {
        add("ddl.points", p);
    }
    out
}

/// The text of a page as a reader sees it: the tags taken out, entities of the report's
/// escaping put back, white space folded.
fn page_text(dom: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in dom.chars() {
        match c {
            '<' => {
                in_tag = true;
                out.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every command (`run`, `index`, `ddl`, `oltp`, `timeseries` at `--size smoke` on SQLite)
/// shows the checks it ran, in its text, its report (as Chromium renders it) and its
/// `checks.csv`: the count of run.json's checks, and each one by name. (`ddl`, `oltp` and
/// `timeseries` once wrote passed checks into run.json while their report said "no self-check
/// ran" and their text listed none.)
#[test]
fn every_command_shows_the_checks_it_ran() {
    let Some(chrome) = chromium() else {
        return skip(
            "every_command_shows_the_checks_it_ran",
            "chromium is not installed",
        )
        .unwrap_or_default();
    };
    for cmd in ["run", "index", "ddl", "oltp", "timeseries"] {
        // The runs smoke::smoke_sqlite checks too (made once).
        let shared = common::sqlite_smoke(cmd);
        let (o, out) = (&shared.output, &shared.out);
        let (stdout, stderr) = text(o);
        assert!(o.status.success(), "{cmd}: {stderr}");
        let run = run_json(out);
        let checks = checks_in(&run);
        assert!(!checks.is_empty(), "{cmd}: run.json holds no check");
        assert!(
            checks.iter().all(|c| c.2),
            "{cmd}: a check failed: {checks:?}"
        );
        let n = checks.len();
        // the text: the count, then every check by name
        assert!(
            stdout.contains(&format!("checks: all {n} passed")),
            "{cmd}: the text does not count {n} checks:\n{stdout}"
        );
        let listed = &stdout[stdout.rfind("checks: all").unwrap()..];
        for (_, name, _) in &checks {
            assert!(
                listed.contains(name.as_str()),
                "{cmd}: check {name} not listed in the text:\n{listed}"
            );
        }
        // the report, as a reader sees it
        let r = render(
            &chrome,
            &out.join("report.html"),
            Some(&artefacts().join(format!("report-checks-{cmd}.png"))),
        );
        assert!(r.console.is_empty(), "{cmd}: console: {:?}", r.console);
        let page = page_text(&r.dom);
        assert!(
            !page.contains("no self-check ran"),
            "{cmd}: the report says no check ran"
        );
        assert!(
            page.contains(&format!("all {n} check(s) passed")),
            "{cmd}: the report does not count {n} checks: {page}"
        );
        let section = r
            .dom
            .split("id=\"checks-summary\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd}: no checks section"));
        for (_, name, _) in &checks {
            assert!(
                section.contains(&format!("<td>{name}</td>")),
                "{cmd}: check {name} not in the report's list"
            );
        }
        // the table: one row per check
        let csv = std::fs::read_to_string(out.join("checks.csv"))
            .unwrap_or_else(|e| panic!("{cmd}: checks.csv: {e}"));
        let t = ixbench::export::csv::parse(&csv).expect("checks.csv parses");
        assert_eq!(t.rows.len(), n, "{cmd}: checks.csv");
        assert!(t.rows.iter().all(|r| r[2] == "ok"), "{cmd}: {csv}");
        assert!(out.join("checks.md").is_file(), "{cmd}: checks.md");
    }
}

/// A step shorter than one interval has no per-interval rate: its p50 and p01 are unknown
/// (`null`) in run.json, and the text, `steps.csv` and the report say `n/a (step shorter than
/// an interval)` where they once said 0. A step with an interval of at least half the
/// length has them.
#[test]
fn a_step_shorter_than_an_interval_has_no_interval_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let interval = 60.0;
    let o = ixbench(&[
        "run",
        "--size",
        "smoke",
        "--out",
        out.to_str().unwrap(),
        "--interval",
        "60",
        "--steps",
        "l.i0,l.x,l.i1",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let run = run_json(&out);
    let lines = intervals(&out);
    let csv = std::fs::read_to_string(out.join("steps.csv")).unwrap();
    let table = ixbench::export::csv::parse(&csv).unwrap();
    let p01_col = table
        .headers
        .iter()
        .position(|h| h.starts_with("p01"))
        .unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let na = "n/a (step shorter than an interval)";
    let mut short = 0;
    for st in run["steps"].as_array().unwrap() {
        let name = st["name"].as_str().unwrap();
        let ops: u64 = st["totals"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        if ops == 0 {
            continue; // l.x: no operations timed per interval
        }
        // the mechanism: only intervals of at least half the length give a rate
        let full = lines
            .iter()
            .filter(|l| l["step"] == name)
            .any(|l| l["i_sec"].as_f64().unwrap() >= interval * 0.5);
        let row = table.rows.iter().find(|r| r[0] == name).unwrap();
        if full {
            assert!(st["summary"]["p50"].as_f64().is_some(), "{name}: {st}");
            continue;
        }
        short += 1;
        assert!(
            st["summary"]["p50"].is_null(),
            "{name}: p50 {}",
            st["summary"]["p50"]
        );
        assert!(
            st["summary"]["p01"].is_null(),
            "{name}: p01 {}",
            st["summary"]["p01"]
        );
        assert_eq!(row[p01_col], na, "{name}: steps.csv {row:?}");
        let block = &stdout[stdout.find(&format!("-- {name} ")).unwrap()..];
        let summary = block.lines().find(|l| l.contains("summary:")).unwrap();
        assert!(
            summary.contains(&format!("p50=n/a p01=n/a ({})", &na[5..na.len() - 1])),
            "{name}: {summary}"
        );
        assert!(!summary.contains("p50=0"), "{summary}");
    }
    assert!(short > 0, "no step shorter than the {interval} s interval");
    assert!(
        page_text(&html).contains(na),
        "the report's table lacks {na}"
    );
}

/// The insert benchmark's notes (its PK sequence, its INSERT style, its Index Only Scan plan
/// check) belong to that workload: on PostgreSQL `run` prints them and keeps them in its
/// results, while `oltp`, `timeseries` and `ddl` show none of them in their text, report or
/// run.json (they were the target's notes, printed by every command).
#[test]
fn insert_benchmark_notes_only_where_it_ran() {
    let test = "insert_benchmark_notes_only_where_it_ran";
    let Some(srv) = start_server(test, ServerKind::Postgres, false) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let url = srv.url();
    // the notes' own words (a plan stored by a check may well name an Index Only Scan)
    let marks = [
        "sequence CACHE 1000 per connection",
        "one multi-row INSERT per commit",
        "it must be an Index Only Scan on the index",
    ];
    for cmd in ["run", "oltp", "timeseries", "ddl"] {
        let out = tmp.path().join(cmd);
        let mut args = vec![
            cmd,
            "--size",
            "smoke",
            "--target",
            &url,
            "--out",
            out.to_str().unwrap(),
        ];
        if cmd == "run" {
            args.extend(["--steps", "l.i0"]);
        }
        // a busy machine may make ddl's baseline miss its load (NO VERDICT, exit 5): not what
        // this test is about
        if cmd == "ddl" {
            args.extend(["--pass-on", "no-verdict"]);
        }
        let o = ixbench(&args);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{cmd}: {stderr}");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        let json = std::fs::read_to_string(out.join("run.json")).unwrap();
        for m in marks {
            for (what, s) in [("text", &stdout), ("report", &html), ("run.json", &json)] {
                assert_eq!(
                    s.contains(m),
                    cmd == "run",
                    "{cmd}: {m:?} in its {what}: the insert benchmark's note {}",
                    if cmd == "run" { "missing" } else { "shown" }
                );
            }
        }
        if cmd == "run" {
            let notes = run_json(&out)["notes"].to_string();
            assert!(notes.contains(marks[2]), "{notes}");
        }
    }
}

/// `ixbench report A B -o FILE` of two runs of each workload (`run --workload
/// oltp_read_write`, `run --workload timeseries`, `ddl --workload timeseries`, `index
/// --workload oltp_read_only`): both runs and the comparison of the figures proper to that
/// workload, which Chromium renders without a console message.
#[test]
fn several_runs_of_each_workload_report() {
    let tmp = tempfile::tempdir().unwrap();
    let chrome = chromium();
    let cases: [(&str, Vec<&str>, &[&str]); 4] = [
        (
            "oltp",
            vec![
                "run",
                "--workload",
                "oltp_read_write",
                "--table-size",
                "500",
                "--time",
                "1",
                "--interval",
                "0.5",
            ],
            &["tps", "qps", "p95_ms", "p99_ms"],
        ),
        (
            "timeseries",
            vec![
                "run",
                "--workload",
                "timeseries",
                "--size",
                "smoke",
                "--time",
                "1",
                "--queries",
                "3",
            ],
            &["rows_per_sec", "retention_secs"],
        ),
        (
            "ddl",
            vec![
                "ddl",
                "--workload",
                "timeseries",
                "--size",
                "smoke",
                "--rate",
                "100",
                "--baseline-seconds",
                "1",
                "--recovery-seconds",
                "1",
                "--pass-on",
                "no-verdict",
            ],
            &["ddl_secs"],
        ),
        (
            "index",
            vec![
                "index",
                "--size",
                "smoke",
                "--rows",
                "2000",
                "--workload",
                "oltp_read_only",
            ],
            &["build_secs"],
        ),
    ];
    for (name, args, metrics) in cases {
        let mut dirs = Vec::new();
        for side in ["a", "b"] {
            let out = tmp.path().join(format!("{name}-{side}"));
            let mut a = args.clone();
            a.extend(["--out", out.to_str().unwrap()]);
            let o = ixbench(&a);
            assert!(o.status.success(), "{name}: {:?}", text(&o));
            dirs.push(out.to_str().unwrap().to_string());
        }
        let page = tmp.path().join(format!("{name}.html"));
        let o = ixbench(&["report", &dirs[0], &dirs[1], "-o", page.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {:?}", text(&o));
        let html = std::fs::read_to_string(&page).unwrap();
        assert_self_contained(&html);
        assert!(html.contains("<h1>ixbench comparison</h1>"), "{name}");
        assert!(html.contains("<figure id=\"compare-new\""), "{name}");
        for m in metrics {
            assert!(
                html.contains(&format!("<td>{m}</td>")),
                "{name}: {m} not compared"
            );
        }
        if let Some(chrome) = &chrome {
            let r = render(chrome, &page, None);
            assert!(r.console.is_empty(), "{name}: console: {:?}", r.console);
            assert_unique_ids(&r.dom);
            // each workload's comparison and its runs, readable at 1400 px
            assert_readable(chrome, &page);
            assert_readable(chrome, &Path::new(&dirs[0]).join("report.html"));
        }
    }
}

/// A results file with a damaged line in the middle is refused with the line's number (it was
/// dropped silently, so the intervals no longer added up to the totals); a last line cut short
/// (a run killed while writing it) is still skipped.
#[test]
fn a_damaged_intervals_line_is_named_not_dropped() {
    let shared = common::sqlite_smoke("run");
    assert!(shared.output.status.success());
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(shared.out.join("run.json"), dir.join("run.json")).unwrap();
    let text = std::fs::read_to_string(shared.out.join("intervals.ndjson")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "{text}");
    let report = |dir: &std::path::Path| {
        let html = dir.join("r.html");
        let o = ixbench(&[
            "report",
            dir.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ]);
        (o, html)
    };
    // cut short: the last line half written
    let last = lines[lines.len() - 1];
    let cut = format!(
        "{}\n{}",
        lines[..lines.len() - 1].join("\n"),
        &last[..last.len() / 2]
    );
    std::fs::write(dir.join("intervals.ndjson"), cut).unwrap();
    let (o, html) = report(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(html.is_file());
    // damaged in the middle
    let mut bad: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    bad[1] = bad[1].replace('{', "{{");
    std::fs::write(dir.join("intervals.ndjson"), bad.join("\n") + "\n").unwrap();
    let (o, _) = report(&dir);
    let err = common::assert_one_line_error(&o);
    assert!(err.contains("intervals.ndjson line 2 is damaged"), "{err}");
}

/// issue 30: the reports of `oltp` and `timeseries` lead with their own charts (transactions
/// per second and their response time over the run) right after the answer, then the
/// self-checks, the tables and the details; those and a merged several-process run's report
/// are readable at 1400 px.
#[test]
fn transaction_and_merged_reports_lead_with_their_charts() {
    let Some(chrome) = chromium() else {
        return skip(
            "transaction_and_merged_reports_lead_with_their_charts",
            "chromium is not installed",
        )
        .unwrap_or_default();
    };
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 2] = [
        ("oltp", &["--interval", "0.5"], "table-oltp"),
        (
            "timeseries",
            &[
                "--devices",
                "20",
                "--metrics",
                "2",
                "--ticks-per-partition",
                "5",
                "--keep-partitions",
                "3",
                "--rows-per-commit",
                "10",
                "--interval",
                "0.5",
            ],
            "table-timeseries",
        ),
    ];
    for (command, extra, table) in cases {
        let out = tmp.path().join(command);
        let mut a = vec![
            command,
            "--target",
            "sqlite",
            "--size",
            "smoke",
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        let o = ixbench(&a);
        assert!(o.status.success(), "{command}: {:?}", text(&o));
        let page = out.join("report.html");
        let r = render(&chrome, &page, None);
        assert!(r.console.is_empty(), "{command}: console: {:?}", r.console);
        assert_drawn(&r.dom, "timeline-tps", 2, 1);
        assert_drawn(&r.dom, "timeline-txn-latency", 4, 1);
        let at = |id: &str| {
            r.dom
                .find(&format!("id=\"{id}\""))
                .unwrap_or_else(|| panic!("{command}: no {id}"))
        };
        let order = [
            "answer",
            "timeline-tps",
            "timeline-txn-latency",
            table,
            "details",
        ];
        for w in order.windows(2) {
            assert!(at(w[0]) < at(w[1]), "{command}: {} after {}", w[0], w[1]);
        }
        let first_figure = r.dom.find("<figure").unwrap();
        assert!(
            first_figure < at("timeline-tps"),
            "{command}: a chart before its own"
        );
        assert_readable(&chrome, &page);
    }
    // a merged run of two processes on one database file
    let target = format!("sqlite:{}", tmp.path().join("shared.sqlite").display());
    let parts = common::scale::run_parts(
        tmp.path(),
        &target,
        2,
        &[
            "--steps",
            "l.i0,l.x,qr50",
            "--rows",
            "2000",
            "--query-seconds",
            "1",
            "--interval",
            "0.5",
        ],
    );
    common::scale::merge_and_check(tmp.path(), &parts);
    let merged = tmp.path().join("merged").join("report.html");
    let r = render(&chrome, &merged, None);
    assert!(r.console.is_empty(), "merged: console: {:?}", r.console);
    assert_drawn(&r.dom, "timeline-rates", 2, 3);
    assert_readable(&chrome, &merged);
}

/// issue 30: `ddl` with two methods (PostgreSQL's `CREATE INDEX`-free rebuild: the engine's
/// own statement against `VACUUM FULL`, on a throwaway server) and `ab` (two sides of a small
/// SQLite run): their reports open in Chromium at 1400 px, readable (nothing wider than the
/// page, no chart text over another, no number of more than 4 significant digits in a table,
/// no empty chart), with the charts of each point and each side, and their last line says
/// where the report is.
#[test]
fn ddl_methods_and_ab_reports_render() {
    let name = "ddl_methods_and_ab_reports_render";
    let Some(chrome) = chromium() else {
        return skip(name, "chromium is not installed").unwrap_or_default();
    };
    let tmp = tempfile::tempdir().unwrap();
    let last_line = |o: &std::process::Output| {
        let (out, _) = text(o);
        out.lines().last().unwrap_or("").to_string()
    };

    // ab: two sides, one run each (no verdict: this test is about the page)
    let ab = tmp.path().join("ab");
    let o = ixbench(&[
        "ab",
        "--out",
        ab.to_str().unwrap(),
        "--side",
        "off: --sqlite-pragma synchronous=OFF",
        "--side",
        "normal: --sqlite-pragma synchronous=NORMAL",
        "--pass-on",
        "no-verdict",
        "--",
        "run",
        "--size",
        "smoke",
        "--steps",
        "l.i0,l.x,qr100",
        "--query-seconds",
        "1",
        "--interval",
        "0.2",
    ]);
    // synchronous=NORMAL fsyncs where OFF does not: ab may find it slower (exit 3); the page is
    // what this test looks at, not the verdict.
    assert!(matches!(o.status.code(), Some(0 | 3)), "ab: {:?}", text(&o));
    let page = ab.join("report.html");
    assert!(
        last_line(&o).contains(&format!("report: {}", page.display())),
        "ab: {}",
        last_line(&o)
    );
    let r = render(&chrome, &page, Some(&artefacts().join("report-ab.png")));
    assert!(r.console.is_empty(), "ab: console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    assert_drawn(&r.dom, "compare-normal", 1, 3);
    assert!(figure(&r.dom, "compare-normal").contains("log scale"));
    assert_readable(&chrome, &page);

    // ddl with two methods on PostgreSQL
    let Some(s) = start_server(name, ServerKind::Postgres, false) else {
        return;
    };
    let out = tmp.path().join("ddl");
    let url = s.url();
    let o = ixbench(&[
        "ddl",
        "--target",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--table-size",
        "3000",
        "--threads",
        "2",
        "--rate",
        "100",
        "--baseline-seconds",
        "2",
        "--recovery-seconds",
        "2",
        "--quiet-timeout",
        "10",
        "--ddl",
        "rebuild",
        "--method",
        "native,vacuum-full",
        "--pass-on",
        "no-verdict",
    ]);
    assert!(o.status.success(), "ddl: {:?}", text(&o));
    let page = out.join("report.html");
    assert!(
        last_line(&o).contains(&format!("report: {}", page.display())),
        "ddl: {}",
        last_line(&o)
    );
    let r = render(
        &chrome,
        &page,
        Some(&artefacts().join("report-ddl-methods.png")),
    );
    assert!(r.console.is_empty(), "ddl: console: {:?}", r.console);
    assert_unique_ids(&r.dom);
    let points = run_json(&out)["ddl"]["points"].as_array().unwrap().len();
    assert_eq!(points, 2);
    for n in 1..=points {
        assert_drawn(&r.dom, &format!("ddl-{n}-tps"), 2 + 2, 2);
        assert_drawn(&r.dom, &format!("ddl-{n}-latency"), 3 + 2, 2);
    }
    // the methods side by side, in the answer and in their table
    let t = page_text(&r.dom);
    assert!(t.contains("vacuum-full"), "no vacuum-full in the page");
    assert_readable(&chrome, &page);
}
