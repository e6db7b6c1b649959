//! `quadrat-lab render`: a scenario's quadtree as a picture, SVG and PNG.
//!
//! The nodes are drawn as outlines, the objects (the scenario's boxes) as
//! filled squares, and an optional query area with the objects it returns
//! highlighted. A caption gives the figures. Text is set in DejaVu Sans,
//! embedded in the binary, so the picture is the same on every machine.
//!
//! ```no_run
//! use quadrat_lab::render::{self, Args};
//! let args = Args { n: 500, ..Args::default() };
//! let picture = render::run(&args).unwrap();
//! println!("{} nodes, written to {}", picture.nodes, picture.png.display());
//! ```

use core::fmt;
use std::fs;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use quadrat::scenario::{Layout, Scenario};
use quadrat::{Aabb, Config, MAX_DEPTH, QuadTree};

use crate::sim;

/// Height of the caption strip under the world, in pixels.
const CAPTION: u32 = 40;

/// The font family asked for; registered by [`register_fonts`].
const FONT: &str = "sans-serif";

const BACKGROUND: RGBColor = RGBColor(0xfb, 0xfb, 0xfd);
const INK: RGBColor = RGBColor(0x1f, 0x29, 0x33);
const NODE: RGBColor = RGBColor(0x4a, 0x55, 0x68);
/// The mixed layout's large objects: thin outlines in a pale tone, so that
/// the nodes and the small objects under them stay readable.
const LARGE: RGBColor = RGBColor(0x9c, 0xb8, 0xd4);
const OBJECT: RGBColor = RGBColor(0x3e, 0x7c, 0xb1);
const HIT: RGBColor = RGBColor(0xe4, 0x57, 0x2e);
const QUERY: RGBColor = RGBColor(0xe8, 0xa3, 0x17);

/// Options of `quadrat-lab render`.
#[derive(Clone, Debug, clap::Args)]
pub struct Args {
    /// Layout of the objects: uniform, clustered or mixed.
    #[arg(long, default_value = "uniform", value_parser = parse_layout)]
    pub layout: Layout,
    /// Number of objects.
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub n: u32,
    /// Seed of the layout.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Mean number of other objects each object overlaps (uniform layout),
    /// which sets the objects' size.
    #[arg(long, default_value_t = 1.0, value_parser = parse_overlaps)]
    pub overlaps: f32,
    /// Split threshold of the tree.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_items: u32,
    /// Deepest level of the tree.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_DEPTH)))]
    pub max_depth: u8,
    /// A query area `x0,y0,x1,y1` in world units (the world is 0..1000 on
    /// both axes); the objects it returns are highlighted.
    #[arg(long, value_parser = parse_area, allow_hyphen_values = true)]
    pub query: Option<Aabb>,
    /// Directory for `tree.svg` and `tree.png`.
    #[arg(long, default_value = "target/render")]
    pub out: PathBuf,
    /// Side of the picture's world square, in pixels.
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(64..=8192))]
    pub size: u32,
}

impl Default for Args {
    fn default() -> Args {
        Args {
            layout: Layout::Uniform,
            n: 1_000,
            seed: 1,
            overlaps: 1.0,
            max_items: 8,
            max_depth: 8,
            query: None,
            out: PathBuf::from("target/render"),
            size: 800,
        }
    }
}

/// What [`run`] drew and wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Picture {
    /// The SVG file.
    pub svg: PathBuf,
    /// The PNG file.
    pub png: PathBuf,
    /// Nodes of the tree.
    pub nodes: usize,
    /// Depth of the tree.
    pub depth: u8,
    /// Objects the query area returns (0 without one).
    pub hits: usize,
}

/// Why `render` failed.
#[derive(Debug)]
pub enum Error {
    /// A file could not be written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Drawing or encoding failed.
    Draw(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "cannot write {}: {source}", path.display()),
            Error::Draw(message) => write!(f, "cannot draw the tree: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Draw(_) => None,
        }
    }
}

