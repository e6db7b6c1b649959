//! `QuadTree` against the brute-force model of `tests/support/tree.rs`:
//! arbitrary configurations, worlds (ordinary, degenerate and at the edges
//! of `f32`) and sequences of every mutating operation, over boxes made
//! from raw `f32`s, exact edge values, split lines and the shared
//! generators. The items are checked after every operation, and every
//! query, `nearest`, the ray casts and the pairs every few operations and
//! at the end.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use quadrat::{Aabb, Circle, Ray, Vec2};

#[path = "../../tests/support/mod.rs"]
mod support;

mod common;

use common::{ConfigIn, Coord};
use support::shapes::{self, Kind, Rng};
use support::tree::{Harness, Model, Op, Probe};

/// Operations per input, at most.
const MAX_OPS: usize = 200;
/// Live items, at most: bulk inserts are cut to stay under it, so that the
/// brute-force checks stay fast.
const MAX_LIVE: usize = 200;
/// Boxes in one bulk insert, at most.
const MAX_BULK: usize = 64;
/// A full check every this many operations.
const CHECK_EVERY: usize = 8;

#[derive(Arbitrary, Debug)]
enum WorldIn {
    /// `[0, 100]²`.
    Hundred,
    /// A square of side `2^(pow % 64 - 24)` (scaled by a mantissa), placed
    /// at a multiple of its side.
    Ordinary {
        pow: u8,
        mantissa: u8,
        ox: i8,
        oy: i8,
    },
    /// One of `shapes::extreme_worlds()`.
    Extreme(u8),
    /// Any valid box, possibly of zero width or height.
    Raw(Coord, Coord, Coord, Coord),
}

impl WorldIn {
    fn resolve(&self) -> Aabb {
        match *self {
            WorldIn::Hundred => shapes::world(Vec2::ZERO, 100.0),
            WorldIn::Ordinary {
                pow,
                mantissa,
                ox,
                oy,
            } => {
                let scale =
                    (1.0 + f32::from(mantissa) / 256.0) * 2f32.powi(i32::from(pow % 64) - 24);
                let offset = Vec2::new(f32::from(ox) * scale / 4.0, f32::from(oy) * scale / 4.0);
                shapes::world(offset, scale)
            }
            WorldIn::Extreme(i) => {
                let worlds = shapes::extreme_worlds();
                worlds[usize::from(i) % worlds.len()]
            }
            WorldIn::Raw(x0, y0, x1, y1) => {
                let unit = shapes::world(Vec2::ZERO, 100.0);
                common::repaired_box(
                    [
                        x0.finite(unit.min.x, unit.max.x),
                        y0.finite(unit.min.y, unit.max.y),
                    ],
                    [
                        x1.finite(unit.min.x, unit.max.x),
                        y1.finite(unit.min.y, unit.max.y),
                    ],
                )
            }
        }
    }
}

/// One valid box.
#[derive(Arbitrary, Debug, Clone)]
enum BoxIn {
    /// Two corners, each coordinate raw, exact or a fraction of the world;
    /// repaired into a valid box (non-finite values clamped, corners sorted).
    Corners(Coord, Coord, Coord, Coord),
    Point(Coord, Coord),
    /// From a shared generator.
    Gen {
        kind: u8,
        seed: u64,
    },
    /// From `shapes::edge_boxes`.
    Edge(u64),
    /// The box of a live item: exact duplicates.
    Existing(u16),
}

impl BoxIn {
    fn resolve(&self, world: Aabb, model: &Model) -> Aabb {
        match *self {
            BoxIn::Corners(x0, y0, x1, y1) => common::repaired_box(
                [
                    x0.finite(world.min.x, world.max.x),
                    y0.finite(world.min.y, world.max.y),
                ],
                [
                    x1.finite(world.min.x, world.max.x),
                    y1.finite(world.min.y, world.max.y),
                ],
            ),
            BoxIn::Point(x, y) => Aabb::from_point([
                x.finite(world.min.x, world.max.x),
                y.finite(world.min.y, world.max.y),
            ]),
            BoxIn::Gen { kind, seed } => {
                shapes::boxes(kind_of(kind), world, 1, &mut Rng::new(seed))[0]
            }
            BoxIn::Edge(seed) => shapes::edge_boxes(1, &mut Rng::new(seed))[0],
            BoxIn::Existing(i) => match model.live.len() {
                0 => world,
                n => model.live[usize::from(i) % n].1,
            },
        }
    }
}

