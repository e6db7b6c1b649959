//! The scaling plot: build + all pairs time against n, log–log, one line per
//! implementation and one panel per layout. Written as PNG and SVG.
//!
//! Text is drawn with DejaVu Sans, embedded in the binary (the `dejavu`
//! crate) and handed to plotters' `ab_glyph` renderer, so the plot looks the
//! same on every machine and needs no system fonts.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use quadrat::scenario::Layout;

use super::Error;
use super::implementation::Implementation;
use super::record::{Benchmark, Record};

/// Size of one panel, in pixels.
const PANEL: (u32, u32) = (640, 560);

/// The font family the plot asks for; registered by [`register_fonts`].
const FONT: &str = "sans-serif";

/// Writes the plot of the pairs records of `layouts` to `png` and `svg`.
pub(super) fn write(
    records: &[Record],
    layouts: &[Layout],
    png: &Path,
    svg: &Path,
) -> Result<(), Error> {
    register_fonts()?;
    let panels: Vec<Panel> = layouts
        .iter()
        .filter_map(|&l| Panel::new(l, records))
        .collect();
    let size = (PANEL.0 * panels.len().max(1) as u32, PANEL.1);

    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root, &panels).map_err(|e| Error::Plot(e.to_string()))?;
        root.present().map_err(|e| Error::Plot(e.to_string()))?;
    }
    write_png(png, size, &rgb)?;

    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw(&root, &panels).map_err(|e| Error::Plot(e.to_string()))?;
        root.present().map_err(|e| Error::Plot(e.to_string()))?;
    }
    fs::write(svg, text).map_err(|source| Error::Io {
        path: svg.to_owned(),
        source,
    })
}

/// Registers the embedded fonts with plotters, once per process.
fn register_fonts() -> Result<(), Error> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Plot(
            "the embedded font could not be read".to_owned(),
        ))
    }
}

fn write_png(path: &Path, (w, h): (u32, u32), rgb: &[u8]) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = fs::File::create(path).map_err(io)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let png_error = |e: png::EncodingError| Error::Plot(format!("PNG encoding: {e}"));
    let mut writer = encoder.write_header().map_err(png_error)?;
    writer.write_image_data(rgb).map_err(png_error)?;
    writer.finish().map_err(png_error)
}

/// One implementation's line: measured points, then extrapolated ones.
struct Line {
    implementation: Implementation,
    measured: Vec<(f64, f64)>,
    extrapolated: Vec<(f64, f64)>,
}

/// One layout's lines.
struct Panel {
    layout: Layout,
    lines: Vec<Line>,
}

impl Panel {
    fn new(layout: Layout, records: &[Record]) -> Option<Panel> {
        let mut lines: Vec<Line> = Vec::new();
        for r in records
            .iter()
            .filter(|r| r.benchmark == Benchmark::Pairs && r.layout == layout)
        {
            let i = match lines
                .iter()
                .position(|l| l.implementation == r.implementation)
            {
                Some(i) => i,
                None => {
                    lines.push(Line {
                        implementation: r.implementation,
                        measured: Vec::new(),
                        extrapolated: Vec::new(),
                    });
                    lines.len() - 1
                }
            };
            let point = (r.n as f64, r.millis().max(1e-4));
            if r.extrapolated {
                lines[i].extrapolated.push(point);
            } else {
                lines[i].measured.push(point);
            }
        }
        lines.sort_by_key(|l| {
            Implementation::ALL
                .iter()
                .position(|&i| i == l.implementation)
        });
        (!lines.is_empty()).then_some(Panel { layout, lines })
    }

    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.lines
            .iter()
            .flat_map(|l| l.measured.iter().chain(&l.extrapolated).copied())
    }
}

