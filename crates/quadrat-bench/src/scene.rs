//! Benchmark input: scenario boxes in the peers' representation, motion
//! between frames, and query shapes.

use quadrat::scenario::{Layout, Rng, Scenario};

use super::peers::Bbox;

/// The boxes of one scenario, as `[min_x, min_y, max_x, max_y]`.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The scenario the boxes come from.
    pub scenario: Scenario,
    /// The world box.
    pub world: Bbox,
    /// The boxes; a box's index is its identity.
    pub boxes: Vec<Bbox>,
}

impl Scene {
    /// The boxes of `Scenario::new(layout, n, seed)`.
    #[must_use]
    pub fn new(layout: Layout, n: usize, seed: u64) -> Scene {
        let scenario = Scenario::new(layout, n, seed);
        Scene {
            scenario,
            world: scenario.world.into(),
            boxes: scenario.boxes().into_iter().map(Bbox::from).collect(),
        }
    }
}

/// How boxes move between frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// Every box takes a small random step.
    Drift,
    /// Every box takes a small random step, except 1% of the boxes (chosen
    /// anew each frame), which jump to a random place in the world.
    Teleport,
}

impl Motion {
    /// Both motions.
    pub const ALL: [Motion; 2] = [Motion::Drift, Motion::Teleport];

    /// A short name: `drift`, `teleport`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Motion::Drift => "drift",
            Motion::Teleport => "teleport",
        }
    }

    /// What a frame does, in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Motion::Drift => "every box steps up to ¼ of its size per axis",
            Motion::Teleport => "as drift, and 1% of the boxes jump to a random place",
        }
    }
}

/// A scene in motion: the same seed replays the same frames.
#[derive(Clone, Debug)]
pub struct Frames {
    rng: Rng,
    motion: Motion,
    world: Bbox,
    step: f32,
    /// The boxes of the current frame.
    pub boxes: Vec<Bbox>,
}

impl Frames {
    /// Starts at `scene`'s boxes.
    #[must_use]
    pub fn new(scene: &Scene, motion: Motion, seed: u64) -> Frames {
        Frames {
            rng: Rng::new(seed),
            motion,
            world: scene.world,
            step: 0.25 * scene.scenario.size,
            boxes: scene.boxes.clone(),
        }
    }

    /// Moves to the next frame. Boxes keep their size; centres stay inside
    /// the world.
    pub fn advance(&mut self) {
        let [x0, y0, x1, y1] = self.world;
        let step = self.step;
        for b in &mut self.boxes {
            let dx = self.rng.range(-step, step);
            let dy = self.rng.range(-step, step);
            let (hx, hy) = ((b[2] - b[0]) * 0.5, (b[3] - b[1]) * 0.5);
            let cx = (b[0] + hx + dx).clamp(x0, x1);
            let cy = (b[1] + hy + dy).clamp(y0, y1);
            *b = [cx - hx, cy - hy, cx + hx, cy + hy];
        }
        if self.motion == Motion::Teleport {
            let n = self.boxes.len() as u64;
            for _ in 0..n / 100 {
                let i = self.rng.below(n) as usize;
                let b = self.boxes[i];
                let (hx, hy) = ((b[2] - b[0]) * 0.5, (b[3] - b[1]) * 0.5);
                let cx = self.rng.range(x0, x1);
                let cy = self.rng.range(y0, y1);
                self.boxes[i] = [cx - hx, cy - hy, cx + hx, cy + hy];
            }
        }
    }
}

/// The kinds of query of the query benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// Boxes sized to hit about 10 boxes of the uniform layout each.
    Area,
    /// Discs sized to hit about 10 boxes of the uniform layout each.
    Circle,
    /// Points.
    Point,
    /// The k boxes nearest to a point.
    Nearest,
    /// The first box a ray hits.
    Raycast,
}