fn kind_of(k: u8) -> Kind {
    Kind::ALL[usize::from(k) % Kind::ALL.len()]
}

/// Several valid boxes.
#[derive(Arbitrary, Debug, Clone)]
enum BoxesIn {
    Gen { kind: u8, seed: u64, n: u8 },
    Edge { seed: u64, n: u8 },
    List(Vec<BoxIn>),
}

impl BoxesIn {
    fn resolve(&self, world: Aabb, model: &Model, max: usize) -> Vec<Aabb> {
        let mut out = match *self {
            BoxesIn::Gen { kind, seed, n } => {
                let n = usize::from(n) % (MAX_BULK + 1);
                shapes::boxes(kind_of(kind), world, n, &mut Rng::new(seed))
            }
            BoxesIn::Edge { seed, n } => {
                let n = usize::from(n) % (MAX_BULK + 1);
                shapes::edge_boxes(n, &mut Rng::new(seed))
            }
            BoxesIn::List(ref v) => v
                .iter()
                .take(max)
                .map(|b| b.resolve(world, model))
                .collect(),
        };
        out.truncate(max);
        out
    }
}

/// A box that `validate` refuses.
#[derive(Arbitrary, Debug, Clone)]
enum InvalidIn {
    /// One coordinate (of four) replaced by NaN or an infinity.
    NonFinite { which: u8, value: u8, base: BoxIn },
    /// Minimum and maximum swapped on one axis.
    Inverted { y: bool, base: BoxIn },
}

impl InvalidIn {
    fn resolve(&self, world: Aabb, model: &Model) -> Aabb {
        let nan = Aabb::new([f32::NAN, 0.0], [0.0, 0.0]);
        let b = match self {
            InvalidIn::NonFinite { which, value, base } => {
                let mut b = base.resolve(world, model);
                let v = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][usize::from(*value) % 3];
                match which % 4 {
                    0 => b.min.x = v,
                    1 => b.min.y = v,
                    2 => b.max.x = v,
                    _ => b.max.y = v,
                }
                b
            }
            InvalidIn::Inverted { y, base } => {
                let b = base.resolve(world, model);
                let (lo, hi) = if *y {
                    (b.min.y, b.max.y)
                } else {
                    (b.min.x, b.max.x)
                };
                // Equal bounds cannot be swapped: push the maximum below.
                let (lo, hi) = if lo < hi {
                    (hi, lo)
                } else {
                    (lo, lo - (lo.abs() * 0.5 + 1.0))
                };
                if *y {
                    Aabb::new([b.min.x, lo], [b.max.x, hi])
                } else {
                    Aabb::new([lo, b.min.y], [hi, b.max.y])
                }
            }
        };
        if b.validate().is_err() { b } else { nan }
    }
}

/// A displacement: a fraction of the world's width, a raw value (NaN and
/// infinities make the move refused), or a few units in the last place.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum StepIn {
    Zero,
    Frac(i16),
    Raw(f32),
    Tiny(i8),
}

