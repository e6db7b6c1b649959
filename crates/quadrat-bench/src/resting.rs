//! Resting worlds: a large static level and a few things moving through it.
//!
//! - **tiles**: unit boxes on a square grid with holes (one in ten), on a
//!   layer that never meets itself, plus circles that move every step and
//!   collide with the tiles and with each other. The movers stay in one
//!   100 × 100 corner region ("confined") or roam the whole map ("spread").
//! - **brownian**: every body takes a random step every step (Broadmark's
//!   "brownian" scene), so nothing rests: the full pass's case.
//!
//! Timed per step, as medians:
//! - `world`: quadrat's `CollisionWorld`: `set_position` for each mover,
//!   then `step`, which carries resting pairs over and queries only what
//!   changed.
//! - `split`: the hand-written two-tree split, for each implementation: the
//!   level's index built once, the movers' index updated (or rebuilt), the
//!   movers' pairs from it, each mover's box queried against the level;
//!   then the same exact test on every pair. For quadrat, the level and the
//!   movers meet through `QuadTree::for_each_pair_with`.
//!
//! Before timing, every contact list is checked against brute force (every
//! mover against every body) while that is affordable, and against the
//! world's always.

use std::fmt::Write as _;

use quadrat::scenario::Rng;
use quadrat::{Aabb, CollisionWorld, Contact, Filter, Key, Layers, QuadTree, Shape, Vec2};

use super::implementation::Implementation;
use super::peers::Bbox;
use super::progress::Progress;
use super::timing::{median, time};
use super::{Error, Results, Settings, write};

const TILE: Layers = Layers::bit(0);
const MOVER: Layers = Layers::bit(1);
const RADIUS: f32 = 0.45;
const SPEED: f32 = 0.25;
/// The side of the region confined movers stay in.
const REGION: f32 = 100.0;

/// Where the movers go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Spread {
    /// In one 100 × 100 region.
    Confined,
    /// Over the whole map.
    Everywhere,
    /// No tiles: every body takes a random step every step.
    Brownian,
}

impl Spread {
    fn scene(self) -> &'static str {
        match self {
            Spread::Confined => "tiles, movers confined",
            Spread::Everywhere => "tiles, movers spread",
            Spread::Brownian => "brownian",
        }
    }
}

/// A tile map and its movers, stepped deterministically.
struct Level {
    world: Aabb,
    tiles: Vec<Vec2>,
    movers: Vec<(Vec2, Vec2)>,
    /// Where movers bounce.
    area: Aabb,
    /// Brownian motion's random steps, or `None` for straight lines.
    brownian: Option<Rng>,
}

impl Level {
    fn new(statics: usize, movers: usize, spread: Spread, seed: u64) -> Level {
        let side = if spread == Spread::Brownian {
            // Bodies about 3 diameters apart: a few contacts each.
            ((movers as f64 / 0.3).sqrt().ceil() as usize).max(1)
        } else {
            ((statics as f64 / 0.9).sqrt().ceil() as usize).max(1)
        };
        let mut rng = Rng::new(seed);
        let mut tiles = Vec::with_capacity(statics);
        'fill: for y in 0..side {
            for x in 0..side {
                if tiles.len() == statics {
                    break 'fill;
                }
                // Holes: one cell in ten, but the count is what was asked.
                if rng.below(10) == 0 && side * side - (y * side + x) > statics - tiles.len() {
                    continue;
                }
                tiles.push(Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
            }
        }
        let s = side as f32;
        let area = match spread {
            Spread::Confined => Aabb::new([0.0, 0.0], [REGION.min(s), REGION.min(s)]),
            Spread::Everywhere | Spread::Brownian => Aabb::new([0.0, 0.0], [s, s]),
        };
        let movers = (0..movers)
            .map(|_| {
                let p = Vec2::new(
                    rng.range(area.min.x, area.max.x),
                    rng.range(area.min.y, area.max.y),
                );
                let v = Vec2::new(rng.range(-SPEED, SPEED), rng.range(-SPEED, SPEED));
                (p, v)
            })
            .collect();
        Level {
            world: Aabb::new([0.0, 0.0], [s, s]),
            tiles,
            movers,
            area,
            brownian: (spread == Spread::Brownian).then(|| Rng::new(seed ^ 0xB0B)),
        }
    }