impl QueryKind {
    /// All kinds.
    pub const ALL: [QueryKind; 5] = [
        QueryKind::Area,
        QueryKind::Circle,
        QueryKind::Point,
        QueryKind::Nearest,
        QueryKind::Raycast,
    ];

    /// A short name: `area`, `circle`, `point`, `nearest`, `raycast`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Area => "area",
            QueryKind::Circle => "circle",
            QueryKind::Point => "point",
            QueryKind::Nearest => "nearest",
            QueryKind::Raycast => "raycast",
        }
    }

    /// `true` for the kinds whose answer is every box the query's shape
    /// touches ([`Query`]), `false` for those whose answer is the nearest
    /// boxes with their distances ([`Probe`](super::probe::Probe)).
    #[must_use]
    pub fn is_shape(self) -> bool {
        matches!(self, QueryKind::Area | QueryKind::Circle | QueryKind::Point)
    }
}

/// A query of [`QueryKind::Area`], [`QueryKind::Circle`] or
/// [`QueryKind::Point`]: a box, a disc (its centre and radius) or a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Query {
    /// A closed box.
    Area(Bbox),
    /// A closed disc.
    Circle([f32; 2], f32),
    /// A point.
    Point([f32; 2]),
}

impl Query {
    /// A box containing every box this query can hit, with a margin, for
    /// finding candidates with a box query.
    #[must_use]
    pub fn bounds(&self) -> Bbox {
        match *self {
            Query::Area(b) => b,
            Query::Circle([x, y], r) => {
                // Generous, so that rounding in the exact test can never
                // admit a box outside it.
                let r = r * 1.01 + 1e-3;
                [x - r, y - r, x + r, y + r]
            }
            Query::Point([x, y]) => [x, y, x, y],
        }
    }

    /// The exact closed test, as quadrat defines it.
    #[must_use]
    pub fn hits(&self, b: &Bbox) -> bool {
        let b = quadrat::Aabb::from(*b);
        match *self {
            Query::Area(a) => quadrat::Aabb::from(a).intersects(&b),
            Query::Circle(c, r) => quadrat::Circle::new(c, r).intersects_aabb(&b),
            Query::Point(p) => b.contains_point(p),
        }
    }
}

/// `count` queries of `kind` with centres uniform in `scene`'s world, sized
/// so that an area or circle query hits about `hits` boxes of a uniform
/// layout of the same `n`.
///
/// # Panics
/// For [`QueryKind::Nearest`] and [`QueryKind::Raycast`], whose queries come
/// from [`probes`](super::probe::probes).
#[must_use]
pub fn queries(scene: &Scene, kind: QueryKind, count: usize, hits: f32, seed: u64) -> Vec<Query> {
    let mut rng = Rng::new(seed);
    let [x0, y0, x1, y1] = scene.world;
    let s = scene.scenario.size;
    // Uniform centres: a shape of area A meets a box when the box's centre
    // lies in the shape grown by half a box, so `hits = n · area / world`.
    let target = hits * (x1 - x0) * (y1 - y0) / scene.boxes.len().max(1) as f32;
    (0..count)
        .map(|_| {
            let c = [rng.range(x0, x1), rng.range(y0, y1)];
            match kind {
                QueryKind::Area => {
                    // (q + s)² = target
                    let h = (target.sqrt() - s).max(0.0) * 0.5;
                    Query::Area([c[0] - h, c[1] - h, c[0] + h, c[1] + h])
                }
                QueryKind::Circle => {
                    // s² + 4 s r + π r² = target
                    let pi = core::f32::consts::PI;
                    let disc = 16.0 * s * s - 4.0 * pi * (s * s - target);
                    let r = ((disc.max(0.0).sqrt() - 4.0 * s) / (2.0 * pi)).max(0.0);
                    Query::Circle(c, r)
                }
                QueryKind::Point => Query::Point(c),
                QueryKind::Nearest | QueryKind::Raycast => {
                    panic!("{} queries are probes, not shapes", kind.name())
                }
            }
        })
        .collect()
}
