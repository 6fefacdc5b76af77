//! PNG (and SVG) charts: line panels (values over time or over iterations, with optional bands) and bar
//! charts with error bars (mean ± 95% CI). Experiment panels put two views of a playtest
//! experiment side by side: each condition's final best scores (replicates, mean, ± sd) and its
//! best-so-far curve over rollouts, on a shared y range. A heatmap shows a quality-diversity
//! archive: its cells over one or two descriptors, coloured by their elites' quality. Plotters
//! draws into a temporary `.tmp.png` beside the target, which is then renamed over it (an atomic
//! write); the same drawing goes to an SVG beside it (`chart.svg` by `chart.png`), which the run's
//! `report.html` embeds.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

/// Registers the embedded Noto Sans as "sans-serif" (plotters' default family) once per process.
fn init_fonts() {
    FONT.call_once(|| {
        // InvalidFont is neither Debug nor Error; the embedded font is known to be valid.
        if register_font("sans-serif", FontStyle::Normal, ttf_noto_sans::REGULAR).is_err() {
            panic!("the embedded Noto Sans font was rejected by plotters");
        }
    });
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One line of a panel, with an optional band (low, high) around it.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub band: Option<Vec<(f64, f64, f64)>>,
    /// Draw the points as markers only (events such as penalties), not as a line.
    pub markers: bool,
}

impl Series {
    /// A line through `points`.
    pub fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, band: None, markers: false }
    }
}

/// The width of the legend strip beside a panel's plot (legends never cover the data).
const LEGEND_WIDTH: u32 = 210;

/// Draws a legend (a colour key per name) into `area`, outside any plot.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, entries: &[(String, RGBColor, bool)]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let font = ("sans-serif", 12).into_font().color(&BLACK);
    for (k, (name, c, marker)) in entries.iter().enumerate() {
        let y = 40 + 18 * k as i32;
        if *marker {
            area.draw(&Circle::new((14, y), 4, c.filled()))?;
        } else {
            area.draw(&PathElement::new(vec![(4, y), (24, y)], c.stroke_width(2)))?;
        }
        area.draw(&Text::new(name.clone(), (30, y - 7), font.clone()))?;
    }
    Ok(())
}

/// A tick label: whole numbers without a fraction (4000, not 4000.0), others with at most four
/// decimals and no trailing zeros (0.3, not 0.30000000000000004).
fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        return format!("{:.0}", v.round() + 0.0);
    }
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Whether every x of the panel is a whole number (generations, iterations): its axis then
/// shows whole-number ticks only.
fn integer_x(panel: &Panel) -> bool {
    panel.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).all(|x| x.fract() == 0.0)
}

/// One panel: a title, axis labels and its series.
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