/// Everything one picture shows.
struct Scene {
    world: Aabb,
    boxes: Vec<Aabb>,
    /// The mixed layout's large objects, drawn see-through under the others.
    large: Vec<bool>,
    hit: Vec<bool>,
    nodes: Vec<Aabb>,
    depth: u8,
    query: Option<Aabb>,
    caption: String,
}

/// Builds the scenario's tree and writes `tree.svg` and `tree.png` into
/// `args.out`.
pub fn run(args: &Args) -> Result<Picture, Error> {
    let scene = Scene::new(args);
    fs::create_dir_all(&args.out).map_err(|source| Error::Io {
        path: args.out.clone(),
        source,
    })?;
    register_fonts()?;
    let size = (args.size, args.size + CAPTION);
    let draw_error = |e: DrawingAreaErrorKind<_>| Error::Draw(e.to_string());

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, &scene, args.size).map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    let svg_path = args.out.join("tree.svg");
    fs::write(&svg_path, svg).map_err(|source| Error::Io {
        path: svg_path.clone(),
        source,
    })?;

    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root, &scene, args.size).map_err(|e| Error::Draw(e.to_string()))?;
        root.present().map_err(|e| Error::Draw(e.to_string()))?;
    }
    let png_path = args.out.join("tree.png");
    write_png(&png_path, size, &rgb)?;

    Ok(Picture {
        svg: svg_path,
        png: png_path,
        nodes: scene.nodes.len(),
        depth: scene.depth,
        hits: scene.hit.iter().filter(|&&h| h).count(),
    })
}

impl Scene {
    fn new(args: &Args) -> Scene {
        let scenario =
            Scenario::with_overlaps(args.layout, args.n as usize, args.seed, args.overlaps);
        let boxes = scenario.boxes();
        let config = Config {
            max_items: args.max_items as usize,
            max_depth: args.max_depth,
            ..Config::default()
        };
        let mut tree = QuadTree::with_config(scenario.world, config);
        tree.insert_many(boxes.iter().enumerate().map(|(i, &b)| (b, i)));
        let mut hit = vec![false; boxes.len()];
        if let Some(area) = args.query {
            for (_, &i) in tree.query(area) {
                hit[i] = true;
            }
        }
        let large = boxes
            .iter()
            .map(|b| b.width() > 2.0 * scenario.size)
            .collect();
        let nodes: Vec<Aabb> = tree.nodes().map(|n| n.bounds).collect();
        let depth = tree.depth();
        let mut caption = format!(
            "{} · {} objects · max_items {} · {} nodes · depth {}",
            args.layout.name(),
            sim::thousands(u64::from(args.n)),
            args.max_items,
            sim::thousands(nodes.len() as u64),
            depth
        );
        if args.query.is_some() {
            let hits = hit.iter().filter(|&&h| h).count();
            caption.push_str(&format!(" · query returns {}", sim::thousands(hits as u64)));
        }
        Scene {
            world: scenario.world,
            boxes,
            hit,
            large,
            nodes,
            depth,
            query: args.query,
            caption,
        }
    }
}

