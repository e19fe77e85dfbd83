//! Charts for the HTML report, drawn with `plotters`' SVG backend into inline `<svg>` text.
//!
//! Each function returns one `<figure id="...">` holding a title and the SVG, or an empty
//! string when there is nothing to draw, so a report never shows an empty frame. They know no
//! result kind: the report (and any new result kind, e.g. an online-DDL timeline) builds
//! [`Series`], [`Span`]s and [`Bar`]s from its own model and calls them.

use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Line colours, in order of series (colour-blind safe: Okabe-Ito).
const COLORS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Font size as plotters takes it: its SVG backend writes `size / 1.24 / 1.24` px, so this is
/// 13 px text.
const FONT: f64 = 20.0;

/// The colour of series number `i`.
pub fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Which of one step's intervals (their lengths, in order) are drawn as rate points: all but
/// the short ones ([`crate::measure::interval::is_short`]: a step's last interval, cut where
/// the step ended) against the step's interval, the median of the lengths (the upper one: of
/// a full interval and a short one, the full). A rate point of a few operations over a few
/// milliseconds would draw a drop to near zero (or a spike) that the run never had.
pub fn rate_points(lengths: &[f64]) -> Vec<bool> {
    let mut sorted: Vec<f64> = lengths.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let Some(&interval) = sorted.get(sorted.len() / 2) else {
        return vec![true; lengths.len()];
    };
    lengths
        .iter()
        .map(|&l| !crate::measure::interval::is_short(l, interval))
        .collect()
}

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points in x order; points with a non-finite value (or, on a log axis, a value
    /// not above 0) are left out and break the line there.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (and dashed in the legend): a series that may run on top of another
    /// (max over p99, deleted rows over inserted rows) and must not hide it.
    pub dashed: bool,
}

/// A marked stretch of the x axis: a step of a run, a phase of a DDL. `start == end` draws a
/// single mark (a vertical line), e.g. the moment a DDL was issued.
#[derive(Debug, Clone, Default)]
pub struct Span {
    /// Label drawn at the top of the span (or beside the mark).
    pub label: String,
    /// Start, in x units.
    pub start: f64,
    /// End, in x units.
    pub end: f64,
}

/// A timeline: lines over x (seconds), with marked spans behind them.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Element id of the `<figure>` (unique in the page).
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// X axis label (e.g. `seconds since the run began`).
    pub x_label: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// Logarithmic y axis (for latencies spanning decades).
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Spans shaded alternately, each labelled, with a line at each boundary.
    pub spans: Vec<Span>,
    /// Width and height in pixels.
    pub size: (u32, u32),
}

/// One bar of a bar chart: a value with an optional spread (min..max of repeats).
#[derive(Debug, Clone, Default)]
pub struct Bar {
    /// Label on the category axis.
    pub label: String,
    /// Length of the bar (e.g. the median of repeats).
    pub value: f64,
    /// Spread drawn as an error bar: (min, max).
    pub range: Option<(f64, f64)>,
    /// Fill colour index (see [`color`]), e.g. to tell better from worse.
    pub color: usize,
}

/// Horizontal bars, one per category, with optional spreads and a reference band.
#[derive(Debug, Clone, Default)]
pub struct Bars {
    /// Element id of the `<figure>`.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// Value axis label, with its unit.
    pub x_label: String,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
    /// Bars start here (0 for durations, 1 for ratios to a base).
    pub origin: f64,
    /// A shaded band across all bars, e.g. the noise band around a ratio of 1: (from, to).
    pub band: Option<(f64, f64)>,
    /// Width in pixels (the height follows from the number of bars).
    pub width: u32,
    /// Logarithmic value axis (ratios to a base: 0.5 and 2 equally far from 1).
    pub log: bool,
}

/// A percentile curve chart: latency (log) over percentile, the x axis spread as in
/// HdrHistogram's plots (50%, 90%, 99%, 99.9%... equally spaced).
#[derive(Debug, Clone, Default)]
pub struct PercentileChart {
    /// Element id of the `<figure>`.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// One curve per operation: points (percentile as a fraction 0..1, latency in ms).
    pub series: Vec<Series>,
    /// Width and height in pixels.
    pub size: (u32, u32),
}

use crate::format::html as esc;

fn figure(id: &str, title: &str, class: &str, svg: &str) -> String {
    figure_with(id, title, class, "", svg)
}