fn bounds(panel: &Panel) -> (f64, f64, f64, f64) {
    let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
    let mut ys = (f64::INFINITY, f64::NEG_INFINITY);
    for s in &panel.series {
        for &(x, y) in &s.points {
            xs = (xs.0.min(x), xs.1.max(x));
            ys = (ys.0.min(y), ys.1.max(y));
        }
        for &(x, lo, hi) in s.band.iter().flatten() {
            xs = (xs.0.min(x), xs.1.max(x));
            ys = (ys.0.min(lo), ys.1.max(hi));
        }
    }
    if !xs.0.is_finite() {
        xs = (0.0, 1.0);
        ys = (0.0, 1.0);
    }
    if xs.1 <= xs.0 {
        // One x (a run of one generation): centred.
        xs = (xs.0 - 0.5, xs.0 + 0.5);
    }
    if ys.1 <= ys.0 {
        ys.1 = ys.0 + 1.0;
    }
    let pad = (ys.1 - ys.0) * 0.05;
    (xs.0, xs.1, ys.0 - pad, ys.1 + pad)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws `$draw` (a block drawing on `root`) twice: onto a PNG written atomically at `$path`,
/// then onto an SVG written atomically beside it (`.svg`, for reports: text stays text). A failed
/// PNG leaves no temporary file behind.
macro_rules! png_and_svg {
    ($path:expr, $size:expr, |$root:ident| $draw:block) => {{
        let path: &Path = $path;
        let tmp = tmp_path(path)?;
        let png: DrawResult = (|| {
            let $root = BitMapBackend::new(&tmp, $size).into_drawing_area();
            $draw
            $root.present()?;
            Ok(())
        })();
        if let Err(e) = png {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, path)?;
        let mut svg = String::new();
        let drawn: DrawResult = (|| {
            let $root = SVGBackend::with_string(&mut svg, $size).into_drawing_area();
            $draw
            $root.present()?;
            Ok(())
        })();
        drawn?;
        super::write_atomic(&path.with_extension("svg"), svg.as_bytes())?;
        Ok(())
    }};
}

/// Stacks `panels` vertically in one PNG of width × (height per panel).
pub fn line_panels(path: &Path, title: &str, panels: &[Panel], width: u32, panel_height: u32) -> DrawResult {
    init_fonts();
    let height = panel_height * panels.len().max(1) as u32 + 40;
    png_and_svg!(path, (width, height), |root| {
        root.fill(&WHITE)?;
        let (top, rest) = root.split_vertically(40);
        top.titled(title, ("sans-serif", 22))?;
        let areas = rest.split_evenly((panels.len().max(1), 1));
        for (area, panel) in areas.iter().zip(panels) {
            let (x0, x1, y0, y1) = bounds(panel);
            let legend = panel.series.len() > 1 || panel.series.iter().any(|s| !s.name.is_empty());
            let (plot, key) = area.split_horizontally(if legend { width.saturating_sub(LEGEND_WIDTH) } else { width });
            let mut chart = ChartBuilder::on(&plot)
                .caption(&panel.title, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(60)
                .build_cartesian_2d(x0..x1, y0..y1)?;
            let whole = integer_x(panel);
            // Whole-number axes: a label at whole numbers only, printed without a fraction.
            let x_fmt = |x: &f64| if whole && x.fract().abs() >= 1e-9 { String::new() } else { tick(*x) };
            let span = (x1 - x0).ceil() as usize;
            chart
                .configure_mesh()
                .x_desc(panel.x_label.as_str())
                .y_desc(panel.y_label.as_str())
                .x_labels(if whole { (span + 1).clamp(2, 12) } else { 10 })
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&|y| tick(*y))
                .label_style(("sans-serif", 12))
                .draw()?;
            let mut entries = Vec::new();
            for (i, s) in panel.series.iter().enumerate() {
                let c = color(i);
                if let Some(band) = &s.band {
                    let mut poly: Vec<(f64, f64)> = band.iter().map(|&(x, _, hi)| (x, hi)).collect();
                    poly.extend(band.iter().rev().map(|&(x, lo, _)| (x, lo)));
                    chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled())))?;
                }
                // Markers where there is no line to see: marker series and single points.
                if s.markers || s.points.len() == 1 {
                    chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
                }
                if !s.markers {
                    chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))?;
                }
                entries.push((s.name.clone(), c, s.markers));
            }
            if legend {
                draw_legend(&key, &entries)?;
            }
        }
    })
}

/// One bar with an error bar (mean and the half-width of its interval).
pub struct Bar {
    pub label: String,
    pub mean: f64,
    pub half_width: f64,
}

/// The y range of a bar chart: always holding 0, so that a bar's height is its value (an axis
/// from 1 450 made a ratio of 0.70 look like 1/7), and the error bars, padded.
fn bar_y_range(bars: &[Bar]) -> (f64, f64) {
    let lo = bars.iter().map(|b| b.mean - b.half_width).filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
    let hi = bars.iter().map(|b| b.mean + b.half_width).filter(|x| x.is_finite()).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() { (lo.min(0.0), hi.max(0.0)) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.08).max(1e-9);
    (if lo < 0.0 { lo - pad } else { 0.0 }, hi + pad)
}