/// The line colour of each implementation, fixed so that panels and runs
/// agree. quadrat stands out in red.
fn color(i: Implementation) -> RGBColor {
    match i {
        Implementation::Brute => RGBColor(90, 90, 90),
        Implementation::Sweep => RGBColor(140, 86, 75),
        Implementation::Tutorial => RGBColor(227, 119, 194),
        Implementation::Quadrat => RGBColor(214, 39, 40),
        Implementation::QuadratPar => RGBColor(255, 127, 14),
        Implementation::QuadratLoop => RGBColor(150, 20, 60),
        #[cfg(feature = "peers")]
        Implementation::Rstar => RGBColor(31, 119, 180),
        #[cfg(feature = "peers")]
        Implementation::Broccoli => RGBColor(44, 160, 44),
        #[cfg(feature = "peers")]
        Implementation::Parry => RGBColor(148, 103, 189),
        #[cfg(feature = "peers")]
        Implementation::ParryRebuild => RGBColor(197, 176, 213),
        #[cfg(feature = "peers")]
        Implementation::FlatSpatial => RGBColor(23, 190, 207),
        #[cfg(feature = "peers")]
        Implementation::Obvhs => RGBColor(188, 189, 34),
    }
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, panels: &[Panel]) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (panel, area) in panels.iter().zip(&areas) {
        draw_panel(area, panel)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> DrawResult<DB> {
    let (x_lo, x_hi) = min_max(panel.points().map(|p| p.0));
    let (y_lo, y_hi) = min_max(panel.points().map(|p| p.1));
    let x_range = (x_lo / 1.5)..(x_hi * 1.5);
    let y_range = (y_lo / 3.0)..(y_hi * 3.0);

    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{} layout: build + all pairs", panel.layout.name()),
            (FONT, 22).into_font().style(FontStyle::Bold),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x_range.log_scale(), y_range.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("n (boxes)")
        .y_desc("median time (ms)")
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 14))
        .x_label_formatter(&|x| fmt_count(*x))
        .y_label_formatter(&|y| fmt_time(*y))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205))
        .draw()?;

    for line in &panel.lines {
        let c = color(line.implementation);
        let width = if line.implementation.is_peer() { 2 } else { 4 };
        let style = c.stroke_width(width);
        let label = if line.extrapolated.is_empty() {
            line.implementation.name().to_owned()
        } else {
            format!("{} (dashed: n² extrapolation)", line.implementation.name())
        };
        chart
            .draw_series(LineSeries::new(line.measured.iter().copied(), style))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        chart.draw_series(
            line.measured
                .iter()
                .map(|&p| Circle::new(p, width + 2, c.filled())),
        )?;
        if let Some(&last) = line.measured.last()
            && !line.extrapolated.is_empty()
        {
            let dashed = std::iter::once(last).chain(line.extrapolated.iter().copied());
            chart.draw_series(DashedLineSeries::new(dashed, 8, 6, style))?;
        }
        chart.draw_series(
            line.extrapolated
                .iter()
                .map(|&p| Circle::new(p, width + 2, c.stroke_width(2))),
        )?;
    }

    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(190, 190, 190))
        .margin(12)
        .draw()?;
    Ok(())
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// Axis labels for n: `1k`, `10k`, `1M`.
fn fmt_count(x: f64) -> String {
    match x {
        x if x >= 1e6 => format!("{}M", trim(x / 1e6)),
        x if x >= 1e3 => format!("{}k", trim(x / 1e3)),
        x => trim(x),
    }
}

/// Axis labels for milliseconds: `0.01`, `1`, `1,000`.
fn fmt_time(ms: f64) -> String {
    if ms >= 1.0 {
        super::fmt_n(ms.round() as usize)
    } else {
        trim(ms)
    }
}

/// A number without trailing zeros: `2`, `2.5`, `0.01`.
fn trim(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Width of the resting plot's legend, right of its panels.
const LEGEND_WIDTH: u32 = 300;

/// The resting plot: time per step against the number of static tiles,
/// log–log, one panel per scene and one line per implementation and mover
/// count, with one legend for all panels on their right: its 16 lines,
/// drawn inside a panel, covered the data. Written as PNG.
pub(super) fn write_resting(points: &[super::resting::Point], png: &Path) -> Result<(), Error> {
    register_fonts()?;
    let scenes: Vec<String> = {
        // The tile scenes: brownian has no static bodies to plot against.
        let mut v: Vec<String> = points
            .iter()
            .filter(|p| p.statics() > 0)
            .map(|p| p.scene().to_owned())
            .collect();
        v.dedup();
        v
    };
    let lines = resting_lines(points.iter().filter(|p| p.statics() > 0));
    let panels = PANEL.0 * scenes.len().max(1) as u32;
    let size = (panels + LEGEND_WIDTH, PANEL.1);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| Error::Plot(e.to_string()))?;
        let (charts, legend) = root.split_horizontally(panels);
        let areas = charts.split_evenly((1, scenes.len().max(1)));
        for (area, scene) in areas.iter().zip(&scenes) {
            draw_resting(area, scene, points).map_err(|e| Error::Plot(e.to_string()))?;
        }
        draw_resting_legend(&legend, &lines).map_err(|e| Error::Plot(e.to_string()))?;
        root.present().map_err(|e| Error::Plot(e.to_string()))?;
    }
    write_png(png, size, &rgb)
}

fn draw_resting<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scene: &str,
    points: &[super::resting::Point],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mine: Vec<_> = points.iter().filter(|p| p.scene() == scene).collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for p in &mine {
        x0 = x0.min(p.statics() as f64);
        x1 = x1.max(p.statics() as f64);
        y0 = y0.min(p.ms().max(1e-3));
        y1 = y1.max(p.ms().max(1e-3));
    }
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{scene}: ms per step"),
            (FONT, 20).into_font().style(FontStyle::Bold),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (x0 * 0.8..x1 * 1.25).log_scale(),
            (y0 * 0.5..y1 * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("static tiles")
        .y_desc("ms per step")
        .x_label_formatter(&|x| super::fmt_n(x.round() as usize))
        .label_style((FONT, 13))
        .draw()?;
    for name in &resting_lines(mine.iter().copied()) {
        let LineStyle {
            color,
            width,
            dashed,
        } = resting_style(name);
        let mut pts: Vec<(f64, f64)> = mine
            .iter()
            .filter(|p| &p.line() == name)
            .map(|p| (p.statics() as f64, p.ms().max(1e-3)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let stroke = color.stroke_width(width);
        if dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, stroke))?;
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), stroke))?;
        }
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    Ok(())
}