/// A `<figure>` with a caption (title, then the legend) and the SVG. The legend is HTML in
/// the caption so it never hides a line or a span label.
fn figure_with(id: &str, title: &str, class: &str, legend: &str, svg: &str) -> String {
    format!(
        "<figure id=\"{}\" class=\"chart {class}\"><figcaption>{}{legend}</figcaption>\n{svg}</figure>\n",
        esc(id),
        esc(title)
    )
}

/// The legend of the drawn series: a coloured rule and the name of each.
fn legend(series: &[Series], runs: &[Drawn]) -> String {
    let mut out = String::from(" <span class=\"legend\">");
    for (i, _) in runs {
        let c = color(*i);
        out.push_str(&format!(
            "<span style=\"color:#{:02x}{:02x}{:02x}\">{}</span> {} ",
            c.0,
            c.1,
            c.2,
            if series[*i].dashed {
                "&#9476;"
            } else {
                "&#9644;"
            },
            esc(&series[*i].name)
        ));
    }
    out.push_str("</span>");
    out
}

/// Render with `draw` into an SVG string of `size`; a drawing error becomes a short note in
/// the page rather than a failed report.
fn svg<F>(size: (u32, u32), draw: F) -> Result<String, String>
where
    F: FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Box<dyn std::error::Error>>,
{
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Dash the lines of the dashed series in `svg`: their polylines are the ones stroked in the
/// series' colour (each series of a chart has its own).
fn dash(svg: String, series: &[Series], runs: &[Drawn]) -> String {
    let mut svg = svg;
    for (i, _) in runs.iter().filter(|(i, _)| series[*i].dashed) {
        let c = color(*i);
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        let mut out = String::with_capacity(svg.len() + 256);
        let mut rest = svg.as_str();
        while let Some(at) = rest.find("<polyline") {
            let end = rest[at..].find("/>").map_or(rest.len(), |e| at + e);
            let element = &rest[at..end];
            out.push_str(&rest[..at]);
            if element.contains(&stroke) {
                out.push_str(&element.replacen(
                    "<polyline",
                    "<polyline stroke-dasharray=\"4,6\"",
                    1,
                ));
            } else {
                out.push_str(element);
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        svg = out;
    }
    svg
}

fn failed(id: &str, title: &str, e: &str) -> String {
    figure(
        id,
        title,
        "failed",
        &format!("<p class=\"bad\">chart not drawn: {}</p>", esc(e)),
    )
}

/// A series' number and its runs of drawable points.
type Drawn = (usize, Vec<Vec<(f64, f64)>>);

/// Points of `s` that can be drawn (finite; above 0 on a log axis), split into runs at the
/// left-out points.
fn drawable(s: &Series, log_y: bool) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for &(x, y) in &s.points {
        if x.is_finite() && y.is_finite() && (!log_y || y > 0.0) {
            out.last_mut().expect("never empty").push((x, y));
        } else if !out.last().expect("never empty").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// Round `v` up to 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten (steps of at
/// most 25%: a rate of 105/s gets an axis to 120, not 200, so a dip stays visible).
fn nice_ceil(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || v.is_infinite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * p >= v * (1.0 - 1e-9) {
            return m * p;
        }
    }
    10.0 * p
}

/// A y label: short (`1.5k`, `2M`, `0.25`).
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        // 1.25 is `1.25`, not `1.2` (a log axis's ticks at round ratios)
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The timeline chart with marked spans: lines over seconds, the spans (steps of a run, the
/// phases of a DDL) shaded and labelled behind them, a mark line at each span boundary.
/// Returns `""` when no series has a drawable point.
pub fn timeline(t: &Timeline) -> String {
    let runs: Vec<Drawn> = t
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (i, drawable(s, t.log_y)))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let pts = || runs.iter().flat_map(|(_, r)| r.iter().flatten());
    let x_max = pts()
        .map(|p| p.0)
        .chain(t.spans.iter().map(|s| s.end))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let x_min = pts()
        .map(|p| p.0)
        .chain(t.spans.iter().map(|s| s.start))
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let y_max = pts().map(|p| p.1).fold(0.0f64, f64::max);
    // pixels per x unit (the plot is the width less the y label area and margins)
    let px_per_x = (t.size.0 as f64 - 104.0).max(1.0) / (x_max - x_min);
    let result = svg(t.size, |root| {
        if t.log_y {
            let y_min = pts().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let lo = 10f64.powf(y_min.log10().floor());
            let hi = 10f64.powf(y_max.log10().ceil()).max(lo * 10.0);
            let mut chart = ChartBuilder::on(root)
                .margin(10)
                .margin_right(20)
                .x_label_area_size(50)
                .y_label_area_size(74)
                .build_cartesian_2d(
                    x_min..x_max,
                    (lo..hi).log_scale().with_key_points(decade_ticks(lo, hi)),
                )?;
            chart
                .configure_mesh()
                .x_desc(t.x_label.as_str())
                .y_desc(t.y_label.as_str())
                .y_label_formatter(&|v| short(*v))
                .label_style(("sans-serif", FONT))
                .axis_desc_style(("sans-serif", FONT))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            spans_on(&mut chart, &t.spans, lo, hi, px_per_x)?;
            lines_on(&mut chart, &runs)?;
        } else {
            let hi = nice_ceil(y_max * 1.05);
            let mut chart = ChartBuilder::on(root)
                .margin(10)
                .margin_right(20)
                .x_label_area_size(50)
                .y_label_area_size(74)
                .build_cartesian_2d(x_min..x_max, 0.0..hi)?;
            chart
                .configure_mesh()
                .x_desc(t.x_label.as_str())
                .y_desc(t.y_label.as_str())
                .y_label_formatter(&|v| short(*v))
                .label_style(("sans-serif", FONT))
                .axis_desc_style(("sans-serif", FONT))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            spans_on(&mut chart, &t.spans, 0.0, hi, px_per_x)?;
            lines_on(&mut chart, &runs)?;
        }
        Ok(())
    });
    match result {
        Ok(s) => figure_with(
            &t.id,
            &t.title,
            "timeline",
            &legend(&t.series, &runs),
            &dash(s, &t.series, &runs),
        ),
        Err(e) => failed(&t.id, &t.title, &e),
    }
}

type Chart2<'a, 'b, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;

/// Shade `spans` alternately between `lo` and `hi`, label each at the top and draw its
/// boundaries; a span of zero length is a labelled mark line.
fn spans_on<Y>(
    chart: &mut Chart2<'_, '_, Y>,
    spans: &[Span],
    lo: f64,
    hi: f64,
    px_per_x: f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    Y: Ranged<ValueType = f64>,
{
    let mark = RGBColor(120, 120, 120);
    for (i, s) in spans.iter().enumerate() {
        if s.end > s.start && i % 2 == 0 {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(s.start, lo), (s.end, hi)],
                RGBColor(235, 240, 248).filled(),
            )))?;
        }
        let edges: &[f64] = if s.end > s.start {
            &[s.start, s.end]
        } else {
            &[s.start]
        };
        for &x in edges {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                mark.mix(0.6).stroke_width(1),
            )))?;
        }
    }
    // Labels that fit: spans wide enough for their label first, then the others where no
    // label is yet (about 8 px per character at 13 px).
    let width = |s: &Span| (s.label.chars().count() as f64 * 8.0 + 8.0) / px_per_x;
    let mut order: Vec<&Span> = spans.iter().filter(|s| !s.label.is_empty()).collect();
    // a mark (zero length: the moment a DDL ended) is labelled like a span that fits
    order.sort_by_key(|s| s.end > s.start && s.end - s.start < width(s));
    let mut taken: Vec<(f64, f64)> = Vec::new();
    for s in order {
        // A span narrower than its label gets the label cut to fit inside it (`waiting f…`),
        // or none when not 3 characters fit: a label never runs into the next span.
        let label = if s.end > s.start && s.end - s.start < width(s) {
            let fit = (((s.end - s.start) * px_per_x - 8.0) / 8.0).floor();
            if fit < 4.0 {
                continue;
            }
            let keep: String = s.label.chars().take(fit as usize - 1).collect();
            format!("{}\u{2026}", keep.trim_end())
        } else {
            s.label.clone()
        };
        let w = (label.chars().count() as f64 * 8.0 + 8.0) / px_per_x;
        let (a, b) = (s.start, s.start + w);
        if taken.iter().any(|&(x, y)| a < y && x < b) {
            continue;
        }
        taken.push((a, b));
        chart.draw_series(std::iter::once(
            EmptyElement::at((s.start, hi))
                + Text::new(label, (4, 3), ("sans-serif", FONT).into_font().color(&mark)),
        ))?;
    }
    Ok(())
}