/// Draws the scene: world square on top, caption strip below.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    scene: &Scene,
    side: u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&BACKGROUND)?;
    let scale = side as f32 / scene.world.width().max(scene.world.height());
    // Clipped to the world: objects may reach past its border.
    let (lo, hi) = (scene.world.min, scene.world.max);
    let px = |b: &Aabb| {
        let at = |x: f32, y: f32| {
            (
                ((x.clamp(lo.x, hi.x) - lo.x) * scale).round() as i32,
                ((y.clamp(lo.y, hi.y) - lo.y) * scale).round() as i32,
            )
        };
        [at(b.min.x, b.min.y), at(b.max.x, b.max.y)]
    };
    let fill = |b: &Aabb, color: RGBAColor| {
        let [a, mut z] = px(b);
        // At least one pixel, so tiny objects stay visible.
        z = (z.0.max(a.0 + 1), z.1.max(a.1 + 1));
        Rectangle::new([a, z], color.filled())
    };

    if let Some(area) = scene.query {
        root.draw(&fill(&area, QUERY.mix(0.14)))?;
    }
    let color = |hit: bool| if hit { HIT } else { OBJECT };
    let objects = || scene.boxes.iter().zip(&scene.hit).zip(&scene.large);
    // Large objects first, as pale outlines only (a fill, even see-through,
    // piles up where they overlap and buries what lies under them); then
    // the nodes, then the small objects on top.
    for ((b, &hit), _) in objects().filter(|(_, large)| **large) {
        let outline = if hit { HIT.mix(0.6) } else { LARGE.mix(0.9) };
        root.draw(&Rectangle::new(px(b), outline.stroke_width(1)))?;
    }
    for node in &scene.nodes {
        root.draw(&Rectangle::new(px(node), NODE.mix(0.55).stroke_width(1)))?;
    }
    for ((b, &hit), _) in objects().filter(|(_, large)| !**large) {
        root.draw(&fill(b, color(hit).mix(if hit { 0.95 } else { 0.8 })))?;
    }
    if let Some(area) = scene.query {
        root.draw(&Rectangle::new(px(&area), QUERY.stroke_width(2)))?;
    }
    root.draw(&Rectangle::new(px(&scene.world), INK.stroke_width(2)))?;

    let style = TextStyle::from((FONT, 16).into_font()).color(&INK);
    root.draw_text(&scene.caption, &style, (12, side as i32 + 12))?;
    Ok(())
}

/// Registers the embedded font with plotters, once per process.
fn register_fonts() -> Result<(), Error> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok());
    if ok {
        Ok(())
    } else {
        Err(Error::Draw(
            "the embedded font could not be read".to_owned(),
        ))
    }
}

fn write_png(path: &Path, (w, h): (u32, u32), rgb: &[u8]) -> Result<(), Error> {
    let file = fs::File::create(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let png_error = |e: png::EncodingError| Error::Draw(format!("PNG encoding: {e}"));
    let mut writer = encoder.write_header().map_err(png_error)?;
    writer.write_image_data(rgb).map_err(png_error)?;
    writer.finish().map_err(png_error)
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    Layout::ALL
        .into_iter()
        .find(|l| l.name() == s)
        .ok_or_else(|| format!("unknown layout `{s}` (expected uniform, clustered or mixed)"))
}

fn parse_overlaps(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a number of overlaps between 0 and 100"
        )),
    }
}

/// Parses `x0,y0,x1,y1` (corners in any order).
fn parse_area(s: &str) -> Result<Aabb, String> {
    let values: Vec<f32> = s
        .split(',')
        .map(|v| v.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{s}` is not four numbers x0,y0,x1,y1"))?;
    match values[..] {
        [x0, y0, x1, y1] if values.iter().all(|v| v.is_finite()) => Ok(Aabb::new(
            [x0.min(x1), y0.min(y1)],
            [x0.max(x1), y0.max(y1)],
        )),
        _ => Err(format!("`{s}` is not four finite numbers x0,y0,x1,y1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_parse_in_any_corner_order() {
        assert_eq!(
            parse_area("10,20,5,40"),
            Ok(Aabb::new([5.0, 20.0], [10.0, 40.0]))
        );
        assert!(parse_area("1,2,3").is_err());
        assert!(parse_area("1,2,3,x").is_err());
        assert!(parse_area("1,2,3,inf").is_err());
    }

    #[test]
    fn query_hits_are_what_the_tree_returns() {
        let args = Args {
            n: 300,
            query: Some(Aabb::new([0.0, 0.0], [500.0, 500.0])),
            ..Args::default()
        };
        let scene = Scene::new(&args);
        let boxes = Scenario::with_overlaps(Layout::Uniform, 300, 1, 1.0).boxes();
        let expected: Vec<bool> = boxes
            .iter()
            .map(|b| b.intersects(&args.query.unwrap()))
            .collect();
        assert_eq!(scene.hit, expected);
        assert!(scene.caption.contains("query returns"));
    }
}