/// The names of the resting plot's lines through `points`, sorted, each
/// once.
fn resting_lines<'a>(points: impl Iterator<Item = &'a super::resting::Point>) -> Vec<String> {
    let mut lines: Vec<String> = points.map(|p| p.line()).collect();
    lines.sort();
    lines.dedup();
    lines
}

/// How a line of the resting plot is drawn: the implementation's colour
/// (the world in black, and thicker), dashed for 10,000 movers. A lighter
/// shade for 10,000 movers left the lightest colours (parry2d rebuilt)
/// faint.
struct LineStyle {
    color: RGBColor,
    width: u32,
    dashed: bool,
}

/// The style of the resting plot's line named `line` (as `Point::line`
/// names it).
fn resting_style(line: &str) -> LineStyle {
    let world = line.starts_with("quadrat world");
    let color = if world {
        RGBColor(0, 0, 0)
    } else {
        Implementation::ALL
            .iter()
            .find(|i| line.starts_with(&format!("{} split", i.name())))
            .map_or(RGBColor(90, 90, 90), |&i| color(i))
    };
    LineStyle {
        color,
        width: if world { 3 } else { 1 },
        dashed: line.ends_with(" 10,000 movers"),
    }
}

/// The resting plot's legend: a line of each colour and its name, one
/// under the other.
fn draw_resting_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[String],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font = (FONT, 13).into_font();
    for (i, line) in lines.iter().enumerate() {
        let y = 50 + 20 * i as i32;
        let style = resting_style(line);
        let stroke = style.color.stroke_width(style.width.max(2));
        let dashes: &[(i32, i32)] = if style.dashed {
            &[(8, 17), (23, 32)]
        } else {
            &[(8, 32)]
        };
        for &(from, to) in dashes {
            area.draw(&PathElement::new(vec![(from, y), (to, y)], stroke))?;
        }
        area.draw(&Text::new(line.clone(), (44, y - 7), font.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels() {
        assert_eq!(fmt_count(1000.0), "1k");
        assert_eq!(fmt_count(2500.0), "2.5k");
        assert_eq!(fmt_count(1e6), "1M");
        assert_eq!(fmt_count(500.0), "500");
        assert_eq!(fmt_time(0.01), "0.01");
        assert_eq!(fmt_time(1000.0), "1,000");
    }

    /// The resting plot's legend sits right of the panels, one line per
    /// implementation and mover count, each in its line's colour, dashed
    /// for 10,000 movers.
    #[test]
    fn resting_legend_is_beside_the_panels() {
        use super::super::resting::Point;
        let runners = ["quadrat world", "quadrat split", "broccoli split"];
        let mut points = Vec::new();
        for scene in ["tiles, movers confined", "tiles, movers spread"] {
            for (i, runner) in runners.iter().enumerate() {
                for movers in [1000, 10_000] {
                    for statics in [8000, 100_000, 1_000_000] {
                        let ms = (i + 1) as f64 * movers as f64 / 1000.0;
                        points.push(Point::new(scene, statics, movers, runner, ms));
                    }
                }
            }
        }
        points.push(Point::new("brownian", 0, 100_000, "quadrat world", 19.0));
        let dir = std::env::temp_dir().join(format!("quadrat-plot-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("resting.png");
        write_resting(&points, &path).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        // Two panels (brownian has no tiles to plot against) and the legend.
        assert_eq!(
            (info.width, info.height),
            (2 * PANEL.0 + LEGEND_WIDTH, PANEL.1)
        );
        let at = |x: u32, y: u32| {
            let i = 3 * (y * info.width + x) as usize;
            RGBColor(rgb[i], rgb[i + 1], rgb[i + 2])
        };
        let lines = resting_lines(points.iter().filter(|p| p.statics() > 0));
        assert_eq!(lines.len(), 6);
        for (i, line) in lines.iter().enumerate() {
            let style = resting_style(line);
            let y = 50 + 20 * i as u32;
            let x = 2 * PANEL.0;
            assert_eq!(
                at(x + 12, y),
                style.color,
                "{line}: no legend line at y = {y}"
            );
            assert_eq!(at(x + 28, y), style.color, "{line}");
            let dashed = line.ends_with("10,000 movers");
            let gap = if dashed { WHITE } else { style.color };
            assert_eq!(at(x + 20, y), gap, "{line}: dashed {dashed}");
        }
        let below = 50 + 20 * lines.len() as u32;
        assert!((0..LEGEND_WIDTH).all(|x| at(2 * PANEL.0 + x, below) == WHITE));
    }
}