/// The stroke width of the `k`th of `n` series: 2 px for the last, 2 px more for each before it.
pub fn line_width(k: usize, n: usize) -> u32 {
    2 + 2 * n.saturating_sub(k + 1).min(3) as u32
}

/// About how many pixels `s` takes at the chart font (plotters writes it at 16 px in the SVG:
/// about 9 px a character, rounded up so room sized from it never clips).
fn text_px(s: &str) -> u32 {
    s.chars().count() as u32 * 9
}

/// The width of a bar's label of `chars` characters: about 10.5 px per character of FONT
/// (20 px) text in the SVG's own units.
fn label_px(chars: usize) -> u32 {
    chars as u32 * 21 / 2
}

/// `s` whole when it has at most `max` characters, else its first `max - 1` and an ellipsis.
fn cut_to(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Draw each series' runs of points (the legend is in the caption: see [`legend`]).
fn lines_on<Y>(
    chart: &mut Chart2<'_, '_, Y>,
    runs: &[Drawn],
) -> Result<(), Box<dyn std::error::Error>>
where
    Y: Ranged<ValueType = f64>,
{
    let few = runs
        .iter()
        .map(|(_, r)| r.iter().map(Vec::len).sum::<usize>())
        .sum::<usize>()
        <= 60;
    for (k, (i, parts)) in runs.iter().enumerate() {
        let c = color(*i);
        // Each series is drawn thinner than the one before it, so where two are equal (inserts
        // and deletes of a steady churn) the later one runs inside the earlier, both visible.
        let width = line_width(k, runs.len());
        for part in parts {
            // few points: mark each (a single one draws no line)
            let size = if few { width + 1 } else { 0 };
            chart.draw_series(
                LineSeries::new(part.iter().copied(), c.stroke_width(width)).point_size(size),
            )?;
        }
    }
    Ok(())
}

/// Horizontal bars with their spreads (error bars from min to max) and an optional shaded
/// band. Returns `""` when there is no bar.
pub fn bars(b: &Bars) -> String {
    let bars: Vec<&Bar> = b.bars.iter().filter(|x| x.value.is_finite()).collect();
    if bars.is_empty() {
        return String::new();
    }
    let n = bars.len() as u32;
    // the segmented axis has a segment more than there are bars (its last is unlabelled): 26 px
    // for each, so two labels of FONT px never share a line (two bars in 122 px put their
    // labels 17 px apart, and 20 px text overlapped)
    let height = 70 + 26 * (n + 1).max(3);
    let longest = bars
        .iter()
        .map(|x| x.label.chars().count())
        .max()
        .unwrap_or(4);
    // the plot (width less label area and margins) must hold the x label whole: it is centred
    // under the plot, and a wider label is clipped at the SVG's edge
    let max_area = (b.width * 2 / 3).min(b.width.saturating_sub(34 + text_px(&b.x_label) + 16));
    let label_area = (label_px(longest) + 24).clamp(60, max_area.max(60));
    // a label longer than its area is cut (with an ellipsis) rather than drawn off the SVG
    let fits = if label_area >= label_px(longest) + 24 {
        longest
    } else {
        ((label_area.saturating_sub(24)) * 2 / 21).max(4) as usize
    };
    let mut lo = b.origin;
    let mut hi = b.origin;
    for x in &bars {
        for v in [Some(x.value), x.range.map(|r| r.0), x.range.map(|r| r.1)]
            .into_iter()
            .flatten()
        {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if let Some((f, t)) = b.band {
        lo = lo.min(f);
        hi = hi.max(t);
    }
    let (lo, hi) = if b.log {
        // ratios: as far below the origin as above it, with room for the whiskers
        let lo = lo.max(1e-9);
        let span = (hi / b.origin).max(b.origin / lo).max(2.0) * 1.05;
        (b.origin / span, b.origin * span)
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-9);
        (if lo < b.origin { lo - pad } else { lo }, hi + pad)
    };
    let labels: Vec<String> = bars.iter().map(|x| x.label.clone()).collect();
    // ticks about 90 px apart on the plot (its width less the label area and margins), so
    // their labels never run together
    let ticks = ((b.width.saturating_sub(label_area + 34)) / 90).clamp(2, 12) as usize;
    let result = svg((b.width, height), |root| {
        let builder = || {
            let mut c = ChartBuilder::on(root);
            c.margin(10)
                .margin_right(24)
                .x_label_area_size(50)
                .y_label_area_size(label_area);
            c
        };
        let fmt = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => labels
                .get((n as i32 - 1 - *i) as usize)
                .map(|l| cut_to(l, fits))
                .unwrap_or_default(),
            SegmentValue::Last => String::new(),
        };
        if b.log {
            let mut chart = builder().build_cartesian_2d(
                (lo..hi)
                    .log_scale()
                    .with_key_points(log_ticks(lo, hi, ticks)),
                (0..n as i32).into_segmented(),
            )?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_desc(b.x_label.as_str())
                .x_labels(ticks)
                .x_label_formatter(&|v| short(*v))
                .y_labels(n as usize)
                .y_label_formatter(&fmt)
                .label_style(("sans-serif", FONT))
                .axis_desc_style(("sans-serif", FONT))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            bars_on(&mut chart, b, &bars)
        } else {
            let mut chart = builder().build_cartesian_2d(lo..hi, (0..n as i32).into_segmented())?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_desc(b.x_label.as_str())
                .x_labels(ticks)
                .x_label_formatter(&|v| short(*v))
                .y_labels(n as usize)
                .y_label_formatter(&fmt)
                .label_style(("sans-serif", FONT))
                .axis_desc_style(("sans-serif", FONT))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            bars_on(&mut chart, b, &bars)
        }
    });
    match result {
        Ok(s) => figure(&b.id, &b.title, "bars", &s),
        Err(e) => failed(&b.id, &b.title, &e),
    }
}

/// Ticks of a log axis of values spanning decades (`lo` and `hi` powers of ten): each power
/// of ten, and 2 and 5 times it when there are fewer than 3 decades (plotters' own minor
/// ticks, 200k 300k ... 900k, run into each other at the top of a decade).
fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut e = lo.log10().floor() as i32;
    let top = hi.log10().ceil() as i32;
    let few = top - e < 3;
    let mut out = Vec::new();
    while e <= top {
        let p = 10f64.powi(e);
        let ms: &[f64] = if few { &[1.0, 2.0, 5.0] } else { &[1.0] };
        out.extend(
            ms.iter()
                .map(|m| m * p)
                .filter(|&v| v >= lo * 0.999 && v <= hi * 1.001),
        );
        e += 1;
    }
    out
}