    fn advance(&mut self) {
        let a = self.area;
        if let Some(rng) = &mut self.brownian {
            for (_, v) in &mut self.movers {
                *v = Vec2::new(rng.range(-SPEED, SPEED), rng.range(-SPEED, SPEED));
            }
        }
        for (p, v) in &mut self.movers {
            *p += *v;
            if p.x < a.min.x || p.x > a.max.x {
                v.x = -v.x;
                p.x = p.x.clamp(a.min.x, a.max.x);
            }
            if p.y < a.min.y || p.y > a.max.y {
                v.y = -v.y;
                p.y = p.y.clamp(a.min.y, a.max.y);
            }
        }
    }
}

fn tile() -> Shape {
    Shape::Aabb {
        half_extents: Vec2::new(0.5, 0.5),
    }
}

fn ball() -> Shape {
    Shape::Circle { radius: RADIUS }
}

/// The world's broad-phase box: the shape's box grown by 2⁻¹⁹ of its
/// largest coordinate, so that the split finds the same touching pairs.
fn broad(shape: &Shape, p: Vec2) -> Aabb {
    let b = shape.aabb(p);
    let m = b
        .min
        .x
        .abs()
        .max(b.min.y.abs())
        .max(b.max.x.abs())
        .max(b.max.y.abs());
    b.expand(m / (1u32 << 19) as f32)
}

fn bbox(b: Aabb) -> Bbox {
    [b.min.x, b.min.y, b.max.x, b.max.y]
}

/// A contact by body number: tiles first, then movers.
type Found = (u32, u32, Contact);

fn contact(level: &Level, a: u32, b: u32) -> Option<Found> {
    let nt = level.tiles.len() as u32;
    let body = |i: u32| {
        if i < nt {
            (tile(), level.tiles[i as usize])
        } else {
            (ball(), level.movers[(i - nt) as usize].0)
        }
    };
    let (a, b) = (a.min(b), a.max(b));
    let ((sa, pa), (sb, pb)) = (body(a), body(b));
    sa.contact(pa, &sb, pb).map(|c| (a, b, c))
}

/// Every contact by testing every mover against every body.
fn brute(level: &Level) -> Vec<Found> {
    let nt = level.tiles.len() as u32;
    let nm = level.movers.len() as u32;
    let mut out = Vec::new();
    for m in 0..nm {
        for other in 0..nt + m {
            out.extend(contact(level, nt + m, other));
        }
    }
    out.sort_unstable_by_key(|f| (f.0, f.1));
    out
}

/// The world, stepped.
struct World {
    world: CollisionWorld<u32>,
    movers: Vec<Key>,
    nt: u32,
}

impl World {
    fn new(level: &Level) -> World {
        let mut world = CollisionWorld::new(level.world);
        for (i, &p) in level.tiles.iter().enumerate() {
            world.add(tile(), p, Filter::on(TILE).colliding_with(MOVER), i as u32);
        }
        let nt = level.tiles.len() as u32;
        let movers = level
            .movers
            .iter()
            .enumerate()
            .map(|(i, &(p, _))| {
                let filter = Filter::on(MOVER).colliding_with(TILE | MOVER);
                world.add(ball(), p, filter, nt + i as u32)
            })
            .collect();
        world.step();
        World { world, movers, nt }
    }

    fn step(&mut self, level: &Level) -> usize {
        for (&k, &(p, _)) in self.movers.iter().zip(&level.movers) {
            self.world.set_position(k, p);
        }
        self.world.step().contacts.len()
    }

    fn contacts(&self) -> Vec<Found> {
        // Keys were handed out in order, so slot = body number.
        let _ = self.nt;
        let mut out: Vec<Found> = self
            .world
            .events()
            .contacts
            .iter()
            .map(|c| (c.a.index(), c.b.index(), c.contact))
            .collect();
        out.sort_unstable_by_key(|f| (f.0, f.1));
        out
    }
}

/// The two-tree split with quadrat: the level's tree built once, the
/// movers' tree updated in place, `for_each_pair_with` between them.
struct QuadratSplit {
    level: QuadTree<()>,
    movers: QuadTree<()>,
    keys: Vec<Key>,
    pairs: Vec<(u32, u32)>,
}

impl QuadratSplit {
    fn new(level: &Level) -> QuadratSplit {
        let mut tiles = QuadTree::new(level.world);
        tiles.insert_many(level.tiles.iter().map(|&p| (broad(&tile(), p), ())));
        let mut movers = QuadTree::new(level.world);
        let keys = level
            .movers
            .iter()
            .map(|&(p, _)| movers.insert(broad(&ball(), p), ()))
            .collect();
        QuadratSplit {
            level: tiles,
            movers,
            keys,
            pairs: Vec::new(),
        }
    }

