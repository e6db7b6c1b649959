//! The simulation behind the lab's page: objects (circles and boxes) moving
//! in a square world and bouncing off its border, a player steered from the
//! keyboard, a query rectangle and a picked object — and, every tick, the
//! broad phase (the quadtree, or brute force for comparison) and the exact
//! narrow phase ([`Shape::contact`]) on the pairs it finds.
//!
//! The "level" scene is a tile map instead: static wall tiles and the
//! movers and player in one [`CollisionWorld`], whose step costs only what
//! moved (the tiles at rest cost nothing), movers bouncing off the walls
//! and the player blocked by them.
//!
//! Each tick also measures what the broad phase's work is worth: the box
//! tests of the tree's pair walk ([`QuadTree::pair_stats`]) against a
//! plain sort-and-sweep over every box and against brute force, `n (n −
//! 1) / 2` tests, each timed (brute force on a sample of rows above
//! [`BRUTE_FORCE_MAX`] objects, scaled up, and marked as estimated).
//!
//! One [`Simulation`] runs per browser tab. It knows nothing of the network:
//! the server feeds it [`Settings`] and input and encodes what it holds into
//! frames.
//!
//! ```
//! use quadrat_lab::sim::{Settings, Simulation};
//! let mut sim = Simulation::new(Settings { count: 500, ..Settings::default() }).unwrap();
//! sim.set_query(Some(quadrat::Aabb::new([0.0, 0.0], [500.0, 500.0])));
//! for _ in 0..6 {
//!     sim.tick(true); // the comparisons take turns over six ticks
//! }
//! let figures = sim.figures();
//! assert_eq!(sim.count(), 500);
//! assert!(figures.query_hits > 0);
//! let compare = figures.compare;
//! assert_eq!(compare.brute_tests, 501 * 500 / 2); // the player is an object too
//! assert!(compare.tree.box_tests < compare.sweep_tests); // what the quadtree saved
//! assert!(compare.sweep_tests < compare.brute_tests);
//! ```

use std::time::{Duration, Instant};

use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{
    Aabb, CollisionWorld, Config, Filter, Key, Layers, MAX_DEPTH, PairStats, QuadTree, Shape, Vec2,
};

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

/// The most static tiles the level scene holds.
pub const TILES_MAX: usize = 1_000_000;

/// The most bodies (tiles, movers and the player) the level scene holds per
/// cell of its deepest level, `4^max_depth` cells in all: a shallower tree
/// than that leaves each mover to test thousands of tiles every tick (at
/// `max_depth` 0, every one), and building and stepping the level takes
/// seconds, even minutes. The same figure as [`BRUTE_FORCE_MAX`].
pub const LEVEL_CELL_MAX: usize = BRUTE_FORCE_MAX;

/// The most movers times the size factor in the level scene. Its movers are
/// circles of a fixed radius (5 world units) times the size factor, spread
/// over the whole world, so the pairs that touch grow as (count × size)²:
/// about 1.6 to 1.8 million a tick at this bound (100,000 movers at size
/// 1, or 10,000 at size 10), and a tab of them without tiles peaks at about
/// 300 MB. Past it, one tab could ask for tens of gigabytes (100,000
/// movers at size 10: about 160 million pairs) and minutes a tick.
pub const LEVEL_CROWD_MAX: f32 = 100_000.0;

/// The fastest speed factor of the level's movers: at most 5 world units a
/// tick, under half a wall's thickness. Faster, a large mover sinks deep
/// into a wall of small tiles within one tick and touches thousands of
/// them: 10,000 movers at size 10 over 1M tiles touch 2.1 million pairs a
/// tick at speed 5 and 4.9 million at speed 20, where a tab peaks at 1.7 GB
/// against 0.8.
pub const LEVEL_SPEED_MAX: f32 = 5.0;

/// Pairs of the object scenes that weigh as much as one body in memory
/// ([`Settings::weight`]): a tick keeps each candidate pair (two boxes that
/// overlap) as two indices, 8 bytes (up to 16 while their vector grows),
/// where a body takes about 200 to 340 bytes. Measured: 100,000 mixed
/// objects at size 10 make 30.4 million candidates and peak at 254 MB,
/// against 20 MB at size 1.
pub const OBJECT_PAIRS_PER_BODY: u64 = 20;

/// Touching pairs of the level that weigh as much as one body in memory
/// ([`Settings::weight`]): the collision world keeps each contact of its
/// last step and the lab a copy, about 170 bytes a pair. Measured: 100,000
/// movers at size 1 make 1.6 million pairs and peak at 304 MB, against 34
/// MB at size 0.1.
pub const LEVEL_PAIRS_PER_BODY: u64 = 2;

/// How many ticks one round of the comparisons takes: the tree's counted
/// walk, the sort-and-sweep and brute force each run once a round, on
/// different ticks, so that no tick pays for all three.
const COMPARE_EVERY: u64 = 6;

/// Brute force is timed on a sample of rows when all of them would make
/// more box tests than this.
const BRUTE_SAMPLE_TESTS: u64 = 2_000_000;

/// A tile's value in the level's world has this bit set (movers and the
/// player have their index).
const TILE: u32 = 1 << 31;

/// Layers of the level scene: walls meet movers and the player, never
/// each other.
const WALL: Layers = Layers::bit(0);
const MOVER: Layers = Layers::bit(1);

/// Radius of a level mover at size factor 1.
const MOVER_RADIUS: f32 = 5.0;

/// The level's rooms: a grid of this many by this many, with doors.
const ROOMS: usize = 5;

/// Width of a door between two rooms, and the least thickness of a wall.
const DOOR: f32 = 70.0;
const WALL_THICKNESS: f32 = 12.0;

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

