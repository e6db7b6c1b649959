//! The simulation behind the lab's page: objects (circles and boxes) moving
//! in a square world and bouncing off its border, a player steered from the
//! keyboard, a query rectangle and a picked object — and, every tick, the
//! broad phase (the quadtree, or brute force for comparison) and the exact
//! narrow phase ([`Shape::contact`]) on the pairs it finds.
//!
//! One [`Simulation`] runs per browser tab. It knows nothing of the network:
//! the server feeds it [`Settings`] and input and encodes what it holds into
//! frames.
//!
//! ```
//! use quadrat_lab::sim::{Settings, Simulation};
//! let mut sim = Simulation::new(Settings { count: 500, ..Settings::default() }).unwrap();
//! sim.set_query(Some(quadrat::Aabb::new([0.0, 0.0], [500.0, 500.0])));
//! sim.tick(true);
//! let figures = sim.figures();
//! assert_eq!(sim.count(), 500);
//! assert!(figures.query_hits > 0);
//! assert!(figures.checks < 500 * 499 / 2); // what the quadtree saved
//! ```

use std::time::{Duration, Instant};

use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{Aabb, Config, MAX_DEPTH, QuadTree, Shape, Vec2};

/// Side of the square world `[0, WORLD]²` the objects live in.
pub const WORLD: f32 = 1000.0;

/// The fewest objects a simulation holds.
pub const MIN_COUNT: usize = 10;

/// The most objects a simulation holds.
pub const MAX_COUNT: usize = 100_000;

/// The most objects brute force is asked to handle: beyond, its
/// `n (n − 1) / 2` pair tests a tick (12.5 million at this count) would
/// stall the page.
pub const BRUTE_FORCE_MAX: usize = 5_000;

/// The largest split threshold the lab accepts.
pub const MAX_ITEMS_LIMIT: usize = 1024;

/// The range of the size factor.
pub const SIZE_RANGE: (f32, f32) = (0.1, 10.0);

/// The range of the speed factor.
pub const SPEED_RANGE: (f32, f32) = (0.0, 20.0);

/// Simulated time per tick, in seconds: the simulation targets 60 ticks a
/// second, and each tick advances the world by the same step, so a slow
/// machine shows slow motion rather than jumps.
pub const DT: f32 = 1.0 / 60.0;

/// Speed of objects at speed factor 1, in world units per second (each
/// object gets between half and all of it).
const BASE_SPEED: f32 = 60.0;

/// Speed of the player, in world units per second.
const PLAYER_SPEED: f32 = 300.0;

/// Half the side of the (square) player.
const PLAYER_HALF: f32 = 18.0;

/// Mean number of other objects whose boxes overlap an object's box at
/// size factor 1 (uniform layout): sparse enough that collisions stand out.
const OVERLAPS: f32 = 0.5;

/// Objects are never larger than this side at size factor 1, however few
/// there are (the scenario's size grows as the count shrinks).
const MAX_NATURAL_SIDE: f32 = 30.0;

/// How pairs are found each tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BroadPhase {
    /// [`QuadTree::for_each_pair`]: only boxes that touch are compared.
    #[default]
    Quadtree,
    /// Every pair's boxes are compared: `n (n − 1) / 2` tests. Limited to
    /// [`BRUTE_FORCE_MAX`] objects.
    BruteForce,
}

impl BroadPhase {
    /// Both, in the order the page lists them.
    pub const ALL: [BroadPhase; 2] = [BroadPhase::Quadtree, BroadPhase::BruteForce];

    /// The name used on the wire: `quadtree` or `brute_force`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            BroadPhase::Quadtree => "quadtree",
            BroadPhase::BruteForce => "brute_force",
        }
    }
}

/// Everything the page can set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Number of moving objects ([`MIN_COUNT`] to [`MAX_COUNT`]); the player
    /// comes on top.
    pub count: usize,
    /// Factor on the objects' natural size ([`SIZE_RANGE`]).
    pub size: f32,
    /// Factor on the objects' natural speed ([`SPEED_RANGE`]).
    pub speed: f32,
    /// Where objects start and how big they are.
    pub layout: Layout,
    /// The tree's split threshold (1 to [`MAX_ITEMS_LIMIT`]).
    pub max_items: usize,
    /// The tree's deepest level (at most [`quadrat::MAX_DEPTH`]).
    pub max_depth: u8,
    /// How pairs are found.
    pub broad_phase: BroadPhase,
    /// Seed of the layout and of the objects' shapes and velocities.
    pub seed: u64,
}