/// A bar chart of means with ± error bars.
pub fn bars(path: &Path, title: &str, y_label: &str, bars: &[Bar], width: u32, height: u32) -> DrawResult {
    init_fonts();
    png_and_svg!(path, (width, height), |root| {
        root.fill(&WHITE)?;
        let (y0, y1) = bar_y_range(bars);
        let n = bars.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(70)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, y0..y1)?;
        let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 0.01 { labels.get(i).cloned().unwrap_or_default() } else { String::new() }
            })
            .y_desc(y_label)
            .label_style(("sans-serif", 12))
            .draw()?;
        for (i, b) in bars.iter().enumerate() {
            let c = color(i);
            let x = i as f64;
            chart.draw_series(std::iter::once(Rectangle::new([(x + 0.15, y0), (x + 0.85, b.mean)], c.mix(0.75).filled())))?;
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x + 0.5,
                b.mean - b.half_width,
                b.mean,
                b.mean + b.half_width,
                BLACK.stroke_width(2),
                12,
            )))?;
        }
    })
}

/// One experimental condition of a playtest experiment.
pub struct Condition {
    pub name: String,
    /// Final best score of each replicate.
    pub finals: Vec<f64>,
    /// (rollout, mean best-so-far, low, high) — the band is mean ± one standard deviation, computed by the caller.
    pub curve: Vec<(f64, f64, f64, f64)>,
}

/// The y range shared by both experiment panels: finals, their mean ± sd, and the curves with
/// their bands, padded by 5%. Non-finite values are ignored.
fn experiment_y_range(conditions: &[Condition]) -> (f64, f64) {
    let mut ys = (f64::INFINITY, f64::NEG_INFINITY);
    let mut add = |y: f64| {
        if y.is_finite() {
            ys = (ys.0.min(y), ys.1.max(y));
        }
    };
    for c in conditions {
        c.finals.iter().for_each(|&y| add(y));
        if let Some((mean, sd)) = finals_summary(&c.finals) {
            add(mean - sd);
            add(mean + sd);
        }
        for &(_, mean, lo, hi) in &c.curve {
            add(mean);
            add(lo);
            add(hi);
        }
    }
    if !ys.0.is_finite() {
        ys = (0.0, 1.0);
    }
    if ys.1 <= ys.0 {
        ys = (ys.0 - 0.5, ys.1 + 0.5);
    }
    let pad = (ys.1 - ys.0) * 0.05;
    (ys.0 - pad, ys.1 + pad)
}

/// Mean and sample sd of the finite finals (sd 0 for one replicate), or None if there are none.
fn finals_summary(finals: &[f64]) -> Option<(f64, f64)> {
    let xs: Vec<f64> = finals.iter().copied().filter(|y| y.is_finite()).collect();
    if xs.is_empty() {
        return None;
    }
    let s = super::stats::summary(&xs);
    Some((s.mean, if s.sd.is_finite() { s.sd } else { 0.0 }))
}

/// A deterministic horizontal offset in [-0.5, 0.5) for replicate `j` (golden-ratio sequence:
/// consecutive replicates land far apart, and any prefix covers the interval evenly).
fn jitter(j: usize) -> f64 {
    (j as f64 * 0.618_033_988_749_895).fract() - 0.5
}

/// Two panels of a playtest experiment in one PNG of width × height, under a title strip:
/// (a) on the left (40% of the width), each condition's final best scores — every replicate as a
/// jittered dot, the mean as a thick bar, ± one sd as a whisker; (b) on the right, each
/// condition's mean best-so-far curve over rollouts with its band. Both panels share one y range.
/// Condition names label the categories of (a), rotated when they do not fit side by side, and
/// the legend of (b). Sizes below 240 × 180 are an error.
pub fn experiment_panels(path: &Path, title: &str, y_label: &str, conditions: &[Condition], width: u32, height: u32) -> DrawResult {
    if width < 240 || height < 180 {
        return Err(format!("experiment_panels: {width}x{height} is too small (at least 240x180)").into());
    }
    init_fonts();
    png_and_svg!(path, (width, height), |root| {
        draw_experiment(&root, title, y_label, conditions, width, height)?;
    })
}