/// What the world holds: objects laid out by a [`Layout`], or the level,
/// a tile map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scene {
    /// Objects laid out by [`quadrat::scenario`], bouncing off the border.
    Objects(Layout),
    /// Static wall tiles in a [`CollisionWorld`], movers bouncing off them
    /// and the player walking through.
    Level,
}

impl Scene {
    /// Every scene, in the order the page lists them.
    pub const ALL: [Scene; 4] = [
        Scene::Objects(Layout::Uniform),
        Scene::Objects(Layout::Clustered),
        Scene::Objects(Layout::MixedSizes),
        Scene::Level,
    ];

    /// The name used on the wire: the layout's name ([`Layout::name`]) or
    /// `level`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Scene::Objects(layout) => layout.name(),
            Scene::Level => "level",
        }
    }

    /// The scene called `name`.
    #[must_use]
    pub fn by_name(name: &str) -> Option<Scene> {
        Scene::ALL.into_iter().find(|s| s.name() == name)
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
    /// Where objects start and how big they are, or the level.
    pub scene: Scene,
    /// Static tiles of the level scene (0 to [`TILES_MAX`]).
    pub tiles: usize,
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
            scene: Scene::Objects(Layout::Uniform),
            tiles: 20_000,
            max_items: 8,
            max_depth: Config::default().max_depth,
            broad_phase: BroadPhase::Quadtree,
            seed: 1,
        }
    }
}

impl Settings {
    /// Checks every value, brute force against the count, the level's
    /// movers against [`LEVEL_CROWD_MAX`], and the level's `max_depth`
    /// against its bodies (at most [`LEVEL_CELL_MAX`] per cell of the
    /// deepest level); the message names the field and its allowed range.
    ///
    /// ```
    /// use quadrat_lab::sim::{BroadPhase, Scene, Settings};
    /// assert!(Settings::default().validate().is_ok());
    /// let err = Settings { count: 1_000_000_000, ..Settings::default() }.validate().unwrap_err();
    /// assert_eq!(err, "count must be between 10 and 100,000 (got 1,000,000,000)");
    /// let brute = Settings { count: 20_000, broad_phase: BroadPhase::BruteForce, ..Settings::default() };
    /// assert!(brute.validate().unwrap_err().starts_with("brute force is limited to 5,000 objects"));
    /// let crowd = Settings { scene: Scene::Level, count: 20_000, size: 10.0, ..Settings::default() };
    /// assert!(crowd.validate().unwrap_err().starts_with("the level's 20,000 movers at size 10 would touch"));
    /// let flat = Settings { scene: Scene::Level, count: 20_000, tiles: 200_000, max_depth: 0, ..Settings::default() };
    /// assert!(flat.validate().unwrap_err().starts_with("the level's 220,001 bodies need max_depth 3 or more"));
    /// assert!(Settings { max_depth: 3, ..flat }.validate().is_ok());
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
        if self.tiles > TILES_MAX {
            return Err(format!(
                "tiles must be at most {} (got {})",
                thousands(TILES_MAX as u64),
                thousands(self.tiles as u64)
            ));
        }
        if self.broad_phase == BroadPhase::BruteForce && self.scene == Scene::Level {
            return Err(
                "the level scene finds its pairs with the collision world: choose the quadtree"
                    .to_owned(),
            );
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
        if self.scene == Scene::Level && self.speed > LEVEL_SPEED_MAX {
            return Err(format!(
                "the level's movers go at most speed {LEVEL_SPEED_MAX} (got {}): faster, they sink \
                 into the walls' tiles within a tick and touch thousands of them; lower the speed",
                self.speed
            ));
        }
        if self.scene == Scene::Level && self.count as f32 * self.size > LEVEL_CROWD_MAX {
            let pairs = self.level_mover_pairs();
            return Err(format!(
                "the level's {} movers at size {} would touch about {} pairs a tick; count × \
                 size must be at most {} (about 1.6 million pairs): fewer or smaller movers",
                thousands(self.count as u64),
                self.size,
                thousands(pairs as u64),
                thousands(LEVEL_CROWD_MAX as u64)
            ));
        }
        if self.scene == Scene::Level {
            let bodies = self.bodies();
            let cells = |depth: u8| 1u64 << (2 * u32::from(depth));
            let fits = |depth: u8| bodies <= LEVEL_CELL_MAX as u64 * cells(depth);
            if !fits(self.max_depth) {
                let least = (0..=MAX_DEPTH).find(|&d| fits(d)).unwrap_or(MAX_DEPTH);
                return Err(format!(
                    "the level's {} bodies need max_depth {least} or more: at max_depth {} its \
                     tree has at most {} cell{} for them, and more than {} bodies a cell would \
                     stall the page; fewer tiles or movers allow a shallower tree",
                    thousands(bodies),
                    self.max_depth,
                    thousands(cells(self.max_depth)),
                    if self.max_depth == 0 { "" } else { "s" },
                    thousands(LEVEL_CELL_MAX as u64)
                ));
            }
        }
        Ok(())
    }

    /// The bodies these settings hold: the movers and the player, and in
    /// the level scene its tiles too. A session's memory grows with them
    /// (the server bounds their sum over its sessions).
    ///
    /// ```
    /// use quadrat_lab::sim::{Scene, Settings};
    /// assert_eq!(Settings::default().bodies(), 1_001);
    /// let level = Settings { scene: Scene::Level, ..Settings::default() };
    /// assert_eq!(level.bodies(), 21_001);
    /// ```
    #[must_use]
    pub fn bodies(&self) -> u64 {
        let tiles = if self.scene == Scene::Level {
            self.tiles
        } else {
            0
        };
        (self.count + 1 + tiles) as u64
    }