/// The lab starts with a split threshold of 8 rather than the library's
/// tuned 32: a finer tree, more telling to look at. The page's slider
/// reaches both.
impl Default for Settings {
    fn default() -> Settings {
        Settings {
            count: 1_000,
            size: 1.0,
            speed: 1.0,
            layout: Layout::Uniform,
            max_items: 8,
            max_depth: Config::default().max_depth,
            broad_phase: BroadPhase::Quadtree,
            seed: 1,
        }
    }
}

impl Settings {
    /// Checks every value, and brute force against the count; the message
    /// names the field and its allowed range.
    ///
    /// ```
    /// use quadrat_lab::sim::{BroadPhase, Settings};
    /// assert!(Settings::default().validate().is_ok());
    /// let err = Settings { count: 1_000_000_000, ..Settings::default() }.validate().unwrap_err();
    /// assert_eq!(err, "count must be between 10 and 100,000 (got 1,000,000,000)");
    /// let brute = Settings { count: 20_000, broad_phase: BroadPhase::BruteForce, ..Settings::default() };
    /// assert!(brute.validate().unwrap_err().starts_with("brute force is limited to 5,000 objects"));
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_COUNT..=MAX_COUNT).contains(&self.count) {
            return Err(format!(
                "count must be between {} and {} (got {})",
                thousands(MIN_COUNT as u64),
                thousands(MAX_COUNT as u64),
                thousands(self.count as u64)
            ));
        }
        check_factor("size", self.size, SIZE_RANGE)?;
        check_factor("speed", self.speed, SPEED_RANGE)?;
        if !(1..=MAX_ITEMS_LIMIT).contains(&self.max_items) {
            return Err(format!(
                "max_items must be between 1 and {MAX_ITEMS_LIMIT} (got {})",
                self.max_items
            ));
        }
        if self.max_depth > MAX_DEPTH {
            return Err(format!(
                "max_depth must be at most {MAX_DEPTH} (got {})",
                self.max_depth
            ));
        }
        if self.broad_phase == BroadPhase::BruteForce && self.count > BRUTE_FORCE_MAX {
            let tests = BRUTE_FORCE_MAX as u64 * (BRUTE_FORCE_MAX as u64 - 1) / 2;
            return Err(format!(
                "brute force is limited to {} objects ({} pair tests a tick) so that it does not \
                 stall the page; {} objects need the quadtree",
                thousands(BRUTE_FORCE_MAX as u64),
                thousands(tests),
                thousands(self.count as u64)
            ));
        }
        Ok(())
    }

    fn config(&self) -> Config {
        Config {
            max_items: self.max_items,
            max_depth: self.max_depth,
            ..Config::default()
        }
    }
}

fn check_factor(field: &str, value: f32, (lo, hi): (f32, f32)) -> Result<(), String> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{field} must be between {lo} and {hi} (got {value})"
        ))
    }
}

/// The layout named `uniform`, `clustered` or `mixed` ([`Layout::name`]).
#[must_use]
pub fn layout_by_name(name: &str) -> Option<Layout> {
    Layout::ALL.into_iter().find(|l| l.name() == name)
}

/// `1234567` as `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What an object is this tick, as bits; the frame sends them as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Marks(pub u8);

impl Marks {
    /// The object is a box (otherwise a circle).
    pub const BOX: u8 = 1 << 0;
    /// The exact test finds it touching another object.
    pub const COLLIDING: u8 = 1 << 1;
    /// The query rectangle returns it.
    pub const IN_QUERY: u8 = 1 << 2;
    /// Its box touches the player's box: the player's candidate set.
    pub const CANDIDATE: u8 = 1 << 3;
    /// The exact test finds it touching the player.
    pub const CONTACT: u8 = 1 << 4;
    /// The object picked by the last click.
    pub const PICKED: u8 = 1 << 5;
    /// The player.
    pub const PLAYER: u8 = 1 << 6;
    /// One of the large objects of the mixed-sizes layout.
    pub const LARGE: u8 = 1 << 7;

