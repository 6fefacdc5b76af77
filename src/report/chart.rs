//! PNG charts: line panels (values over time or over iterations, with optional bands) and bar
//! charts with error bars (mean ± 95% CI). Plotters draws into a temporary `.tmp.png` beside the
//! target, which is then renamed over it (an atomic write).

use plotters::prelude::*;
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
        xs.1 = xs.0 + 1.0;
    }
    if ys.1 <= ys.0 {
        ys.1 = ys.0 + 1.0;
    }
    let pad = (ys.1 - ys.0) * 0.05;
    (xs.0, xs.1, ys.0 - pad, ys.1 + pad)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Stacks `panels` vertically in one PNG of width × (height per panel).
pub fn line_panels(path: &Path, title: &str, panels: &[Panel], width: u32, panel_height: u32) -> DrawResult {
    init_fonts();
    let height = panel_height * panels.len().max(1) as u32 + 40;
    let tmp = tmp_path(path)?;
    {
        let root = BitMapBackend::new(&tmp, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, rest) = root.split_vertically(40);
        top.titled(title, ("sans-serif", 22))?;
        let areas = rest.split_evenly((panels.len().max(1), 1));
        for (area, panel) in areas.iter().zip(panels) {
            let (x0, x1, y0, y1) = bounds(panel);
            let mut chart = ChartBuilder::on(area)
                .caption(&panel.title, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(60)
                .build_cartesian_2d(x0..x1, y0..y1)?;
            chart.configure_mesh().x_desc(panel.x_label.as_str()).y_desc(panel.y_label.as_str()).label_style(("sans-serif", 12)).draw()?;
            for (i, s) in panel.series.iter().enumerate() {
                let c = color(i);
                if let Some(band) = &s.band {
                    let mut poly: Vec<(f64, f64)> = band.iter().map(|&(x, _, hi)| (x, hi)).collect();
                    poly.extend(band.iter().rev().map(|&(x, lo, _)| (x, lo)));
                    chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled())))?;
                }
                chart
                    .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            }
            if panel.series.len() > 1 || panel.series.iter().any(|s| !s.name.is_empty()) {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 12))
                    .position(SeriesLabelPosition::LowerRight)
                    .draw()?;
            }
        }
        root.present()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// One bar with an error bar (mean and the half-width of its interval).
pub struct Bar {
    pub label: String,
    pub mean: f64,
    pub half_width: f64,
}

/// A bar chart of means with ± error bars.
pub fn bars(path: &Path, title: &str, y_label: &str, bars: &[Bar], width: u32, height: u32) -> DrawResult {
    init_fonts();
    let tmp = tmp_path(path)?;
    {
        let root = BitMapBackend::new(&tmp, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let lo = bars.iter().map(|b| b.mean - b.half_width).fold(f64::INFINITY, f64::min);
        let hi = bars.iter().map(|b| b.mean + b.half_width).fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let pad = ((hi - lo) * 0.15).max(1e-9);
        let y0 = if lo >= 0.0 && lo - pad * 4.0 < 0.0 { 0.0 } else { lo - pad };
        let n = bars.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(70)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, y0..hi + pad)?;
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
        root.present()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn tmp_path(path: &Path) -> Result<std::path::PathBuf, std::io::Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("chart");
    Ok(path.with_file_name(format!("{stem}.tmp.png")))
}