impl StepIn {
    fn resolve(self, world: Aabb) -> f32 {
        match self {
            StepIn::Zero => 0.0,
            StepIn::Frac(f) => {
                let w = f64::from(world.max.x) - f64::from(world.min.x);
                common::clamp_f32(w * f64::from(f) / 8192.0)
            }
            StepIn::Raw(v) => v,
            StepIn::Tiny(n) => f32::from_bits(1) * f32::from(n),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum OpIn {
    Insert(BoxIn),
    InsertInvalid(InvalidIn),
    InsertMany(BoxesIn),
    /// One insert per box, no question between them.
    InsertEach(BoxesIn),
    Remove(u16),
    RemoveStale(u16),
    Update(u16, BoxIn),
    Nudge(u16, StepIn, StepIn),
    UpdateAll {
        dx: StepIn,
        dy: StepIn,
        jumps: BoxesIn,
        invalid_jump: Option<InvalidIn>,
        refuse: bool,
    },
    ParUpdateAll {
        dx: StepIn,
        dy: StepIn,
        jumps: BoxesIn,
        invalid_jump: Option<InvalidIn>,
    },
    Retain(u8),
    Rebuild,
    ParRebuild,
    ParInsertMany(BoxesIn),
    Clear,
    /// Removes the first items in insertion order: a drain.
    Drain(u8),
    Reserve(u16),
    ShrinkToFit,
    /// The tutorials' loop over the live items for one to four frames
    /// (`Op::Refill`): clear, every box again one by one, moved by a step.
    Refill {
        frames: u8,
        dx: StepIn,
        dy: StepIn,
        cut: u8,
        swap: Option<(u16, u16)>,
    },
}

impl OpIn {
    /// The harness's operations (a drain is several removes).
    fn resolve(&self, world: Aabb, model: &Model) -> Vec<Op> {
        let room = MAX_LIVE.saturating_sub(model.live.len());
        let jumps_of = |jumps: &BoxesIn, invalid: &Option<InvalidIn>| {
            let mut v = jumps.resolve(world, model, 8);
            if let Some(bad) = invalid {
                v.push(bad.resolve(world, model));
            }
            v
        };
        let op = match self {
            OpIn::Insert(b) if room > 0 => Op::Insert(b.resolve(world, model)),
            OpIn::Insert(_) => Op::Remove(0),
            OpIn::InsertInvalid(b) => Op::InsertInvalid(b.resolve(world, model)),
            OpIn::InsertMany(b) => Op::InsertMany(b.resolve(world, model, room)),
            OpIn::InsertEach(b) => Op::InsertEach(b.resolve(world, model, room)),
            OpIn::ParInsertMany(b) => Op::ParInsertMany(b.resolve(world, model, room)),
            OpIn::Remove(i) => Op::Remove(usize::from(*i)),
            OpIn::RemoveStale(i) => Op::RemoveStale(usize::from(*i)),
            OpIn::Update(i, b) => Op::Update(usize::from(*i), b.resolve(world, model)),
            OpIn::Nudge(i, dx, dy) => {
                Op::Nudge(usize::from(*i), dx.resolve(world), dy.resolve(world))
            }
            OpIn::UpdateAll {
                dx,
                dy,
                jumps,
                invalid_jump,
                refuse,
            } => Op::UpdateAll {
                dx: dx.resolve(world),
                dy: dy.resolve(world),
                jumps: jumps_of(jumps, invalid_jump),
                refuse: *refuse,
            },
            OpIn::ParUpdateAll {
                dx,
                dy,
                jumps,
                invalid_jump,
            } => Op::ParUpdateAll {
                dx: dx.resolve(world),
                dy: dy.resolve(world),
                jumps: jumps_of(jumps, invalid_jump),
            },
            OpIn::Retain(m) => Op::Retain(u32::from(*m)),
            OpIn::Rebuild => Op::Rebuild,
            OpIn::ParRebuild => Op::ParRebuild,
            OpIn::Clear => Op::Clear,
            OpIn::Drain(n) => return vec![Op::Remove(0); usize::from(*n % 32)],
            OpIn::Reserve(n) => Op::Reserve(usize::from(*n)),
            OpIn::ShrinkToFit => Op::ShrinkToFit,
            OpIn::Refill {
                frames,
                dx,
                dy,
                cut,
                swap,
            } => Op::Refill {
                frames: 1 + usize::from(*frames % 4),
                dx: dx.resolve(world),
                dy: dy.resolve(world),
                cut: usize::from(*cut),
                swap: swap.map(|(i, j)| (usize::from(i), usize::from(j))),
            },
        };
        vec![op]
    }
}

/// What to ask: every coordinate may be NaN or infinite, radii negative,
/// directions zero or subnormal, and `max_dist` NaN, infinite or negative.
#[derive(Arbitrary, Debug, Clone)]
struct ProbeIn {
    area: (Coord, Coord, Coord, Coord),
    center: (Coord, Coord),
    radius: LengthIn,
    point: (Coord, Coord),
    k: u8,
    origin: (Coord, Coord),
    direction: DirIn,
    max_dist: LengthIn,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum LengthIn {
    Zero,
    Frac(u16),
    Raw(f32),
    Infinite,
    Nan,
    Negative(u8),
}

impl LengthIn {
    fn resolve(self, world: Aabb) -> f32 {
        match self {
            LengthIn::Zero => 0.0,
            LengthIn::Frac(f) => {
                let w = f64::from(world.max.x) - f64::from(world.min.x);
                common::clamp_f32(w * f64::from(f) / 16384.0)
            }
            LengthIn::Raw(v) => v,
            LengthIn::Infinite => f32::INFINITY,
            LengthIn::Nan => f32::NAN,
            LengthIn::Negative(n) => -f32::from(n) - 0.5,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum DirIn {
    /// Along an axis: grazes edges and split lines exactly.
    Axis(u8),
    Zero,
    Subnormal(bool, bool),
    Raw(f32, f32),
    Angle(u16),
}

impl DirIn {
    fn resolve(self) -> Vec2 {
        match self {
            DirIn::Axis(i) => [
                Vec2::new(1.0, 0.0),
                Vec2::new(-1.0, 0.0),
                Vec2::new(0.0, 1.0),
                Vec2::new(0.0, -1.0),
            ][usize::from(i) % 4],
            DirIn::Zero => Vec2::ZERO,
            DirIn::Subnormal(x, y) => {
                let t = f32::from_bits(1);
                Vec2::new(if x { t } else { 0.0 }, if y { -t } else { t })
            }
            DirIn::Raw(x, y) => Vec2::new(x, y),
            DirIn::Angle(a) => {
                let t = f32::from(a) / 65536.0 * std::f32::consts::TAU;
                Vec2::new(t.cos(), t.sin())
            }
        }
    }
}

impl ProbeIn {
    fn resolve(&self, world: Aabb) -> Probe {
        let (lx, hx, ly, hy) = (world.min.x, world.max.x, world.min.y, world.max.y);
        let (x0, y0, x1, y1) = self.area;
        // Sorted unless NaN: a NaN area intersects nothing (an inverted one
        // too, but the model's plain intersection test would not say so).
        let order = |a: f32, b: f32| if b < a { (b, a) } else { (a, b) };
        let (ax0, ax1) = order(x0.any(lx, hx), x1.any(lx, hx));
        let (ay0, ay1) = order(y0.any(ly, hy), y1.any(ly, hy));
        Probe {
            area: Aabb::new([ax0, ay0], [ax1, ay1]),
            circle: Circle::new(
                [self.center.0.any(lx, hx), self.center.1.any(ly, hy)],
                self.radius.resolve(world),
            ),
            point: Vec2::new(self.point.0.any(lx, hx), self.point.1.any(ly, hy)),
            k: if self.k == u8::MAX {
                usize::MAX
            } else {
                usize::from(self.k % 24)
            },
            ray: Ray::new(
                [self.origin.0.any(lx, hx), self.origin.1.any(ly, hy)],
                self.direction.resolve(),
            ),
            max_dist: self.max_dist.resolve(world),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    config: ConfigIn,
    world: WorldIn,
    ops: Vec<OpIn>,
    probes: Vec<ProbeIn>,
}

fn fail(what: &str, step: usize, op: &dyn std::fmt::Debug, err: String) -> ! {
    panic!("tree_ops: {what} after op #{step} {op:?}: {err}");
}

fuzz_target!(|input: Input| {
    common::count_input("tree_ops");
    let world = input.world.resolve();
    let config = input.config.resolve();
    let mut h = Harness::new(world, config);
    // libFuzzer aborts on any panic, even a caught one.
    h.panics = false;
    let default_probe = ProbeIn {
        area: (
            Coord::Frac(0),
            Coord::Frac(0),
            Coord::Frac(2048),
            Coord::Frac(2048),
        ),
        center: (Coord::Frac(2048), Coord::Frac(2048)),
        radius: LengthIn::Frac(4096),
        point: (Coord::Frac(1024), Coord::Frac(3072)),
        k: 5,
        origin: (Coord::Frac(-100), Coord::Frac(1000)),
        direction: DirIn::Angle(3000),
        max_dist: LengthIn::Infinite,
    };
    let probe = |i: usize| -> Probe {
        match input.probes.len() {
            0 => default_probe.resolve(world),
            n => input.probes[i % n].resolve(world),
        }
    };
    let mut checks = 0;
    for (step, op_in) in input.ops.iter().take(MAX_OPS).enumerate() {
        for op in op_in.resolve(world, &h.model) {
            common::count_op();
            if let Err(e) = h.apply(&op) {
                fail("wrong result", step, &op, e);
            }
            if let Err(e) = h.check_items() {
                fail("check_items", step, &op, e);
            }
        }
        if step % CHECK_EVERY == CHECK_EVERY - 1 {
            let p = probe(checks);
            checks += 1;
            if let Err(e) = h.check(&p) {
                fail("check", step, &(op_in, p), e);
            }
        }
    }
    let p = probe(checks);
    if let Err(e) = h.check(&p) {
        panic!("tree_ops: final check with {p:?}: {e}");
    }
});