    /// `true` when every bit of `bits` is set.
    #[must_use]
    pub fn has(self, bits: u8) -> bool {
        self.0 & bits == bits
    }
}

/// The figures of the last tick.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    /// Pairs of objects that touch (exact test), the player included.
    pub pairs: u32,
    /// Objects that touch at least one other.
    pub colliding: u32,
    /// Pairs whose boxes the broad phase compared and handed on: with the
    /// quadtree, the pairs whose boxes touch; with brute force, every pair.
    pub checks: u64,
    /// Pairs handed to the exact test (boxes touching).
    pub candidates: u64,
    /// Objects the query rectangle returns.
    pub query_hits: u32,
    /// Objects whose boxes touch the player's.
    pub player_candidates: u32,
    /// Objects the player touches (exact test).
    pub player_contacts: u32,
    /// Time to move the boxes in the tree ([`QuadTree::update_all`]).
    pub update: Duration,
    /// Time to find the pairs and run the exact test on each.
    pub pair_time: Duration,
    /// Nodes of the tree.
    pub nodes: u32,
    /// Deepest level of the tree.
    pub depth: u8,
}

/// One tab's world: objects, player, tree and the figures of the last tick.
///
/// Objects are indexed `0..count()`; the player is the last object, at
/// index [`count()`](Simulation::count). The tree stores every object's box
/// with its index as the value.
#[derive(Debug)]
pub struct Simulation {
    settings: Settings,
    tree: QuadTree<u32>,
    /// Per object, the player last.
    positions: Vec<Vec2>,
    velocities: Vec<Vec2>,
    /// Shape at size factor 1, then at the current size.
    natural: Vec<Shape>,
    /// One of the mixed layout's large objects, per object.
    large: Vec<bool>,
    shapes: Vec<Shape>,
    marks: Vec<Marks>,
    boxes: Vec<Aabb>,
    player_direction: Vec2,
    query: Option<Aabb>,
    picked: Option<(u32, f32)>,
    figures: Figures,
}

impl Simulation {
    /// A simulation with these settings, objects laid out and the tree
    /// built, not yet analysed (call [`tick`](Simulation::tick)).
    pub fn new(settings: Settings) -> Result<Simulation, String> {
        settings.validate()?;
        let mut sim = Simulation {
            settings,
            tree: QuadTree::with_config(world(), settings.config()),
            positions: Vec::new(),
            velocities: Vec::new(),
            natural: Vec::new(),
            large: Vec::new(),
            shapes: Vec::new(),
            marks: Vec::new(),
            boxes: Vec::new(),
            player_direction: Vec2::ZERO,
            query: None,
            picked: None,
            figures: Figures::default(),
        };
        sim.spawn(Vec2::splat(WORLD / 2.0));
        Ok(sim)
    }

    /// The current settings.
    #[must_use]
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Changes the settings, doing only the work each change needs: a new
    /// count, layout or seed lays the objects out afresh, a new size
    /// rescales them, a new `max_items` or `max_depth` rebuilds the tree.
    /// Invalid settings are refused with a message and change nothing.
    pub fn apply(&mut self, settings: Settings) -> Result<(), String> {
        settings.validate()?;
        let old = std::mem::replace(&mut self.settings, settings);
        if (old.count, old.layout, old.seed) != (settings.count, settings.layout, settings.seed) {
            self.picked = None;
            let player = self.positions[old.count];
            self.spawn(player);
        } else {
            if old.size != settings.size {
                self.resize();
            }
            if old.config() != settings.config() {
                self.build_tree();
            }
        }
        Ok(())
    }

    /// Number of moving objects (the player not included).
    #[must_use]
    pub fn count(&self) -> usize {
        self.settings.count
    }

    /// The direction the player moves in, each component in `[-1, 1]`
    /// (clamped); zero stops it.
    pub fn set_player_direction(&mut self, direction: Vec2) {
        self.player_direction =
            Vec2::new(direction.x.clamp(-1.0, 1.0), direction.y.clamp(-1.0, 1.0));
    }

    /// `true` while the player is steered somewhere.
    #[must_use]
    pub fn player_moving(&self) -> bool {
        self.player_direction != Vec2::ZERO
    }