    /// About how many pairs a tick keeps with these settings, erring high:
    /// what a session's memory grows with beyond its bodies. In the object
    /// scenes, the candidate pairs (boxes that overlap); in the level, the
    /// world's contacts. An estimate from the scene's shape, fitted to what
    /// the scenes make: a test holds it above them, and below twice them
    /// plus 100,000, for every scene from 10 to 5,000 movers at sizes 0.1
    /// to 10 and speeds 1 and 5 (the level's fastest, [`LEVEL_SPEED_MAX`];
    /// faster, movers sink into walls and it would not hold), and for a
    /// level over 1M tiles.
    ///
    /// - The object scenes: `count × (k × size² + 0.05)`, `k` 0.3 for the
    ///   uniform layout (its objects are sized to overlap about 0.5 others
    ///   at size 1), 2.5 for the clustered and 3.2 for mixed sizes.
    /// - The level: its movers are discs of radius 5 × size spread over
    ///   the world, so `1.4 × count²/2 × π (10 × size)² / 1000²` pairs of
    ///   movers, and `count × (0.4 × size² + 1)` for those touching the
    ///   walls and the player.
    ///
    /// ```
    /// use quadrat::scenario::Layout;
    /// use quadrat_lab::sim::{Scene, Settings};
    /// assert_eq!(Settings::default().expected_pairs(), 350);
    /// let crowd = Settings { scene: Scene::Objects(Layout::MixedSizes), count: 100_000, size: 10.0, ..Settings::default() };
    /// assert_eq!(crowd.expected_pairs(), 32_005_000);
    /// ```
    #[must_use]
    pub fn expected_pairs(&self) -> u64 {
        let n = self.count as f64;
        let size = f64::from(self.size);
        let pairs = match self.scene {
            Scene::Objects(layout) => {
                let k = match layout {
                    Layout::Uniform => 0.3,
                    Layout::Clustered => 2.5,
                    Layout::MixedSizes => 3.2,
                };
                n * (k * size * size + 0.05)
            }
            Scene::Level => 1.4 * self.level_mover_pairs() + n * (0.4 * size * size + 1.0),
        };
        pairs.round() as u64
    }

    /// What these settings weigh on the server's bound
    /// ([`Options::max_bodies`](crate::serve::Options::max_bodies)), in
    /// bodies: [`Settings::bodies`], and the [`Settings::expected_pairs`]
    /// past one a body at what they take in memory, one body for every
    /// [`OBJECT_PAIRS_PER_BODY`] pairs in the object scenes or
    /// [`LEVEL_PAIRS_PER_BODY`] in the level. A sparse scene weighs its
    /// bodies alone.
    ///
    /// ```
    /// use quadrat::scenario::Layout;
    /// use quadrat_lab::sim::{Scene, Settings};
    /// assert_eq!(Settings::default().weight(), 1_001);
    /// let crowd = Settings { scene: Scene::Objects(Layout::MixedSizes), count: 100_000, size: 10.0, ..Settings::default() };
    /// assert_eq!(crowd.weight(), 100_001 + (32_005_000 - 100_001_u64).div_ceil(20));
    /// ```
    #[must_use]
    pub fn weight(&self) -> u64 {
        let bodies = self.bodies();
        let per_body = match self.scene {
            Scene::Objects(_) => OBJECT_PAIRS_PER_BODY,
            Scene::Level => LEVEL_PAIRS_PER_BODY,
        };
        bodies
            + self
                .expected_pairs()
                .saturating_sub(bodies)
                .div_ceil(per_body)
    }

    /// The level's movers are uniform discs of radius r: two touch when
    /// their centres are within 2r, `n²/2 × π (2r)² / WORLD²` pairs.
    fn level_mover_pairs(&self) -> f64 {
        let diameter = 2.0 * f64::from(MOVER_RADIUS) * f64::from(self.size);
        let n = self.count as f64;
        n * n / 2.0 * core::f64::consts::PI * diameter * diameter / f64::from(WORLD * WORLD)
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
    /// Pairs of objects that touch (exact test), the player included; in
    /// the level, every contact the world's step reports (walls included).
    pub pairs: u32,
    /// Objects that touch at least one other (or a wall).
    pub colliding: u32,
    /// Box tests the broad phase made this tick: with the quadtree, those
    /// of its pair walk (as last counted, see [`Comparison::tree`]); with
    /// brute force, every pair.
    pub checks: u64,
    /// Pairs handed to the exact test (boxes touching).
    pub candidates: u64,
    /// Objects the query rectangle returns.
    pub query_hits: u32,
    /// Objects whose boxes touch the player's.
    pub player_candidates: u32,
    /// Objects the player touches (exact test).
    pub player_contacts: u32,
    /// Time to move the boxes in the tree ([`QuadTree::update_all`]), or
    /// the bodies in the level's world.
    pub update: Duration,
    /// Time to find the pairs and run the exact test on each.
    pub pair_time: Duration,
    /// Time of the broad phase alone this tick: the tree's pair walk, or
    /// brute force's loops.
    pub broad_time: Duration,
    /// Time of the exact tests alone this tick.
    pub exact_time: Duration,
    /// Nodes of the tree. (Its depth is not a figure of the tick: finding
    /// it walks every node, so the frame encoder reads it off the walk it
    /// makes anyway.)
    pub nodes: u32,
    /// What finding the pairs costs three ways, measured in turns.
    pub compare: Comparison,
    /// The level scene's step.
    pub level: LevelFigures,
}

/// The same pairs found three ways, counted and timed: the tree's pair
/// walk, a plain sort-and-sweep over every box, and brute force. Each is
/// measured once every few ticks (one of them a tick), so the figures are
/// at most that old.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Comparison {
    /// The tree's walk, counted by [`QuadTree::pair_stats`]; zero in
    /// brute-force mode (no tree is kept) and in the level.
    pub tree: PairStats,
    /// Time of the tree's walk (collecting the candidate pairs).
    pub tree_time: Duration,
    /// Box tests of a sort-and-sweep over every box: sorted by `min.x`,
    /// each box against the following ones until one starts right of its
    /// end.
    pub sweep_tests: u64,
    /// Time of the sort-and-sweep, the sort included.
    pub sweep_time: Duration,
    /// Box tests of brute force: `n (n − 1) / 2`.
    pub brute_tests: u64,
    /// Time of brute force's box tests.
    pub brute_time: Duration,
    /// `brute_time` is estimated from a sample of rows (too many objects to
    /// run them all every few ticks).
    pub brute_estimated: bool,
}