/// Ticks of a log axis from `lo` to `hi`: round ratios (0.5, 0.8, 1, 1.25, 2, 5, 10...),
/// at most `most` of them, 1 always among them when in range.
fn log_ticks(lo: f64, hi: f64, most: usize) -> Vec<f64> {
    let mut all = Vec::new();
    for e in -6..=6 {
        let p = 10f64.powi(e);
        for m in [1.0, 1.25, 1.5, 2.0, 2.5, 5.0, 8.0] {
            let v = m * p;
            if v >= lo && v <= hi {
                all.push(v);
            }
        }
    }
    // fewer: every k-th, counted from 1 both ways so 1 stays
    let mut k = 1;
    while all.len().div_ceil(k) > most.max(2) {
        k += 1;
    }
    let one = all
        .iter()
        .position(|&v| (v - 1.0).abs() < 1e-12)
        .unwrap_or(0);
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| i.abs_diff(one) % k == 0)
        .map(|(_, v)| v)
        .collect()
}

/// The bars, their whiskers and the origin line on a chart of either value axis.
fn bars_on<X>(
    chart: &mut ChartContext<
        '_,
        SVGBackend<'_>,
        Cartesian2d<
            X,
            plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
        >,
    >,
    b: &Bars,
    bars: &[&Bar],
) -> Result<(), Box<dyn std::error::Error>>
where
    X: Ranged<ValueType = f64>,
{
    let n = bars.len() as i32;
    if let Some((f, t)) = b.band {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(f, SegmentValue::Exact(0)), (t, SegmentValue::Last)],
            RGBColor(200, 200, 200).mix(0.45).filled(),
        )))?;
    }
    for (i, x) in bars.iter().enumerate() {
        // the first bar on top
        let i = n - 1 - i as i32;
        let mut r = Rectangle::new(
            [
                (b.origin, SegmentValue::Exact(i)),
                (x.value, SegmentValue::Exact(i + 1)),
            ],
            color(x.color).mix(0.8).filled(),
        );
        r.set_margin(4, 4, 0, 0);
        chart.draw_series(std::iter::once(r))?;
        if b.log {
            // a ratio of exactly 1 has no bar: a dot says where it is
            chart.draw_series(std::iter::once(Circle::new(
                (x.value, SegmentValue::CenterOf(i)),
                3,
                color(x.color).filled(),
            )))?;
        }
        if let Some((mn, mx)) = x.range {
            chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
                SegmentValue::CenterOf(i),
                mn,
                x.value,
                mx,
                BLACK.stroke_width(1),
                10,
            )))?;
        }
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![
            (b.origin, SegmentValue::Exact(0)),
            (b.origin, SegmentValue::Last),
        ],
        BLACK.stroke_width(1),
    )))?;
    Ok(())
}