fn draw_experiment<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    conditions: &[Condition],
    width: u32,
    height: u32,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(40);
    top.titled(title, ("sans-serif", 22))?;
    let (left, right) = rest.split_horizontally(width * 2 / 5);
    let (right, key) = right.split_horizontally((width - width * 2 / 5).saturating_sub(LEGEND_WIDTH));
    let (y0, y1) = experiment_y_range(conditions);

    // (a) Category labels: horizontal if every name fits its slot at 12 or 10 px, else rotated
    // (reading upwards) in a label area as tall as the longest name, up to 40% of the panel.
    let n = conditions.len().max(1);
    let slot = (width * 2 / 5).saturating_sub(8 * 2 + 60) as f64 / n as f64;
    let widest = |size: f64| -> Result<u32, Box<dyn std::error::Error>> {
        let style = TextStyle::from(("sans-serif", size).into_font());
        let mut w = 0;
        for c in conditions {
            w = w.max(root.estimate_text_size(&c.name, &style)?.0);
        }
        Ok(w)
    };
    let horizontal = [12.0, 10.0].into_iter().find_map(|size| match widest(size) {
        Ok(w) if (w as f64) <= slot * 0.92 => Some(Ok(size)),
        Ok(_) => None,
        Err(e) => Some(Err(e)),
    });
    let max_label_area = (height.saturating_sub(40) * 2 / 5).max(40);
    let (label_size, rotated, label_area) = match horizontal.transpose()? {
        Some(size) => (size, false, 40),
        None => (11.0, true, (widest(11.0)? + 30).clamp(40, max_label_area)),
    };
    let mut chart = ChartBuilder::on(&left)
        .caption("(a) final best score per condition", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(label_area)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, y0..y1)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(y_label)
        .label_style(("sans-serif", 12))
        .draw()?;
    for (i, c) in conditions.iter().enumerate() {
        let col = color(i);
        let x = i as f64;
        let dots = c.finals.iter().enumerate().filter(|(_, y)| y.is_finite());
        chart.draw_series(dots.map(|(j, &y)| Circle::new((x + 0.3 * jitter(j), y), 3, col.mix(0.55).filled())))?;
        if let Some((mean, sd)) = finals_summary(&c.finals) {
            if sd > 0.0 {
                let whisker = [
                    vec![(x, mean - sd), (x, mean + sd)],
                    vec![(x - 0.06, mean - sd), (x + 0.06, mean - sd)],
                    vec![(x - 0.06, mean + sd), (x + 0.06, mean + sd)],
                ];
                chart.draw_series(whisker.into_iter().map(|p| PathElement::new(p, col.stroke_width(2))))?;
            }
            chart.draw_series(std::iter::once(PathElement::new(vec![(x - 0.25, mean), (x + 0.25, mean)], col.stroke_width(5))))?;
        }
        // The label, in root pixel coordinates just below the plotting area.
        let (px, py) = chart.backend_coord(&(x, y0));
        let font = ("sans-serif", label_size).into_font().color(&BLACK);
        let label = if rotated {
            Text::new(c.name.clone(), (px, py + 8), font.transform(FontTransform::Rotate270).pos(Pos::new(HPos::Right, VPos::Center)))
        } else {
            Text::new(c.name.clone(), (px, py + 8), font.pos(Pos::new(HPos::Center, VPos::Top)))
        };
        root.draw(&label)?;
    }

    // (b) Mean best-so-far curves with their bands.
    let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, ..) in conditions.iter().flat_map(|c| &c.curve) {
        if x.is_finite() {
            xs = (xs.0.min(x), xs.1.max(x));
        }
    }
    if !xs.0.is_finite() {
        xs = (0.0, 1.0);
    }
    if xs.1 <= xs.0 {
        xs.1 = xs.0 + 1.0;
    }
    let mut chart = ChartBuilder::on(&right)
        .caption("(b) best score so far vs rollouts", ("sans-serif", 16))
        .margin(8)
        .margin_right(24) // room for the last x tick label
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(xs.0..xs.1, y0..y1)?;
    chart.configure_mesh().x_desc("rollouts").y_desc(y_label).label_style(("sans-serif", 12)).draw()?;
    for (i, c) in conditions.iter().enumerate() {
        let col = color(i);
        let pts: Vec<_> = c.curve.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        let band: Vec<_> = pts.iter().filter(|p| p.2.is_finite() && p.3.is_finite()).collect();
        if band.len() > 1 {
            let mut poly: Vec<(f64, f64)> = band.iter().map(|&&(x, _, _, hi)| (x, hi)).collect();
            poly.extend(band.iter().rev().map(|&&(x, _, lo, _)| (x, lo)));
            chart.draw_series(std::iter::once(Polygon::new(poly, col.mix(0.18).filled())))?;
        }
        if let [(x, y, ..)] = pts[..] {
            // One point draws no line: mark it.
            chart.draw_series(std::iter::once(Circle::new((x, y), 4, col.filled())))?;
        }
        chart.draw_series(LineSeries::new(pts.iter().map(|&(x, y, ..)| (x, y)), col.stroke_width(2)))?;
    }
    let entries: Vec<(String, RGBColor, bool)> = conditions.iter().enumerate().map(|(i, c)| (c.name.clone(), color(i), false)).collect();
    draw_legend(&key, &entries)?;
    Ok(())
}