    fn step(&mut self, level: &Level, out: &mut Vec<Found>) {
        let nt = level.tiles.len() as u32;
        let movers = &level.movers;
        self.movers
            .update_all(|k, _, _| broad(&ball(), movers[k.index() as usize].0));
        let _ = &self.keys;
        self.pairs.clear();
        let pairs = &mut self.pairs;
        self.level
            .for_each_pair_with(&self.movers, |t, m| pairs.push((t.index(), nt + m.index())));
        self.movers
            .for_each_pair(|a, b| pairs.push((nt + a.index(), nt + b.index())));
        out.clear();
        out.extend(self.pairs.iter().filter_map(|&(a, b)| contact(level, a, b)));
    }
}

/// The two-tree split with any implementation of the benchmark: the
/// level's index built once, the movers' index updated, each mover's box
/// queried against the level.
struct PeerSplit {
    /// `None` without tiles (brownian).
    level: Option<Box<dyn super::implementation::Index>>,
    movers: Box<dyn super::implementation::Index>,
    boxes: Vec<Bbox>,
    hits: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

impl PeerSplit {
    fn new(imp: Implementation, level: &Level) -> PeerSplit {
        let tiles: Vec<Bbox> = level
            .tiles
            .iter()
            .map(|&p| bbox(broad(&tile(), p)))
            .collect();
        let boxes: Vec<Bbox> = level
            .movers
            .iter()
            .map(|&(p, _)| bbox(broad(&ball(), p)))
            .collect();
        let w = bbox(level.world);
        PeerSplit {
            level: (!tiles.is_empty()).then(|| imp.build(w, &tiles)),
            movers: imp.build(w, &boxes),
            boxes,
            hits: Vec::new(),
            pairs: Vec::new(),
        }
    }

    fn step(&mut self, level: &Level, out: &mut Vec<Found>) {
        let nt = level.tiles.len() as u32;
        for (b, &(p, _)) in self.boxes.iter_mut().zip(&level.movers) {
            *b = bbox(broad(&ball(), p));
        }
        self.movers.update(bbox(level.world), &self.boxes);
        self.pairs.clear();
        self.movers.pairs_into(&mut self.pairs);
        for p in &mut self.pairs {
            *p = (nt + p.0, nt + p.1);
        }
        for (m, b) in self.boxes.iter().enumerate() {
            let Some(level) = &mut self.level else {
                break;
            };
            self.hits.clear();
            level.query(*b, &mut self.hits);
            self.pairs
                .extend(self.hits.iter().map(|&t| (t, nt + m as u32)));
        }
        out.clear();
        out.extend(self.pairs.iter().filter_map(|&(a, b)| contact(level, a, b)));
    }
}

/// What runs in a scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runner {
    World,
    Split(Implementation),
}

impl Runner {
    fn name(self) -> String {
        match self {
            Runner::World => "quadrat world".into(),
            Runner::Split(Implementation::Quadrat) => "quadrat split".into(),
            Runner::Split(i) => format!("{} split", i.name()),
        }
    }
}

/// The world, then the split with each selected implementation but brute
/// force, the tutorial quadtree, quadrat-par and quadrat-loop (which add
/// nothing here).
pub(super) fn runners(implementations: &[Implementation]) -> Vec<Runner> {
    let mut runners = vec![Runner::World];
    for &i in implementations {
        if !matches!(
            i,
            Implementation::Brute
                | Implementation::Tutorial
                | Implementation::QuadratPar
                | Implementation::QuadratLoop
        ) {
            runners.push(Runner::Split(i));
        }
    }
    runners
}

/// One measured point.
#[derive(Clone, Debug)]
pub(super) struct Point {
    scene: String,
    statics: usize,
    movers: usize,
    runner: String,
    ms: f64,
    contacts: usize,
}

fn play(runner: Runner, level: &mut Level, warmup: usize, frames: usize) -> (f64, Vec<Found>) {
    enum State {
        World(Box<World>),
        Ours(Box<QuadratSplit>),
        Peer(PeerSplit),
    }
    let mut state = match runner {
        Runner::World => State::World(Box::new(World::new(level))),
        Runner::Split(Implementation::Quadrat) => State::Ours(Box::new(QuadratSplit::new(level))),
        Runner::Split(i) => State::Peer(PeerSplit::new(i, level)),
    };
    let mut found = Vec::new();
    let mut samples = Vec::new();
    for f in 0..warmup + frames {
        level.advance();
        let (t, ()) = time(|| match &mut state {
            State::World(w) => {
                w.step(level);
            }
            State::Ours(s) => s.step(level, &mut found),
            State::Peer(s) => s.step(level, &mut found),
        });
        if f >= warmup {
            samples.push(t);
        }
    }
    let contacts = match &state {
        State::World(w) => w.contacts(),
        _ => {
            found.sort_unstable_by_key(|f| (f.0, f.1));
            found
        }
    };
    (median(&samples).as_secs_f64() * 1e3, contacts)
}

