//! The input of the world fuzz targets (`world_ops`, `world_batch`):
//! bounds, shapes, positions, layers, the single operations and the probes,
//! decoded from the fuzzer's bytes and resolved against the model; and the
//! loop both targets run.

#![allow(dead_code)]

use arbitrary::Arbitrary;
use quadrat::{Aabb, Filter, Layers, Ray, Shape, Vec2};

use crate::common::{self, ConfigIn, Coord};
use crate::support::shapes;
use crate::world_model::{
    Expect, Harness, Model, Op, Probe, check_bodies, check_queries, check_step, expected, next_f32,
};

/// Operations per input, at most.
pub const MAX_OPS: usize = 200;
/// Live bodies, at most: single adds past it are skipped.
pub const MAX_LIVE: usize = 128;
/// The queries every this many operations.
pub const QUERY_EVERY: usize = 4;

#[derive(Arbitrary, Debug)]
pub enum BoundsIn {
    /// `[0, 100]²`, the world of the proptests.
    Hundred,
    /// One of `shapes::extreme_worlds()`.
    Extreme(u8),
}

impl BoundsIn {
    pub fn resolve(&self) -> Aabb {
        match *self {
            BoundsIn::Hundred => shapes::world(Vec2::ZERO, 100.0),
            BoundsIn::Extreme(i) => {
                let worlds = shapes::extreme_worlds();
                worlds[usize::from(i) % worlds.len()]
            }
        }
    }
}

/// A position: on a coarse grid of the world (so that grid-sized shapes
/// touch exactly), or any coordinate, possibly NaN, infinite or huge.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum PosIn {
    Grid(u8, u8),
    Any(Coord, Coord),
}

impl PosIn {
    pub fn resolve(self, w: Aabb) -> Vec2 {
        match self {
            PosIn::Grid(i, j) => {
                let at = |lo: f32, hi: f32, k: u8| {
                    let t = f64::from(k % 21) / 20.0;
                    common::clamp_f32(f64::from(lo) + (f64::from(hi) - f64::from(lo)) * t)
                };
                Vec2::new(at(w.min.x, w.max.x, i), at(w.min.y, w.max.y, j))
            }
            PosIn::Any(x, y) => Vec2::new(x.any(w.min.x, w.max.x), y.any(w.min.y, w.max.y)),
        }
    }
}

/// A length: zero, a multiple of a fortieth of the world (touching on the
/// grid), a fraction of the world, or raw (negative, NaN, huge).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum LenIn {
    Zero,
    Grid(u8),
    Frac(u16),
    Raw(f32),
    Special(u8, u8),
}