    /// The player's centre.
    #[must_use]
    pub fn player(&self) -> Vec2 {
        self.positions[self.count()]
    }

    /// Sets or clears the query rectangle.
    pub fn set_query(&mut self, area: Option<Aabb>) {
        self.query = area;
    }

    /// The query rectangle, if any.
    #[must_use]
    pub fn query(&self) -> Option<Aabb> {
        self.query
    }

    /// Picks the object nearest to `p` (by the exact distance to its shape,
    /// through [`QuadTree::nearest_with`]), or clears the pick. Returns the
    /// picked index and its distance.
    pub fn pick(&mut self, p: Option<Vec2>) -> Option<(u32, f32)> {
        self.picked = p.and_then(|p| {
            let (positions, shapes) = (&self.positions, &self.shapes);
            let exact = |_, &i: &u32, _| {
                let i = i as usize;
                Some(shapes[i].distance_to_point(positions[i], p))
            };
            let (key, dist) = *self.tree.nearest_with(p, 1, exact).first()?;
            Some((self.tree[key], dist))
        });
        self.picked
    }

    /// The picked object's index and its distance from the click.
    #[must_use]
    pub fn picked(&self) -> Option<(u32, f32)> {
        self.picked
    }

    /// Object centres, the player last.
    #[must_use]
    pub fn positions(&self) -> &[Vec2] {
        &self.positions
    }

    /// Object shapes (at the current size), the player last.
    #[must_use]
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// What each object was in the last tick, the player last.
    #[must_use]
    pub fn marks(&self) -> &[Marks] {
        &self.marks
    }

    /// The broad phase's tree.
    #[must_use]
    pub fn tree(&self) -> &QuadTree<u32> {
        &self.tree
    }

    /// The figures of the last tick.
    #[must_use]
    pub fn figures(&self) -> Figures {
        self.figures
    }

    /// One tick: moves the objects by [`DT`] when `advance` (bouncing off
    /// the border), moves the player when steered, updates the tree, finds
    /// the touching pairs, and answers the query, the player's questions and
    /// the pick. With `advance` false, only the player moves: the page can
    /// explore a paused world.
    pub fn tick(&mut self, advance: bool) {
        let n = self.count();
        if advance {
            let speed = self.settings.speed * DT;
            for i in 0..n {
                let half = half_extents(&self.shapes[i]);
                let (p, v) = bounce(
                    self.positions[i] + self.velocities[i] * speed,
                    self.velocities[i],
                    half,
                );
                self.positions[i] = p;
                self.velocities[i] = v;
            }
        }
        if self.player_moving() {
            let step = self.player_direction * (PLAYER_SPEED * DT);
            let half = Vec2::splat(PLAYER_HALF);
            self.positions[n] = (self.positions[n] + step)
                .max(half)
                .min(Vec2::splat(WORLD) - half);
        }

        let start = Instant::now();
        for (b, (shape, &p)) in self
            .boxes
            .iter_mut()
            .zip(self.shapes.iter().zip(&self.positions))
        {
            *b = shape.aabb(p);
        }
        let boxes = &self.boxes;
        self.tree.update_all(|_, &i, _| boxes[i as usize]);
        let update = start.elapsed();

        for m in &mut self.marks {
            m.0 &= Marks::BOX | Marks::LARGE;
        }
        let start = Instant::now();
        let (checks, candidates, pairs) = match self.settings.broad_phase {
            BroadPhase::Quadtree => self.pairs_by_tree(),
            BroadPhase::BruteForce => self.pairs_by_brute_force(),
        };
        let pair_time = start.elapsed();

        let query_hits = self.mark_query();
        let (player_candidates, player_contacts) = self.mark_player();
        if let Some((i, _)) = self.picked {
            self.marks[i as usize].0 |= Marks::PICKED;
        }
        self.figures = Figures {
            pairs,
            colliding: self
                .marks
                .iter()
                .filter(|m| m.has(Marks::COLLIDING))
                .count() as u32,
            checks,
            candidates,
            query_hits,
            player_candidates,
            player_contacts,
            update,
            pair_time,
            nodes: self.tree.node_count() as u32,
            depth: self.tree.depth(),
        };
    }