/// Runs the resting scenes and writes `resting.md`.
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
) -> Result<(), Error> {
    let statics: Vec<usize> = if settings.resting_ns.is_empty() {
        vec![8_000, 10_000, 100_000, 200_000, 1_000_000]
    } else {
        settings.resting_ns.clone()
    };
    let movers_ns = &settings.resting_movers;
    let runners = runners(&settings.implementations);
    let mut points = Vec::new();
    let mut scenes = Vec::new();
    for spread in [Spread::Confined, Spread::Everywhere] {
        for &nm in movers_ns {
            for &ns in &statics {
                scenes.push((spread, ns, nm));
            }
        }
    }
    for &n in &settings.brownian_ns {
        scenes.push((Spread::Brownian, 0, n));
    }
    for (spread, ns, nm) in scenes {
        let scene = spread.scene();
        let mut reference: Option<Vec<Found>> = None;
        let mut by = "brute force";
        let mut agree = Vec::new();
        let mut line = format!("  {scene} {ns} static + {nm} movers:");
        for &r in &runners {
            progress.start(format!("resting {scene} {ns}+{nm}: {}", r.name()));
            let mut level = Level::new(ns, nm, spread, settings.seed);
            let (ms, contacts) = play(r, &mut level, settings.warmup, settings.frames);
            progress.finish_step();
            // Every runner plays the same frames; the first one's
            // final state gives the reference: brute force while
            // affordable, else the first runner's (the world's).
            let expected = reference.get_or_insert_with(|| {
                if (ns + nm / 2) * nm <= 250_000_000 {
                    progress.start(format!("resting {scene} {ns}+{nm}: brute force"));
                    brute(&level)
                } else {
                    by = "the first";
                    contacts.clone()
                }
            });
            if *expected != contacts {
                return Err(Error::Mismatch(vec![super::Mismatch {
                    implementation: Implementation::Quadrat.name(),
                    reference: "brute force",
                    context: format!("resting {scene} {ns}+{nm}, {}", r.name()),
                    detail: format!(
                        "{} contacts expected, {} found",
                        expected.len(),
                        contacts.len()
                    ),
                }]));
            }
            agree.push(r.name());
            line += &format!(" {} {:.3}", r.name(), ms);
            points.push(Point {
                scene: scene.into(),
                statics: ns,
                movers: nm,
                runner: r.name(),
                ms,
                contacts: contacts.len(),
            });
        }
        progress.println(format!(
            "exact: resting {scene} {ns}+{nm}: {} contacts by {by}; agree: {}",
            reference.as_ref().map_or(0, Vec::len),
            agree.join(", ")
        ));
        progress.println(line + " ms per step");
    }
    let md = markdown(&points);
    results.note(super::Part::Resting, md.clone());
    write(&settings.out.join("resting.md"), &md)?;
    super::plot::write_resting(&points, &settings.out.join("resting.png"))?;
    Ok(())
}

fn markdown(points: &[Point]) -> String {
    let mut md = String::from(
        "| scene | static | movers | contacts | implementation | ms per step | ÷ quadrat world |\n|---|---:|---:|---:|---|---:|---:|\n",
    );
    for p in points {
        let world = points
            .iter()
            .find(|q| {
                q.scene == p.scene
                    && q.statics == p.statics
                    && q.movers == p.movers
                    && q.runner == "quadrat world"
            })
            .map_or(f64::NAN, |q| q.ms);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.3} | {:.2} |",
            p.scene,
            p.statics,
            p.movers,
            p.contacts,
            p.runner,
            p.ms,
            p.ms / world
        );
    }
    md
}

impl Point {
    /// A point with no contacts, for the plot's tests.
    #[cfg(test)]
    pub(super) fn new(scene: &str, statics: usize, movers: usize, runner: &str, ms: f64) -> Point {
        Point {
            scene: scene.to_owned(),
            statics,
            movers,
            runner: runner.to_owned(),
            ms,
            contacts: 0,
        }
    }
    pub(super) fn scene(&self) -> &str {
        &self.scene
    }
    pub(super) fn line(&self) -> String {
        format!("{}, {} movers", self.runner, super::fmt_n(self.movers))
    }
    pub(super) fn statics(&self) -> usize {
        self.statics
    }
    pub(super) fn ms(&self) -> f64 {
        self.ms
    }
}