impl LenIn {
    pub fn resolve(self, w: Aabb) -> f32 {
        let width = f64::from(w.max.x) - f64::from(w.min.x);
        match self {
            LenIn::Zero => 0.0,
            LenIn::Grid(k) => common::clamp_f32(width / 40.0 * f64::from(k % 6)),
            LenIn::Frac(f) => common::clamp_f32(width * f64::from(f) / 65536.0),
            LenIn::Raw(v) => v,
            LenIn::Special(sel, k) => common::special(0.0, w.max.x - w.min.x, sel, k),
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum ShapeIn {
    Circle(LenIn),
    Aabb(LenIn, LenIn),
    Point,
    /// The segment's half may point any way: signs from the booleans.
    Capsule(LenIn, bool, LenIn, bool, LenIn),
}

impl ShapeIn {
    pub fn resolve(self, w: Aabb) -> Shape {
        match self {
            ShapeIn::Circle(r) => Shape::Circle {
                radius: r.resolve(w),
            },
            ShapeIn::Aabb(x, y) => Shape::Aabb {
                half_extents: Vec2::new(x.resolve(w), y.resolve(w)),
            },
            ShapeIn::Point => Shape::Point,
            ShapeIn::Capsule(x, nx, y, ny, r) => {
                let sign = |v: f32, neg: bool| if neg { -v } else { v };
                Shape::Capsule {
                    half_segment: Vec2::new(sign(x.resolve(w), nx), sign(y.resolve(w), ny)),
                    radius: r.resolve(w),
                }
            }
        }
    }
}

/// Layer and mask bits: few bits, so that filtering in and out both happen.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BitsIn {
    All,
    Few(u8),
    Raw(u32),
}

impl BitsIn {
    pub fn resolve(self) -> Layers {
        match self {
            BitsIn::All => Layers::ALL,
            BitsIn::Few(b) => Layers::from_bits(u32::from(b % 8)),
            BitsIn::Raw(b) => Layers::from_bits(b),
        }
    }
}

/// A small move: units in the last place, a fraction of the world, or raw.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum StepIn {
    Zero,
    Ulps(i8),
    Frac(i16),
    Raw(f32),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum OpIn {
    Add(ShapeIn, PosIn, BitsIn, BitsIn),
    AddTouching {
        body: u16,
        angle: u16,
        radius: u8,
        ulps: i8,
    },
    Remove(u16),
    RemoveStale(u16),
    Teleport(u16, PosIn),
    Nudge(u16, StepIn, StepIn),
    Reshape(u16, ShapeIn),
    SetLayer(u16, BitsIn),
    SetMask(u16, BitsIn),
    BadAdd(u8),
    BadMove(u16, u8),
    BadShape(u16),
    Step,
    Clear,
}

/// The position `p` moved by a step along one axis.
pub fn stepped(v: f32, s: StepIn, w: Aabb) -> f32 {
    match s {
        StepIn::Zero => v,
        StepIn::Ulps(n) => {
            let mut v = v;
            for _ in 0..n.unsigned_abs() % 8 {
                if v.is_finite() {
                    v = next_f32(v, n > 0);
                }
            }
            v
        }
        StepIn::Frac(f) => {
            let width = f64::from(w.max.x) - f64::from(w.min.x);
            v + common::clamp_f32(width * f64::from(f) / 32768.0 / 16.0)
        }
        StepIn::Raw(d) => v + d,
    }
}

impl OpIn {
    pub fn resolve(&self, w: Aabb, model: &Model) -> Option<Op> {
        let i = |i: &u16| usize::from(*i);
        let full = model.live.len() >= MAX_LIVE;
        Some(match *self {
            OpIn::Add(s, p, l, m) => {
                if full {
                    return None;
                }
                let (s, p) = (s.resolve(w), p.resolve(w));
                let f = Filter {
                    layer: l.resolve(),
                    mask: m.resolve(),
                };
                // The panicking form for what must be accepted.
                if expected(&s, p) == Expect::Accept {
                    Op::Add(s, p, f)
                } else {
                    Op::TryAdd(s, p, f)
                }
            }
            OpIn::AddTouching {
                body,
                angle,
                radius,
                ulps,
            } => {
                let b = model.pick(i(&body))?;
                let Shape::Circle { radius: rb } = model.live[b].1.shape else {
                    return None;
                };
                let width = w.max.x - w.min.x;
                let r = width / 200.0 * (0.5 + f32::from(radius % 32) / 4.0);
                let angle = f32::from(angle) / 65536.0 * std::f32::consts::TAU;
                // The same placement as the harness's: skipped where it would
                // not be finite.
                let c = model.live[b].1.position;
                let p = c + Vec2::new(angle.cos(), angle.sin()) * (rb + r);
                let fine = p.x.abs() < f32::MAX / 2.0 && p.y.abs() < f32::MAX / 2.0;
                if full || !fine || !r.is_finite() {
                    return None;
                }
                Op::AddTouching(b, angle, r, i32::from(ulps % 4))
            }
            OpIn::Remove(k) => Op::Remove(i(&k)),
            OpIn::RemoveStale(k) => Op::RemoveStale(i(&k)),
            OpIn::Teleport(k, p) => {
                let b = model.pick(i(&k))?;
                let p = p.resolve(w);
                if expected(&model.live[b].1.shape, p) == Expect::Accept {
                    Op::Move(b, p)
                } else {
                    Op::TryMove(b, p)
                }
            }
            OpIn::Nudge(k, dx, dy) => {
                let b = model.pick(i(&k))?;
                let at = model.live[b].1.position;
                let p = Vec2::new(stepped(at.x, dx, w), stepped(at.y, dy, w));
                let d = Vec2::new(p.x - at.x, p.y - at.y);
                // The harness adds the step back: only when that gives `p`.
                let exact = at + d == p;
                if exact && expected(&model.live[b].1.shape, p) == Expect::Accept {
                    Op::Nudge(b, d.x, d.y)
                } else {
                    Op::TryMove(b, p)
                }
            }
            OpIn::Reshape(k, s) => {
                let b = model.pick(i(&k))?;
                let s = s.resolve(w);
                if expected(&s, model.live[b].1.position) == Expect::Accept {
                    Op::Reshape(b, s)
                } else {
                    Op::TryReshape(b, s)
                }
            }
            OpIn::SetLayer(k, l) => Op::SetLayer(i(&k), l.resolve()),
            OpIn::SetMask(k, m) => Op::SetMask(i(&k), m.resolve()),
            OpIn::BadAdd(b) => Op::BadAdd(b),
            OpIn::BadMove(k, b) => Op::BadMove(i(&k), b),
            OpIn::BadShape(k) => Op::BadShape(i(&k)),
            OpIn::Step => Op::Step,
            OpIn::Clear => Op::Clear,
        })
    }
}

/// What to ask: any shape (invalid ones find nothing), points and rays
/// anywhere, zero directions, and `max_dist` NaN, infinite or negative.
#[derive(Arbitrary, Debug, Clone)]
pub struct ProbeIn {
    pub shape: ShapeIn,
    pub pos: PosIn,
    pub point: PosIn,
    pub mask: BitsIn,
    pub k: u8,
    pub origin: PosIn,
    pub direction: DirIn,
    pub max_dist: DistIn,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum DirIn {
    /// Along an axis: grazes edges exactly.
    Axis(u8),
    Zero,
    Raw(f32, f32),
    Angle(u16),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum DistIn {
    Infinite,
    Nan,
    Negative,
    Len(LenIn),
}

impl ProbeIn {
    pub fn resolve(&self, w: Aabb) -> Probe {
        let direction = match self.direction {
            DirIn::Axis(a) => [
                Vec2::new(1.0, 0.0),
                Vec2::new(-1.0, 0.0),
                Vec2::new(0.0, 1.0),
                Vec2::new(0.0, -1.0),
            ][usize::from(a) % 4],
            DirIn::Zero => Vec2::ZERO,
            DirIn::Raw(x, y) => Vec2::new(x, y),
            DirIn::Angle(a) => {
                let t = f32::from(a) / 65536.0 * std::f32::consts::TAU;
                Vec2::new(t.cos(), t.sin())
            }
        };
        Probe {
            shape: self.shape.resolve(w),
            pos: self.pos.resolve(w),
            point: self.point.resolve(w),
            mask: self.mask.resolve(),
            k: usize::from(self.k % 12),
            ray: Ray::new(self.origin.resolve(w), direction),
            max_dist: match self.max_dist {
                DistIn::Infinite => f32::INFINITY,
                DistIn::Nan => f32::NAN,
                DistIn::Negative => -1.0,
                DistIn::Len(l) => l.resolve(w) * 4.0,
            },
        }
    }
}

/// Runs the operations of an input on a world and its model, resolving
/// each against the model as it is then; checks the bodies after every
/// operation, the queries every [`QUERY_EVERY`], and a final step. Panics
/// (naming `target`, the operation and what differed) on any disagreement.
pub fn run<O>(
    target: &'static str,
    config: &ConfigIn,
    bounds: &BoundsIn,
    ops: &[O],
    probes: &[ProbeIn],
    resolve: impl Fn(&O, Aabb, &Model) -> Option<Op>,
) {
    common::count_input(target);
    let w = bounds.resolve();
    let mut h = Harness::new(w, config.resolve());
    let mut queries = 0;
    for (step, op_in) in ops.iter().take(MAX_OPS).enumerate() {
        let Some(op) = resolve(op_in, w, &h.model) else {
            continue;
        };
        common::count_op();
        if let Err(e) = h.apply(&op) {
            panic!("{target}: op #{step} {op:?}: {e}");
        }
        if let Err(e) = check_bodies(&h.world, &h.model) {
            panic!("{target}: bodies after op #{step} {op:?}: {e}");
        }
        if step % QUERY_EVERY == QUERY_EVERY - 1 && !probes.is_empty() {
            let p = probes[queries % probes.len()].resolve(w);
            queries += 1;
            if let Err(e) = check_queries(&h.world, &h.model, &p) {
                panic!("{target}: queries after op #{step} {op:?} with {p:?}: {e}");
            }
        }
    }
    // A final step always agrees too.
    if let Err(e) = check_step(&mut h.world, &mut h.model) {
        panic!("{target}: final step: {e}");
    }
}