    /// Pairs from the tree, each checked exactly: `(checks, candidates,
    /// touching)`, where checks and candidates are the same.
    fn pairs_by_tree(&mut self) -> (u64, u64, u32) {
        let (tree, positions, shapes, marks) =
            (&self.tree, &self.positions, &self.shapes, &mut self.marks);
        let (mut candidates, mut touching) = (0u64, 0u32);
        tree.for_each_pair(|a, b| {
            candidates += 1;
            let (i, j) = (tree[a] as usize, tree[b] as usize);
            if touch(shapes, positions, i, j) {
                touching += 1;
                marks[i].0 |= Marks::COLLIDING;
                marks[j].0 |= Marks::COLLIDING;
            }
        });
        (candidates, candidates, touching)
    }

    /// Every pair's boxes compared, and the exact test where they touch.
    fn pairs_by_brute_force(&mut self) -> (u64, u64, u32) {
        let (boxes, positions, shapes, marks) =
            (&self.boxes, &self.positions, &self.shapes, &mut self.marks);
        let (mut candidates, mut touching) = (0u64, 0u32);
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if boxes[i].intersects(&boxes[j]) {
                    candidates += 1;
                    if touch(shapes, positions, i, j) {
                        touching += 1;
                        marks[i].0 |= Marks::COLLIDING;
                        marks[j].0 |= Marks::COLLIDING;
                    }
                }
            }
        }
        let n = boxes.len() as u64;
        (n * (n - 1) / 2, candidates, touching)
    }

    /// Marks what the query rectangle returns; how many.
    fn mark_query(&mut self) -> u32 {
        let Some(area) = self.query else { return 0 };
        let mut hits = 0;
        for (_, &i) in self.tree.query(area) {
            self.marks[i as usize].0 |= Marks::IN_QUERY;
            hits += 1;
        }
        hits
    }

    /// Marks the player, its candidates (boxes touching its box) and its
    /// contacts (exact test); how many of each.
    fn mark_player(&mut self) -> (u32, u32) {
        let p = self.count();
        self.marks[p].0 |= Marks::PLAYER;
        let (mut candidates, mut contacts) = (0, 0);
        for (_, &i) in self.tree.query(self.boxes[p]) {
            let i = i as usize;
            if i == p {
                continue;
            }
            candidates += 1;
            self.marks[i].0 |= Marks::CANDIDATE;
            if touch(&self.shapes, &self.positions, p, i) {
                contacts += 1;
                self.marks[i].0 |= Marks::CONTACT;
            }
        }
        (candidates, contacts)
    }

    /// Lays out `count` objects from the scenario, with the player at
    /// `player`, and builds the tree.
    fn spawn(&mut self, player: Vec2) {
        let s = self.settings;
        let scenario = Scenario::with_overlaps(s.layout, s.count, s.seed, OVERLAPS);
        let scale = (MAX_NATURAL_SIDE / scenario.size).min(1.0);
        let mut rng = Rng::new(s.seed ^ 0x1AB5_1AB5);
        let mut shape_of = |half: f32| {
            if rng.below(2) == 0 {
                Shape::Circle { radius: half }
            } else {
                let aspect = rng.range(0.7, 1.4);
                Shape::Aabb {
                    half_extents: Vec2::new(half * aspect, half / aspect),
                }
            }
        };
        let boxes = scenario.boxes();
        self.natural = boxes
            .iter()
            .map(|b| shape_of(b.width() / 2.0 * scale))
            .collect();
        self.natural.push(Shape::Aabb {
            half_extents: Vec2::splat(PLAYER_HALF),
        });
        self.large = boxes
            .iter()
            .map(|b| b.width() > 2.0 * scenario.size)
            .collect();
        self.large.push(false);
        self.positions = boxes.iter().map(Aabb::center).collect();
        self.positions.push(player);
        self.velocities = (0..s.count)
            .map(|_| {
                let angle = rng.range(0.0, core::f32::consts::TAU);
                Vec2::new(angle.cos(), angle.sin()) * (BASE_SPEED * rng.range(0.5, 1.0))
            })
            .collect();
        self.velocities.push(Vec2::ZERO);
        self.resize();
        self.build_tree();
    }

    /// Recomputes the shapes (and marks and boxes) from the natural shapes
    /// and the size factor; the player keeps its size.
    fn resize(&mut self) {
        let size = self.settings.size;
        let n = self.count();
        self.shapes = self.natural.iter().map(|s| scaled(s, size)).collect();
        self.shapes[n] = self.natural[n];
        self.marks = self
            .shapes
            .iter()
            .zip(&self.large)
            .map(|(s, &large)| {
                let shape = if matches!(s, Shape::Aabb { .. }) {
                    Marks::BOX
                } else {
                    0
                };
                Marks(shape | if large { Marks::LARGE } else { 0 })
            })
            .collect();
        self.boxes = self
            .shapes
            .iter()
            .zip(&self.positions)
            .map(|(s, &p)| s.aabb(p))
            .collect();
    }

    /// A new tree with the current configuration, holding every object.
    fn build_tree(&mut self) {
        let mut tree = QuadTree::with_config(world(), self.settings.config());
        tree.insert_many(self.boxes.iter().enumerate().map(|(i, &b)| (b, i as u32)));
        self.tree = tree;
    }
}