fn tmp_path(path: &Path) -> Result<std::path::PathBuf, std::io::Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("chart");
    Ok(path.with_file_name(format!("{stem}.tmp.png")))
}

/// The colour of a quality in [0, 1] on a yellow–green–blue scale (dark is good).
pub fn quality_color(v: f64) -> RGBColor {
    const STOPS: [(f64, (f64, f64, f64)); 3] = [(0.0, (255.0, 255.0, 204.0)), (0.5, (65.0, 182.0, 196.0)), (1.0, (8.0, 29.0, 88.0))];
    let v = if v.is_finite() { v.clamp(0.0, 1.0) } else { 0.0 };
    let k = if v <= 0.5 { 0 } else { 1 };
    let (a, ca) = STOPS[k];
    let (b, cb) = STOPS[k + 1];
    let t = (v - a) / (b - a);
    let mix = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2))
}

/// A map of a quality-diversity archive: one or two descriptor axes (`dims`: min, max, bins;
/// `labels` their names), each filled cell (`cells`: its bins, its quality in [0, 1]) coloured
/// by quality, empty cells left white, and a colour key.
pub fn heatmap(path: &Path, title: &str, dims: &[(f64, f64, usize)], labels: &[String], cells: &[(Vec<usize>, f64)]) -> DrawResult {
    init_fonts();
    let (x0, x1, nx) = dims[0];
    let (y0, y1, ny) = dims.get(1).copied().unwrap_or((0.0, 1.0, 1));
    png_and_svg!(path, (900, 700), |root| {
        root.fill(&WHITE)?;
        let (plot, key) = root.split_horizontally(800);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(labels.first().map_or("", |s| s.as_str()))
            .y_desc(labels.get(1).map_or("", |s| s.as_str()))
            .x_label_formatter(&|x| tick(*x))
            .y_label_formatter(&|y| tick(*y))
            .label_style(("sans-serif", 12))
            .draw()?;
        let (wx, wy) = ((x1 - x0) / nx as f64, (y1 - y0) / ny as f64);
        for (bins, q) in cells {
            let (bx, by) = (bins[0] as f64, bins.get(1).copied().unwrap_or(0) as f64);
            let rect = [(x0 + bx * wx, y0 + by * wy), (x0 + (bx + 1.0) * wx, y0 + (by + 1.0) * wy)];
            chart.draw_series(std::iter::once(Rectangle::new(rect, quality_color(*q).filled())))?;
            chart.draw_series(std::iter::once(Rectangle::new(rect, RGBColor(200, 200, 200).stroke_width(1))))?;
        }
        // The key: quality from 0 (bottom) to 1 (top).
        let font = ("sans-serif", 12).into_font().color(&BLACK);
        key.draw(&Text::new("quality", (10, 40), font.clone()))?;
        for k in 0..=100 {
            let y = 560 - 4 * k;
            key.draw(&Rectangle::new([(14, y - 4), (44, y)], quality_color(k as f64 / 100.0).filled()))?;
        }
        for (v, y) in [(0.0, 556), (0.5, 356), (1.0, 156)] {
            key.draw(&Text::new(tick(v), (50, y - 6), font.clone()))?;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn bars_start_at_zero_and_whole_number_axes_and_single_points_read_right() {
        let bar = |mean: f64| Bar { label: String::new(), mean, half_width: 10.0 };
        let (y0, y1) = bar_y_range(&[bar(1450.0), bar(1500.0)]);
        assert_eq!(y0, 0.0);
        assert!(y1 > 1510.0);
        let (y0, y1) = bar_y_range(&[bar(-50.0), bar(20.0)]);
        assert!(y0 < -60.0 && y1 > 30.0);
        // One generation: the x axis is centred on it and whole-numbered.
        let panel = Panel {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            series: vec![Series::line("max", vec![(0.0, 5.0)])],
        };
        let (x0, x1, ..) = bounds(&panel);
        assert_eq!((x0, x1), (-0.5, 0.5));
        assert!(integer_x(&panel));
        let frac = Panel { series: vec![Series::line("x", vec![(0.5, 1.0), (1.0, 2.0)])], ..panel };
        assert!(!integer_x(&frac));
        assert_eq!([tick(4000.0), tick(0.1 + 0.2), tick(-0.0), tick(2.5)], ["4000", "0.3", "0", "2.5"]);
    }

    /// The RGB pixels of a PNG as (width, height, bytes).
    fn pixels(path: &Path) -> (usize, usize, Vec<u8>) {
        let d = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut r = d.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        (info.width as usize, info.height as usize, buf)
    }

    /// Columns `xs` of the image that hold a pixel of colour `c`.
    fn columns_with(img: &(usize, usize, Vec<u8>), c: RGBColor, xs: std::ops::Range<usize>) -> usize {
        let (w, h, b) = img;
        xs.filter(|&x| (0..*h).any(|y| b[(y * w + x) * 3..(y * w + x) * 3 + 3] == [c.0, c.1, c.2])).count()
    }

    #[test]
    fn a_single_point_is_drawn_in_the_plot_and_the_legend_stands_beside_it() {
        let dir = scratch("single");
        let path = dir.join("one.png");
        // One generation: two series of one point each, at x = 3.
        let panel = Panel {
            title: "one generation".into(),
            x_label: "generation".into(),
            y_label: "score".into(),
            series: vec![Series::line("max", vec![(3.0, 5.0)]), Series::line("min", vec![(3.0, 1.0)])],
        };
        line_panels(&path, "t", &[panel], 600, 300).unwrap();
        let img = pixels(&path);
        let plot_right = 600 - LEGEND_WIDTH as usize;
        // The point stands in the middle of the plot (x = 3 centred), as a marker.
        let mid = (60 + plot_right) / 2;
        assert!(columns_with(&img, color(0), mid - 30..mid + 30) >= 4, "no marker for the single point");
        // The legend keys are in the strip beside the plot, not over it.
        assert!(columns_with(&img, color(0), plot_right..600) >= 4 && columns_with(&img, color(1), plot_right..600) >= 4);
        assert_eq!(columns_with(&img, color(0), plot_right - 60..plot_right - 8), 0, "a legend key inside the plot");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_event_series_is_marked_not_joined() {
        // The balance chart's penalty: iterations 0 and 10 marked, nothing drawn between them.
        let dir = scratch("events");
        let path = dir.join("events.png");
        let panel = Panel {
            title: "F".into(),
            x_label: "iteration".into(),
            y_label: "F".into(),
            series: vec![Series { markers: true, ..Series::line("penalty", vec![(0.0, 0.0), (10.0, 0.0)]) }],
        };
        line_panels(&path, "t", &[panel], 600, 300).unwrap();
        let img = pixels(&path);
        let plot_right = 600 - LEGEND_WIDTH as usize;
        let mid = (60 + plot_right) / 2;
        assert_eq!(columns_with(&img, color(0), mid - 40..mid + 40), 0, "the events are joined by a line");
        assert!(columns_with(&img, color(0), 60..100) >= 4 && columns_with(&img, color(0), plot_right - 50..plot_right) >= 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A fresh directory under the system temp dir (no `tempfile` dev-dependency in this crate).
    fn scratch(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("playforge-chart-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating a scratch dir");
        dir
    }

    fn is_png(path: &Path) -> bool {
        std::fs::read(path).map(|b| b.starts_with(b"\x89PNG\r\n\x1a\n")).unwrap_or(false)
    }

    fn no_tmp_left(dir: &Path) -> bool {
        std::fs::read_dir(dir)
            .expect("listing the scratch dir")
            .all(|e| !e.expect("a dir entry").file_name().to_string_lossy().contains(".tmp"))
    }

    /// Three conditions × 20 replicates × 100-point curves, deterministic (no RNG).
    pub(super) fn sample_conditions() -> Vec<Condition> {
        let names = ["UCT c=1.4 (baseline)", "UCT c=0.5, no rollout", "NMCS level 2 + heur."];
        names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let ceiling = 40.0 + 12.0 * k as f64;
                let rate = 0.04 + 0.015 * k as f64;
                let noise = |j: usize| ((j * 7 + k * 3) % 11) as f64 - 5.0;
                let finals = (0..20).map(|j| ceiling + 1.2 * noise(j)).collect();
                let curve = (1..=100)
                    .map(|r| {
                        let x = r as f64 * 10.0;
                        let mean = ceiling * (1.0 - (-rate * r as f64).exp());
                        let sd = 3.0 + 6.0 * (-0.03 * r as f64).exp();
                        (x, mean, mean - sd, mean + sd)
                    })
                    .collect();
                Condition { name: name.to_string(), finals, curve }
            })
            .collect()
    }

    #[test]
    fn experiment_panels_draws_a_png_atomically() {
        let dir = scratch("panels");
        let path = dir.join("experiment.png");
        experiment_panels(&path, "Sample experiment", "best score", &sample_conditions(), 1200, 520).expect("drawing");
        assert!(path.exists());
        assert!(is_png(&path));
        assert!(no_tmp_left(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn experiment_panels_degenerate_inputs_do_not_panic() {
        let dir = scratch("degenerate");
        let empty = dir.join("empty.png");
        experiment_panels(&empty, "No conditions", "score", &[], 900, 400).expect("drawing no conditions");
        assert!(is_png(&empty));
        let one = vec![
            Condition { name: "one replicate, one point".into(), finals: vec![3.0], curve: vec![(1.0, 3.0, 3.0, 3.0)] },
            Condition { name: "nothing".into(), finals: vec![], curve: vec![] },
            Condition { name: "NaN".into(), finals: vec![f64::NAN, 3.0], curve: vec![(f64::NAN, 1.0, 0.0, 2.0)] },
        ];
        let single = dir.join("single.png");
        experiment_panels(&single, "Single point", "score", &one, 900, 400).expect("drawing a single point");
        assert!(is_png(&single));
        assert!(experiment_panels(&dir.join("tiny.png"), "Too small", "score", &one, 10, 10).is_err());
        assert!(no_tmp_left(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Renders the sample to /tmp/experiment_panels_sample.png for a look by eye:
    /// `cargo test --release --lib chart -- --ignored`.
    #[test]
    #[ignore]
    fn experiment_panels_sample() {
        let path = Path::new("/tmp/experiment_panels_sample.png");
        experiment_panels(path, "Sample experiment (3 conditions × 20 replicates)", "best score", &sample_conditions(), 1200, 520)
            .expect("drawing");
        // Six long names in a narrower chart: the category labels must rotate.
        let mut six = sample_conditions();
        six.extend(sample_conditions().into_iter().map(|mut c| {
            c.name = format!("{} (bis)", c.name);
            c.finals.iter_mut().for_each(|y| *y -= 15.0);
            c
        }));
        let rotated = Path::new("/tmp/experiment_panels_sample_rotated.png");
        experiment_panels(rotated, "Six conditions", "best score", &six, 900, 520).expect("drawing");
        let one = vec![Condition { name: "one replicate, one point".into(), finals: vec![3.0], curve: vec![(1.0, 3.0, 3.0, 3.0)] }];
        let single = Path::new("/tmp/experiment_panels_sample_single.png");
        experiment_panels(single, "Single point", "score", &one, 900, 400).expect("drawing");
    }
}