/// The x position of percentile `q` (0..1): `log10(1 / (1 - q))`, so 90% is 1, 99% is 2.
pub fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-9).log10()
}

/// Latency percentile curves (ms, log scale) over percentiles spread as nines. Returns `""`
/// when no series has a point.
pub fn percentiles(p: &PercentileChart) -> String {
    let series: Vec<Series> = p
        .series
        .iter()
        .map(|s| Series {
            dashed: s.dashed,
            name: s.name.clone(),
            points: s.points.iter().map(|&(q, v)| (nines(q), v)).collect(),
        })
        .collect();
    let runs: Vec<Drawn> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (i, drawable(s, true)))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let pts = || runs.iter().flat_map(|(_, r)| r.iter().flatten());
    let x_max = pts().map(|p| p.0).fold(1.0f64, f64::max).ceil();
    let y_min = pts().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y_max = pts().map(|p| p.1).fold(0.0f64, f64::max);
    let lo = 10f64.powf(y_min.log10().floor());
    let hi = 10f64.powf(y_max.log10().ceil()).max(lo * 10.0);
    // the last x label (`99.99999%`) is centred on the plot's right edge: room for its half
    let last = format!(
        "{:.*}%",
        (x_max as usize).saturating_sub(2),
        100.0 * (1.0 - 10f64.powf(-x_max))
    );
    let right = (text_px(&last) / 2 + 12).max(36);
    let result = svg(p.size, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .margin_right(right)
            .x_label_area_size(50)
            .y_label_area_size(64)
            .build_cartesian_2d(
                0.0..x_max,
                (lo..hi).log_scale().with_key_points(decade_ticks(lo, hi)),
            )?;
        let pct = |x: &f64| {
            // k nines: 90%, 99%, 99.9%...
            let k = x.round().max(0.0) as usize;
            let q = 100.0 * (1.0 - 10f64.powf(-(k as f64)));
            format!("{q:.*}%", k.saturating_sub(2))
        };
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("response time (ms)")
            .x_labels(x_max as usize + 1)
            .x_label_formatter(&pct)
            .y_label_formatter(&|v| short(*v))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        lines_on(&mut chart, &runs)?;
        Ok(())
    });
    match result {
        Ok(s) => figure_with(
            &p.id,
            &p.title,
            "percentiles",
            &legend(&series, &runs),
            &dash(s, &series, &runs),
        ),
        Err(e) => failed(&p.id, &p.title, &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(h: &str, what: &str) -> usize {
        h.matches(what).count()
    }

    /// The SVG backend writes each text on its own line between the tags.
    fn text(h: &str, t: &str) -> bool {
        h.contains(&format!(">\n{t}\n</text>"))
    }

    #[test]
    fn timeline_draws_lines_spans_and_legend() {
        let t = Timeline {
            id: "t1".into(),
            title: "rates".into(),
            x_label: "seconds".into(),
            y_label: "rows/s".into(),
            log_y: false,
            series: vec![
                Series {
                    dashed: false,
                    name: "ips".into(),
                    points: (0..20).map(|i| (i as f64, 100.0 + i as f64)).collect(),
                },
                Series {
                    dashed: false,
                    name: "empty".into(),
                    points: vec![(1.0, f64::NAN)],
                },
            ],
            spans: vec![
                Span {
                    label: "l.i0".into(),
                    start: 0.0,
                    end: 10.0,
                },
                Span {
                    label: "ddl".into(),
                    start: 12.0,
                    end: 12.0,
                },
            ],
            size: (600, 300),
        };
        let h = timeline(&t);
        assert!(h.starts_with("<figure id=\"t1\""), "{h}");
        assert!(h.contains("<svg"), "{h}");
        assert!(text(&h, "l.i0") && text(&h, "ddl"), "{h}");
        // the legend, in the caption
        assert!(h.contains("</span> ips "), "{h}");
        assert!(count(&h, "<polyline") >= 2, "{h}");
        // a series with no point draws nothing, and a chart with none is left out
        assert!(!h.contains("empty"));
        let none = Timeline {
            series: vec![Series::default()],
            ..t
        };
        assert_eq!(timeline(&none), "");
    }

    #[test]
    fn log_timeline_skips_zeros() {
        let t = Timeline {
            id: "lat".into(),
            log_y: true,
            series: vec![Series {
                dashed: false,
                name: "max".into(),
                points: vec![(0.0, 1.0), (1.0, 0.0), (2.0, 50.0), (3.0, 20.0)],
            }],
            size: (600, 300),
            ..Default::default()
        };
        let h = timeline(&t);
        // the 0 breaks the line: one single-point run, one two-point run
        assert!(h.contains("<svg"), "{h}");
        assert!(!h.contains("not drawn"), "{h}");
    }

    #[test]
    fn bars_with_spread_and_band() {
        let b = Bars {
            log: false,
            id: "b".into(),
            title: "builds".into(),
            x_label: "seconds".into(),
            bars: vec![
                Bar {
                    label: "a=1".into(),
                    value: 2.0,
                    range: Some((1.5, 2.5)),
                    color: 0,
                },
                Bar {
                    label: "a=2".into(),
                    value: 3.0,
                    range: None,
                    color: 1,
                },
            ],
            origin: 0.0,
            band: Some((0.0, 0.5)),
            width: 700,
        };
        let h = bars(&b);
        assert!(text(&h, "a=1") && text(&h, "a=2"), "{h}");
        assert!(count(&h, "<rect") >= 3, "{h}");
        assert_eq!(
            bars(&Bars {
                log: false,
                bars: vec![],
                ..b
            }),
            ""
        );
    }

    #[test]
    fn percentile_axis() {
        assert!((nines(0.9) - 1.0).abs() < 1e-9);
        assert!((nines(0.999) - 3.0).abs() < 1e-9);
        let p = PercentileChart {
            id: "p".into(),
            title: "l.i1".into(),
            series: vec![Series {
                dashed: false,
                name: "insert".into(),
                points: vec![(0.5, 1.0), (0.9, 2.0), (0.99, 8.0), (0.999, 30.0)],
            }],
            size: (600, 300),
        };
        let h = percentiles(&p);
        assert!(text(&h, "99.9%") && text(&h, "90%"), "{h}");
        assert!(count(&h, "<polyline") >= 1);
    }

    #[test]
    fn log_axis_ticks() {
        assert_eq!(
            decade_ticks(10.0, 1e6),
            vec![10.0, 100.0, 1000.0, 1e4, 1e5, 1e6]
        );
        assert_eq!(
            decade_ticks(1.0, 100.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(
            log_ticks(0.47, 2.1, 10),
            vec![0.5, 0.8, 1.0, 1.25, 1.5, 2.0]
        );
        let t = log_ticks(0.01, 100.0, 6);
        assert!(t.len() <= 6 && t.contains(&1.0), "{t:?}");
    }

    #[test]
    fn a_short_last_interval_is_no_rate_point() {
        // a step of 1 s intervals cut 6 ms into its fourth
        assert_eq!(
            rate_points(&[1.0, 1.0, 1.0, 0.006]),
            [true, true, true, false]
        );
        // a full and a short one: the step's interval is the full one's
        assert_eq!(rate_points(&[1.0, 0.3]), [true, false]);
        // half an interval and more is a rate point; so is a step of one interval, however long
        assert_eq!(rate_points(&[0.2, 0.2, 0.1]), [true, true, true]);
        assert_eq!(rate_points(&[0.004]), [true]);
        assert!(rate_points(&[]).is_empty());
    }

    #[test]
    fn short_labels() {
        assert_eq!(short(1500.0), "1500");
        assert_eq!(short(25000.0), "25k");
        assert_eq!(short(2_000_000.0), "2M");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(1.25), "1.25");
        assert_eq!(short(1.5), "1.5");
        assert_eq!(nice_ceil(730.0), 800.0);
        assert_eq!(nice_ceil(180.0), 200.0);
        assert_eq!(nice_ceil(105.0), 120.0);
        assert_eq!(nice_ceil(810.0), 1000.0);
    }
}