/// The world box.
fn world() -> Aabb {
    Aabb::new([0.0, 0.0], [WORLD, WORLD])
}

/// The exact test between objects `i` and `j`.
fn touch(shapes: &[Shape], positions: &[Vec2], i: usize, j: usize) -> bool {
    shapes[i]
        .contact(positions[i], &shapes[j], positions[j])
        .is_some()
}

/// Half the size of a circle's or a box's bounding box.
fn half_extents(shape: &Shape) -> Vec2 {
    match *shape {
        Shape::Circle { radius } => Vec2::splat(radius),
        Shape::Aabb { half_extents } => half_extents,
        _ => Vec2::ZERO,
    }
}

/// A circle or box scaled by `factor`.
fn scaled(shape: &Shape, factor: f32) -> Shape {
    match *shape {
        Shape::Circle { radius } => Shape::Circle {
            radius: radius * factor,
        },
        Shape::Aabb { half_extents } => Shape::Aabb {
            half_extents: half_extents * factor,
        },
        other => other,
    }
}

/// Keeps an object of half size `half` inside the world: an object past a
/// wall is put back against it and its velocity turned away from it. An
/// object larger than the world stays centred on that axis.
fn bounce(mut p: Vec2, mut v: Vec2, half: Vec2) -> (Vec2, Vec2) {
    let axis = |p: &mut f32, v: &mut f32, h: f32| {
        if 2.0 * h >= WORLD {
            *p = WORLD / 2.0;
        } else if *p - h < 0.0 {
            *p = h;
            *v = v.abs();
        } else if *p + h > WORLD {
            *p = WORLD - h;
            *v = -v.abs();
        }
    };
    axis(&mut p.x, &mut v.x, half.x);
    axis(&mut p.y, &mut v.y, half.y);
    (p, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim(settings: Settings) -> Simulation {
        Simulation::new(settings).unwrap()
    }

    #[test]
    fn objects_stay_inside_the_world() {
        let mut s = sim(Settings {
            count: 300,
            speed: 20.0,
            size: 3.0,
            ..Settings::default()
        });
        for _ in 0..200 {
            s.tick(true);
        }
        for (p, shape) in s.positions().iter().zip(s.shapes()) {
            let b = shape.aabb(*p);
            assert!(
                b.min.x >= 0.0 && b.min.y >= 0.0 && b.max.x <= WORLD && b.max.y <= WORLD,
                "{b:?}"
            );
        }
    }

    #[test]
    fn quadtree_and_brute_force_agree_on_every_mark() {
        for layout in Layout::ALL {
            let settings = Settings {
                count: 1_500,
                layout,
                size: 2.0,
                max_items: 4,
                ..Settings::default()
            };
            let mut tree = sim(settings);
            let mut brute = sim(Settings {
                broad_phase: BroadPhase::BruteForce,
                ..settings
            });
            // Around an object: clustered layouts leave much of the world empty.
            let area = Aabb::from_center(tree.positions()[0], [150.0, 120.0]);
            for s in [&mut tree, &mut brute] {
                s.set_query(Some(area));
                s.set_player_direction(Vec2::new(1.0, 0.5));
                for _ in 0..5 {
                    s.tick(true);
                }
            }
            let (a, b) = (tree.figures(), brute.figures());
            assert_eq!(tree.marks(), brute.marks());
            assert_eq!(
                (a.pairs, a.colliding, a.candidates),
                (b.pairs, b.colliding, b.candidates)
            );
            assert_eq!(b.checks, 1_501 * 1_500 / 2);
            assert!(a.checks < b.checks / 50, "{} vs {}", a.checks, b.checks);
            assert!(a.pairs > 0 && a.query_hits > 0);
            tree.tree().validate().unwrap();
        }
    }

    #[test]
    fn colliding_marks_match_the_exact_test() {
        let mut s = sim(Settings {
            count: 400,
            size: 3.0,
            ..Settings::default()
        });
        s.tick(true);
        let n = s.positions().len();
        let mut expected = vec![false; n];
        let mut pairs = 0;
        for i in 0..n {
            for j in i + 1..n {
                if s.shapes()[i]
                    .contact(s.positions()[i], &s.shapes()[j], s.positions()[j])
                    .is_some()
                {
                    expected[i] = true;
                    expected[j] = true;
                    pairs += 1;
                }
            }
        }
        let marked: Vec<bool> = s.marks().iter().map(|m| m.has(Marks::COLLIDING)).collect();
        assert_eq!(marked, expected);
        assert_eq!(s.figures().pairs, pairs);
    }

    #[test]
    fn player_moves_and_stays_inside() {
        let mut s = sim(Settings::default());
        let start = s.player();
        s.set_player_direction(Vec2::new(1.0, 0.0));
        s.tick(false);
        assert!((s.player().x - start.x - PLAYER_SPEED * DT).abs() < 1e-3);
        for _ in 0..400 {
            s.tick(false);
        }
        assert_eq!(s.player().x, WORLD - PLAYER_HALF);
        let p = s.count();
        assert!(s.marks()[p].has(Marks::PLAYER | Marks::BOX));
    }

    #[test]
    fn pick_finds_the_object_under_the_click() {
        let mut s = sim(Settings {
            count: 100,
            ..Settings::default()
        });
        s.tick(false);
        let target = s.positions()[42];
        let (i, dist) = s.pick(Some(target)).unwrap();
        assert_eq!(dist, 0.0);
        assert!(s.shapes()[i as usize].contains_point(s.positions()[i as usize], target));
        s.tick(false);
        assert!(s.marks()[i as usize].has(Marks::PICKED));
        assert_eq!(s.pick(None), None);
    }

    #[test]
    fn apply_refuses_invalid_settings_and_keeps_the_old_ones() {
        let mut s = sim(Settings::default());
        let before = s.settings();
        for bad in [
            Settings { count: 5, ..before },
            Settings {
                size: f32::NAN,
                ..before
            },
            Settings {
                size: -1.0,
                ..before
            },
            Settings {
                speed: f32::INFINITY,
                ..before
            },
            Settings {
                max_items: 0,
                ..before
            },
            Settings {
                max_depth: MAX_DEPTH + 1,
                ..before
            },
            Settings {
                count: 6_000,
                broad_phase: BroadPhase::BruteForce,
                ..before
            },
        ] {
            assert!(s.apply(bad).is_err(), "{bad:?}");
            assert_eq!(s.settings(), before);
            assert_eq!(s.positions().len(), before.count + 1);
        }
    }

    #[test]
    fn apply_does_what_each_change_needs() {
        let mut s = sim(Settings::default());
        s.tick(true);
        let positions = s.positions().to_vec();
        s.apply(Settings {
            size: 2.0,
            ..s.settings()
        })
        .unwrap();
        assert_eq!(s.positions(), &positions[..]);
        s.apply(Settings {
            max_items: 2,
            max_depth: 3,
            ..s.settings()
        })
        .unwrap();
        assert_eq!(s.positions(), &positions[..]);
        assert_eq!(s.tree().config().max_items, 2);
        s.apply(Settings {
            count: 50,
            ..s.settings()
        })
        .unwrap();
        assert_eq!(s.positions().len(), 51);
        assert_eq!(s.tree().len(), 51);
        s.tick(true);
        s.tree().validate().unwrap();
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