/// What the level scene's step did this tick ([`quadrat::Events`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelFigures {
    /// Static tiles in the level.
    pub tiles: u32,
    /// Bodies that moved (changed) since the last step.
    pub moved: u32,
    /// Pairs the step's broad phase examined: only pairs with a moved body
    /// (or every pair, when it took the full pass).
    pub candidates: u32,
    /// Exact tests the step ran.
    pub exact_tests: u32,
    /// The step took the full pass over the tree (too many bodies moved
    /// for one query each).
    pub full_pass: bool,
}

/// The level scene's state: its world, the tiles as drawn, and which of
/// them some body touches.
#[derive(Debug)]
struct Level {
    world: CollisionWorld<u32>,
    /// Per object (the player last), its body's key.
    keys: Vec<Key>,
    tiles: Vec<Aabb>,
    version: u32,
    touched: Vec<u32>,
    contacts: Vec<(u32, u32, quadrat::Contact)>,
    /// Per object, its deepest contact with a wall this tick: the depth
    /// and the direction out of the wall.
    deepest: Vec<(f32, Vec2)>,
}

/// One tab's world: objects, player, tree and the figures of the last tick.
///
/// Objects are indexed `0..count()`; the player is the last object, at
/// index [`count()`](Simulation::count). The tree stores every object's box
/// with its index as the value (in the level, the world's tree also holds
/// the tiles).
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
    /// This tick's candidate pairs, between the broad phase and the exact
    /// test.
    candidates: Vec<(u32, u32)>,
    /// The objects by `min.x`, as the last sort-and-sweep left them.
    sweep_order: Vec<u32>,
    ticks: u64,
    compare: Comparison,
    level: Option<Level>,
    /// Version of the level's tiles: a new one for each new level.
    tiles_version: u32,
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
            candidates: Vec::new(),
            sweep_order: Vec::new(),
            ticks: 0,
            compare: Comparison::default(),
            level: None,
            tiles_version: 0,
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
    /// count, scene or seed lays the objects out afresh, a new size
    /// rescales them, a new `max_items` or `max_depth` rebuilds the tree
    /// (in the level, any of these and a new tile count build a new level).
    /// Invalid settings are refused with a message and change nothing.
    pub fn apply(&mut self, settings: Settings) -> Result<(), String> {
        settings.validate()?;
        let old = std::mem::replace(&mut self.settings, settings);
        let level_changed = settings.scene == Scene::Level
            && (old.size, old.tiles, old.config())
                != (settings.size, settings.tiles, settings.config());
        if (old.count, old.scene, old.seed) != (settings.count, settings.scene, settings.seed)
            || level_changed
        {
            self.picked = None;
            let player = self.positions[old.count];
            self.compare = Comparison::default();
            self.spawn(player);
        } else {
            if old.size != settings.size {
                self.resize();
            }
            if old.config() != settings.config() {
                self.compare = Comparison::default();
                self.build_tree();
            }
            if old.broad_phase != settings.broad_phase {
                self.compare = Comparison::default();
                if settings.broad_phase == BroadPhase::Quadtree {
                    self.build_tree();
                }
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
    /// through [`QuadTree::nearest_with`]; by every object in brute-force
    /// mode, where no tree is kept), or clears the pick. Tiles are never
    /// picked. Returns the picked index and its distance.
    pub fn pick(&mut self, p: Option<Vec2>) -> Option<(u32, f32)> {
        let (positions, shapes) = (&self.positions, &self.shapes);
        self.picked = p.and_then(|p| {
            if self.settings.broad_phase == BroadPhase::BruteForce {
                return (0..positions.len())
                    .map(|i| (i as u32, shapes[i].distance_to_point(positions[i], p)))
                    .min_by(|a, b| a.1.total_cmp(&b.1));
            }
            let tree = self.level.as_ref().map_or(&self.tree, |l| l.world.tree());
            let exact = |_, &i: &u32, _| {
                if i & TILE != 0 {
                    return None;
                }
                let i = i as usize;
                Some(shapes[i].distance_to_point(positions[i], p))
            };
            let (key, dist) = *tree.nearest_with(p, 1, exact).first()?;
            Some((tree[key], dist))
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

    /// The broad phase's tree: in the level, the world's (tiles included,
    /// their values with the top bit set). Not kept up to date in
    /// brute-force mode, where [`Simulation::tree_kept`] is `false`.
    #[must_use]
    pub fn tree(&self) -> &QuadTree<u32> {
        self.level.as_ref().map_or(&self.tree, |l| l.world.tree())
    }

    /// `false` in brute-force mode: the tree is then neither updated nor
    /// meaningful.
    #[must_use]
    pub fn tree_kept(&self) -> bool {
        self.settings.broad_phase == BroadPhase::Quadtree
    }

    /// The level's static tiles (empty in the other scenes), and their
    /// version: a new one whenever the tiles change.
    #[must_use]
    pub fn tiles(&self) -> (&[Aabb], u32) {
        match &self.level {
            Some(level) => (&level.tiles, level.version),
            None => (&[], 0),
        }
    }

    /// The indices of the tiles some body touched in the last tick, in
    /// order.
    #[must_use]
    pub fn touched_tiles(&self) -> &[u32] {
        self.level.as_ref().map_or(&[], |l| &l.touched)
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
    /// explore a paused world. In brute-force mode the tree is left alone.
    pub fn tick(&mut self, advance: bool) {
        self.ticks += 1;
        if self.level.is_some() {
            self.tick_level(advance);
            return;
        }
        self.move_objects(advance);

        let start = Instant::now();
        for (b, (shape, &p)) in self
            .boxes
            .iter_mut()
            .zip(self.shapes.iter().zip(&self.positions))
        {
            *b = shape.aabb(p);
        }
        let brute = !self.tree_kept();
        if !brute {
            let boxes = &self.boxes;
            self.tree.update_all(|_, &i, _| boxes[i as usize]);
        }
        let update = start.elapsed();

        for m in &mut self.marks {
            m.0 &= Marks::BOX | Marks::LARGE;
        }
        let start = Instant::now();
        self.candidates.clear();
        if brute {
            let boxes = &self.boxes;
            for i in 0..boxes.len() {
                for j in i + 1..boxes.len() {
                    if boxes[i].intersects(&boxes[j]) {
                        self.candidates.push((i as u32, j as u32));
                    }
                }
            }
        } else {
            let (tree, candidates) = (&self.tree, &mut self.candidates);
            tree.for_each_pair(|a, b| candidates.push((tree[a], tree[b])));
        }
        let broad_time = start.elapsed();
        let start = Instant::now();
        let mut pairs = 0;
        for &(i, j) in &self.candidates {
            let (i, j) = (i as usize, j as usize);
            if touch(&self.shapes, &self.positions, i, j) {
                pairs += 1;
                self.marks[i].0 |= Marks::COLLIDING;
                self.marks[j].0 |= Marks::COLLIDING;
            }
        }
        let exact_time = start.elapsed();
        let all = pairs_of(self.boxes.len());
        if brute {
            self.compare.brute_tests = all;
            self.compare.brute_time = broad_time;
            self.compare.brute_estimated = false;
        } else {
            self.compare.tree_time = broad_time;
        }
        self.measure(brute);

        let query_hits = self.mark_query();
        let (player_candidates, player_contacts) = self.mark_player();
        if let Some((i, _)) = self.picked {
            self.marks[i as usize].0 |= Marks::PICKED;
        }
        self.figures = Figures {
            pairs,
            colliding: self.count_colliding(),
            checks: if brute {
                all
            } else {
                self.compare.tree.box_tests
            },
            candidates: self.candidates.len() as u64,
            query_hits,
            player_candidates,
            player_contacts,
            update,
            pair_time: broad_time + exact_time,
            broad_time,
            exact_time,
            nodes: if brute {
                0
            } else {
                self.tree.node_count() as u32
            },
            compare: self.compare,
            level: LevelFigures::default(),
        };
    }

    fn count_colliding(&self) -> u32 {
        self.marks
            .iter()
            .filter(|m| m.has(Marks::COLLIDING))
            .count() as u32
    }

    /// One of the comparisons, in turn: the tree's counted walk, the
    /// sort-and-sweep, brute force (timed by the tick itself in
    /// brute-force mode).
    fn measure(&mut self, brute: bool) {
        match self.ticks % COMPARE_EVERY {
            0 if !brute => self.compare.tree = self.tree.pair_stats(),
            0 => self.compare.tree = PairStats::default(),
            2 => {
                let start = Instant::now();
                self.compare.sweep_tests = sweep(&self.boxes, &mut self.sweep_order);
                self.compare.sweep_time = start.elapsed();
            }
            4 if !brute => {
                let (time, estimated) = time_brute_force(&self.boxes);
                self.compare.brute_tests = pairs_of(self.boxes.len());
                self.compare.brute_time = time;
                self.compare.brute_estimated = estimated;
            }
            _ => {}
        }
    }

    /// Moves the objects by [`DT`] when `advance`, bouncing off the border,
    /// and the player when steered, kept inside the world.
    fn move_objects(&mut self, advance: bool) {
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
    }

    /// The level's tick: movers move and bounce off the border, the world
    /// steps, movers that touch a wall are pushed out of it and bounce, the
    /// player is stopped by walls.
    fn tick_level(&mut self, advance: bool) {
        let n = self.count();
        self.move_objects(advance);
        let level = self.level.as_mut().expect("the level scene has a level");
        let start = Instant::now();
        for (&key, &p) in level.keys.iter().zip(&self.positions) {
            level.world.set_position(key, p);
        }
        let update = start.elapsed();

        let start = Instant::now();
        level.world.step();
        let events = level.world.events();
        let figures = LevelFigures {
            tiles: level.tiles.len() as u32,
            moved: events.changed as u32,
            candidates: events.candidates as u32,
            exact_tests: events.exact_tests as u32,
            full_pass: events.full_pass,
        };
        let world = &level.world;
        level.contacts.clear();
        level.contacts.extend(
            events
                .contacts
                .iter()
                .map(|c| (world[c.a], world[c.b], c.contact)),
        );
        let pair_time = start.elapsed();

        for m in &mut self.marks {
            m.0 &= Marks::BOX | Marks::LARGE;
        }
        level.touched.clear();
        level.deepest.clear();
        level.deepest.resize(n + 1, (0.0, Vec2::ZERO));
        let mut player_contacts = 0;
        for &(a, b, contact) in &level.contacts {
            match (a & TILE != 0, b & TILE != 0) {
                (false, false) => {
                    let (a, b) = (a as usize, b as usize);
                    self.marks[a].0 |= Marks::COLLIDING;
                    self.marks[b].0 |= Marks::COLLIDING;
                    for (me, other) in [(a, b), (b, a)] {
                        if me == n {
                            player_contacts += 1;
                            self.marks[other].0 |= Marks::CONTACT;
                        }
                    }
                }
                (true, true) => {}
                (a_tile, _) => {
                    // The normal points from `a` to `b`.
                    let (tile, body, away) = if a_tile {
                        (a, b as usize, contact.normal)
                    } else {
                        (b, a as usize, -contact.normal)
                    };
                    level.touched.push(tile & !TILE);
                    self.marks[body].0 |= Marks::COLLIDING;
                    let deepest = &mut level.deepest[body];
                    if contact.depth > deepest.0 {
                        *deepest = (contact.depth, away);
                    }
                }
            }
        }
        // A body is pushed out of the tile it overlaps most deeply, along
        // that contact's normal, and bounces: once a tick, however many
        // tiles it touches. Pushed out of every tile it touched, a large
        // body sunk in a wall of small tiles (at a high speed) was thrown
        // by the sum of thousands of pushes, into other walls, and the
        // contacts grew tick after tick.
        for (body, &(depth, away)) in level.deepest.iter().enumerate() {
            if depth > 0.0 {
                self.positions[body] += away * depth;
                let v = self.velocities[body];
                let along = v.x * away.x + v.y * away.y;
                if along < 0.0 {
                    self.velocities[body] = v - away * (2.0 * along);
                }
            }
        }
        level.touched.sort_unstable();
        level.touched.dedup();
        for (b, (shape, &p)) in self
            .boxes
            .iter_mut()
            .zip(self.shapes.iter().zip(&self.positions))
        {
            *b = shape.aabb(p);
        }
        let pairs = level.contacts.len() as u32;
        let nodes = level.world.tree().node_count() as u32;
        let query_hits = self.mark_query();
        let (player_candidates, _) = self.mark_player();
        if let Some((i, _)) = self.picked {
            self.marks[i as usize].0 |= Marks::PICKED;
        }
        self.figures = Figures {
            pairs,
            colliding: self.count_colliding(),
            checks: u64::from(figures.candidates),
            candidates: u64::from(figures.exact_tests),
            query_hits,
            player_candidates,
            player_contacts,
            update,
            pair_time,
            broad_time: pair_time,
            exact_time: Duration::ZERO,
            nodes,
            compare: Comparison::default(),
            level: figures,
        };
    }

    /// Marks what the query rectangle returns (tiles aside); how many.
    fn mark_query(&mut self) -> u32 {
        let Some(area) = self.query else { return 0 };
        let mut hits = 0;
        if !self.tree_kept() {
            for (i, b) in self.boxes.iter().enumerate() {
                if b.intersects(&area) {
                    self.marks[i].0 |= Marks::IN_QUERY;
                    hits += 1;
                }
            }
            return hits;
        }
        let tree = self.level.as_ref().map_or(&self.tree, |l| l.world.tree());
        for (_, &i) in tree.query(area) {
            if i & TILE == 0 {
                self.marks[i as usize].0 |= Marks::IN_QUERY;
                hits += 1;
            }
        }
        hits
    }

    /// Marks the player, its candidates (boxes touching its box) and its
    /// contacts (exact test); how many of each. Tiles are not counted.
    fn mark_player(&mut self) -> (u32, u32) {
        let p = self.count();
        self.marks[p].0 |= Marks::PLAYER;
        let player = self.boxes[p];
        let found: Vec<usize> = if self.tree_kept() {
            let tree = self.level.as_ref().map_or(&self.tree, |l| l.world.tree());
            tree.query(player)
                .filter(|&(_, &i)| i & TILE == 0)
                .map(|(_, &i)| i as usize)
                .collect()
        } else {
            (0..self.boxes.len())
                .filter(|&i| self.boxes[i].intersects(&player))
                .collect()
        };
        let (mut candidates, mut contacts) = (0, 0);
        for i in found {
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

    /// Lays out `count` objects from the scenario (or the level), with the
    /// player at `player`, and builds the tree.
    fn spawn(&mut self, player: Vec2) {
        let s = self.settings;
        let layout = match s.scene {
            Scene::Objects(layout) => layout,
            Scene::Level => {
                self.spawn_level(player);
                return;
            }
        };
        self.level = None;
        let scenario = Scenario::with_overlaps(layout, s.count, s.seed, OVERLAPS);
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

    /// The level: its tiles, then movers placed clear of them, and the
    /// player, all in a new collision world.
    fn spawn_level(&mut self, player: Vec2) {
        let s = self.settings;
        // The old level and tree go first: both at once would take up to
        // half as much memory again while the new one is built.
        self.level = None;
        self.tree = QuadTree::with_config(self.tree.world(), s.config());
        let tiles = level_tiles(s.tiles);
        let mut world = CollisionWorld::with_config(world(), s.config());
        world.add_many(tiles.iter().enumerate().map(|(i, b)| {
            let shape = Shape::Aabb {
                half_extents: b.size() * 0.5,
            };
            (
                shape,
                b.center(),
                Filter::on(WALL).colliding_with(MOVER),
                TILE | i as u32,
            )
        }));
        let radius = MOVER_RADIUS * s.size;
        let mut rng = Rng::new(s.seed ^ 0x1E7E_1E7E);
        let clear = |world: &CollisionWorld<u32>, b: Aabb| world.tree().query(b).next().is_none();
        self.positions = (0..s.count)
            .map(|_| {
                let mut p = Vec2::ZERO;
                for _ in 0..30 {
                    p = Vec2::new(
                        rng.range(radius, WORLD - radius),
                        rng.range(radius, WORLD - radius),
                    );
                    if clear(&world, Aabb::from_center(p, [radius, radius])) {
                        break;
                    }
                }
                p
            })
            .collect();
        let mut player = player;
        let half = Vec2::splat(PLAYER_HALF);
        if !clear(&world, Aabb::from_center(player, half)) {
            // The middle of a room.
            let room = WORLD / ROOMS as f32;
            player = Vec2::splat(room * (ROOMS / 2) as f32 + room / 2.0);
        }
        self.positions.push(player);
        self.velocities = (0..s.count)
            .map(|_| {
                let angle = rng.range(0.0, core::f32::consts::TAU);
                Vec2::new(angle.cos(), angle.sin()) * (BASE_SPEED * rng.range(0.5, 1.0))
            })
            .collect();
        self.velocities.push(Vec2::ZERO);
        self.natural = vec![
            Shape::Circle {
                radius: MOVER_RADIUS
            };
            s.count
        ];
        self.natural.push(Shape::Aabb { half_extents: half });
        self.large = vec![false; s.count + 1];
        self.resize();
        let filter = Filter::on(MOVER).colliding_with(MOVER | WALL);
        let keys = world.add_many(
            self.shapes
                .iter()
                .zip(&self.positions)
                .enumerate()
                .map(|(i, (&shape, &p))| (shape, p, filter, i as u32)),
        );
        self.tiles_version += 1;
        self.level = Some(Level {
            world,
            keys,
            tiles,
            version: self.tiles_version,
            touched: Vec::new(),
            deepest: Vec::new(),
            contacts: Vec::new(),
        });
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

/// `n (n − 1) / 2`.
fn pairs_of(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// A plain sort-and-sweep over `boxes`: `order` sorted by `min.x` (from
/// its last order, which is nearly sorted when things move a little), then
/// each box tested against the following ones until one starts right of
/// its end. Returns the box tests made.
fn sweep(boxes: &[Aabb], order: &mut Vec<u32>) -> u64 {
    if order.len() != boxes.len() {
        *order = (0..boxes.len() as u32).collect();
    }
    order.sort_by(|&a, &b| boxes[a as usize].min.x.total_cmp(&boxes[b as usize].min.x));
    let (mut tests, mut pairs) = (0u64, 0u64);
    for (k, &i) in order.iter().enumerate() {
        let a = boxes[i as usize];
        for &j in &order[k + 1..] {
            tests += 1;
            let b = &boxes[j as usize];
            if b.min.x > a.max.x {
                break;
            }
            if b.min.y <= a.max.y && a.min.y <= b.max.y {
                pairs += 1;
            }
        }
    }
    std::hint::black_box(pairs);
    tests
}

/// Times brute force's box tests: every pair up to [`BRUTE_FORCE_MAX`]
/// objects, above that every k-th row of the triangle, the time scaled by
/// k (and said to be estimated).
fn time_brute_force(boxes: &[Aabb]) -> (Duration, bool) {
    let n = boxes.len();
    let stride = if n <= BRUTE_FORCE_MAX + 1 {
        1
    } else {
        pairs_of(n).div_ceil(BRUTE_SAMPLE_TESTS) as usize
    };
    let start = Instant::now();
    let mut hits = 0u64;
    for i in (0..n).step_by(stride) {
        let a = boxes[i];
        for b in &boxes[i + 1..] {
            hits += u64::from(a.intersects(b));
        }
    }
    std::hint::black_box(hits);
    (start.elapsed() * stride as u32, stride > 1)
}

/// The level's walls as `count` square tiles: a grid of 5 by 5 rooms, walled on every side, with a door in every inner wall.
/// The tiles are the cells of a square grid that lie on the walls; the
/// grid is as fine as `count` needs (at most `count` cells lie on the
/// walls, spread evenly when there are more), so more tiles make the same
/// walls of smaller tiles. Deterministic.
#[must_use]
pub fn level_tiles(count: usize) -> Vec<Aabb> {
    if count == 0 {
        return Vec::new();
    }
    let room = WORLD / ROOMS as f32;
    // The walls cover about this share of the world.
    let share = 2.0 * (ROOMS as f32 + 1.0) * WALL_THICKNESS / WORLD;
    let mut side = (WORLD * WORLD * share / count as f32).sqrt();
    let cells = loop {
        let grid = ((WORLD / side) as usize).max(1);
        let cell = WORLD / grid as f32;
        let half = (WALL_THICKNESS / 2.0).max(cell / 2.0);
        let on_wall = |v: f32, along: f32| {
            let line = (v / room).round() * room;
            let inner = line > 0.0 && line < WORLD;
            let door = inner && ((along % room) - room / 2.0).abs() < DOOR / 2.0;
            (v - line).abs() <= half && !door
        };
        let mut cells = Vec::new();
        for j in 0..grid {
            for i in 0..grid {
                let c = Vec2::new((i as f32 + 0.5) * cell, (j as f32 + 0.5) * cell);
                if on_wall(c.x, c.y) || on_wall(c.y, c.x) {
                    cells.push(Aabb::from_center(c, [cell / 2.0, cell / 2.0]));
                }
            }
        }
        if cells.len() >= count || grid > 8 * WORLD as usize {
            break cells;
        }
        side *= 0.97;
    };
    if cells.len() <= count {
        return cells;
    }
    // Exactly `count`, spread evenly over the walls.
    let total = cells.len();
    cells
        .into_iter()
        .enumerate()
        .filter(|&(k, _)| k * count / total != (k + 1) * count / total)
        .map(|(_, b)| b)
        .collect()
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

    /// The most pairs a simulation keeps over `ticks` ticks: candidates in
    /// the object scenes, contacts in the level.
    fn most_pairs_kept(settings: Settings, ticks: usize) -> u64 {
        let mut s = sim(settings);
        let mut most = 0;
        for _ in 0..ticks {
            s.tick(true);
            let f = s.figures();
            let kept = match settings.scene {
                Scene::Objects(_) => f.candidates,
                Scene::Level => u64::from(f.pairs),
            };
            most = most.max(kept);
        }
        most
    }

    fn assert_estimate_holds(settings: Settings, most: u64) {
        let expected = settings.expected_pairs();
        let case = format!("{settings:?}: {most} pairs kept, {expected} expected");
        assert!(most <= expected, "{case}");
        assert!(expected <= 2 * most + 100_000, "{case}");
    }

    /// The estimate the server's bound charges for pairs
    /// ([`Settings::weight`]) errs high in every scene, and once the pairs
    /// are many, by less than twice.
    #[test]
    fn expected_pairs_are_above_the_pairs_the_scenes_make() {
        for scene in Scene::ALL {
            for count in [10, 300, 5_000] {
                for size in [0.1, 1.0, 3.0, 10.0] {
                    for (seed, tiles, speed) in [(1, 20_000, 1.0), (2, 0, 5.0), (3, 200_000, 5.0)] {
                        let settings = Settings {
                            scene,
                            count,
                            size,
                            seed,
                            tiles,
                            speed,
                            ..Settings::default()
                        };
                        assert_estimate_holds(settings, most_pairs_kept(settings, 3));
                    }
                }
            }
        }
        // Large movers at the level's fastest, over walls of a million
        // small tiles, for longer.
        let settings = Settings {
            scene: Scene::Level,
            count: 2_000,
            size: 10.0,
            speed: LEVEL_SPEED_MAX,
            tiles: TILES_MAX,
            ..Settings::default()
        };
        assert_estimate_holds(settings, most_pairs_kept(settings, 10));
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
                scene: Scene::Objects(layout),
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
                for _ in 0..6 {
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

    /// The level's contacts, by brute force over the world's bodies as
    /// the step saw them: every pair that interacts and touches exactly.
    fn level_contacts_by_brute_force(s: &Simulation) -> Vec<(u32, u32)> {
        let world = &s.level.as_ref().unwrap().world;
        let bodies: Vec<_> = world.iter().map(|(_, body, &v)| (body, v)).collect();
        let mut out = Vec::new();
        for (i, (a, va)) in bodies.iter().enumerate() {
            for (b, vb) in &bodies[i + 1..] {
                if a.interacts(b) && a.shape.contact(a.position, &b.shape, b.position).is_some() {
                    out.push((*va.min(vb), *va.max(vb)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn level_contacts_match_brute_force_and_resting_tiles_cost_nothing() {
        let mut s = sim(Settings {
            count: 80,
            scene: Scene::Level,
            tiles: 600,
            speed: 4.0,
            size: 2.0,
            max_items: 4,
            ..Settings::default()
        });
        assert_eq!(s.tiles().0.len(), 600);
        s.set_player_direction(Vec2::new(1.0, 0.3));
        let mut touched_walls = 0;
        for t in 0..120 {
            s.tick(t % 10 != 9);
            let level = s.level.as_ref().unwrap();
            let mut got: Vec<(u32, u32)> = level
                .contacts
                .iter()
                .map(|&(a, b, _)| (a.min(b), a.max(b)))
                .collect();
            got.sort_unstable();
            assert_eq!(got, level_contacts_by_brute_force(&s), "tick {t}");
            let f = s.figures().level;
            // After the first step (everything new), only movers and the
            // player ever move: at most 81 bodies of 681.
            if t > 0 {
                assert!(f.moved <= 81, "tick {t}: {} moved", f.moved);
                assert!(!f.full_pass, "tick {t}: the step should follow what moved");
            }
            assert_eq!(f.tiles, 600);
            touched_walls += s.touched_tiles().len();
            assert!(s.touched_tiles().windows(2).all(|w| w[0] < w[1]));
        }
        assert!(touched_walls > 0, "movers never met a wall");
        // Paused (the tenth ticks), nothing moved unless pushed off a wall.
        s.set_player_direction(Vec2::ZERO);
        s.tick(false);
        s.tick(false);
        assert_eq!(s.figures().level.moved, 0);
    }

    #[test]
    fn the_player_is_stopped_by_walls() {
        let mut s = sim(Settings {
            count: 10,
            scene: Scene::Level,
            tiles: 2_000,
            ..Settings::default()
        });
        // The player starts in the middle room, level with its doors: up a
        // little, away from them, then right, into the room's wall.
        let start = s.player();
        assert_eq!(start, Vec2::splat(WORLD / 2.0));
        s.set_player_direction(Vec2::new(0.0, -1.0));
        for _ in 0..12 {
            s.tick(false);
        }
        s.set_player_direction(Vec2::new(1.0, 0.0));
        for _ in 0..300 {
            s.tick(false);
        }
        // The wall at x = 600 stops it; a push never leaves it deep inside.
        let p = s.player();
        assert!(p.y < start.y - 40.0, "{p:?}");
        assert!(
            p.x > start.x + 50.0 && p.x < 600.0 - WALL_THICKNESS / 2.0,
            "{p:?}"
        );
        let player = Aabb::from_center(p, [PLAYER_HALF - 1.0, PLAYER_HALF - 1.0]);
        assert!(s.tiles().0.iter().all(|t| !t.intersects(&player)));
    }

    #[test]
    fn level_tiles_are_as_many_as_asked() {
        for count in [0, 1, 7, 50, 999, 20_000] {
            let tiles = level_tiles(count);
            assert_eq!(tiles.len(), count, "{count}");
            assert!(tiles.iter().all(|t| t.min.x >= 0.0 && t.max.x <= WORLD));
        }
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
