//! A random mix of every mutating operation, over boxes from every
//! generator: what the soak test and the structured tests drive the tree
//! with.

#![allow(dead_code, unreachable_pub)]

use quadrat::{Aabb, Circle, Ray, Vec2};

use super::shapes::{self, Kind, Rng};
use super::tree::{Harness, Op, Probe};

/// One box: mostly from a generator of a random kind, now and then an item
/// already in the tree (exact duplicates) or a box at the edge of `f32`.
pub fn random_box(rng: &mut Rng, world: Aabb, h: &Harness) -> Aabb {
    match rng.below(10) {
        0 if !h.model.live.is_empty() => {
            h.model.live[rng.below(h.model.live.len() as u64) as usize].1
        }
        1 => shapes::edge_boxes(1, rng)[0],
        _ => {
            let kind = Kind::ALL[rng.below(Kind::ALL.len() as u64) as usize];
            shapes::boxes(kind, world, 1, rng)[0]
        }
    }
}

fn random_boxes(rng: &mut Rng, world: Aabb, h: &Harness, max: u64) -> Vec<Aabb> {
    let kind = Kind::ALL[rng.below(Kind::ALL.len() as u64) as usize];
    let n = rng.below(max) as usize;
    if rng.chance(80) {
        shapes::boxes(kind, world, n, rng)
    } else {
        (0..n).map(|_| random_box(rng, world, h)).collect()
    }
}

fn step(rng: &mut Rng, world: Aabb) -> f32 {
    let scale = (f64::from(world.max.x) - f64::from(world.min.x)) as f32;
    rng.range(-0.02, 0.02) * scale.min(f32::MAX)
}

/// A random operation, weighted towards inserts, removes and moves, with
/// bulk builds, drains, rebuilds and panicking caller code now and then.
pub fn random_op(rng: &mut Rng, world: Aabb, h: &Harness) -> Op {
    let live = h.model.live.len() as u64;
    let any = |rng: &mut Rng| rng.below(live.max(1)) as usize;
    // Large trees drain more than they grow, so that brute force stays cheap
    // and trees fill and empty again and again.
    if live > 1500 && rng.chance(40) {
        return Op::Remove(any(rng));
    }
    match rng.below(100) {
        0..=29 => Op::Insert(random_box(rng, world, h)),
        30..=44 => Op::Remove(any(rng)),
        45..=46 => Op::RemoveStale(rng.below(1 << 16) as usize),
        47..=56 => Op::Update(any(rng), random_box(rng, world, h)),
        57..=71 => Op::Nudge(any(rng), step(rng, world), step(rng, world)),
        72..=74 => Op::InsertMany(random_boxes(rng, world, h, 300)),
        75 => Op::ParInsertMany(random_boxes(rng, world, h, 300)),
        76..=78 => Op::UpdateAll {
            dx: step(rng, world),
            dy: step(rng, world),
            jumps: random_boxes(rng, world, h, 8),
            refuse: rng.chance(20),
        },
        79 => Op::ParUpdateAll {
            dx: step(rng, world),
            dy: step(rng, world),
            jumps: random_boxes(rng, world, h, 8),
        },
        80 => Op::UpdateAllPanics {
            dx: step(rng, world),
            dy: step(rng, world),
            at: rng.below(live.max(1) * 2) as u32,
        },
        81 => Op::Retain(2 + rng.below(6) as u32),
        82 => Op::RetainPanics(rng.below(live.max(1) * 2) as u32),
        83 => {
            let boxes = random_boxes(rng, world, h, 300);
            let at = rng.below(boxes.len() as u64 + 2) as usize;
            Op::InsertManyPanics(boxes, at)
        }
        84 => Op::Rebuild,
        85 => Op::ParRebuild,
        86 => Op::InsertInvalid(Aabb::new([1.0, f32::NAN], [2.0, 2.0])),
        87 => Op::InsertInvalid(Aabb::new([2.0, 0.0], [1.0, 1.0])),
        88 if rng.chance(30) => Op::Clear,
        88 => Op::Refill {
            frames: 1 + rng.below(4) as usize,
            dx: step(rng, world) * 0.1,
            dy: step(rng, world) * 0.1,
            cut: if rng.chance(25) {
                rng.below(live / 4 + 1) as usize
            } else {
                0
            },
            swap: rng.chance(25).then(|| (any(rng), any(rng))),
        },
        89..=90 => Op::InsertEach(random_boxes(rng, world, h, 40)),
        91 => Op::ShrinkToFit,
        92 => Op::Reserve(rng.below(2000) as usize),
        // Drain: remove a run of items in insertion order.
        _ => Op::Remove(0),
    }
}

/// A probe anywhere in (or around) the world, or aimed at an item.
pub fn random_probe(h: &Harness, rng: &mut Rng, world: Aabb) -> Probe {
    let b = random_box(rng, world, h);
    let c = random_box(rng, world, h);
    let r = (f64::from(c.max.x) - f64::from(b.min.x))
        .abs()
        .min(f64::from(f32::MAX)) as f32;
    let dir = Vec2::new(c.min.x * 0.5 - b.min.x * 0.5, c.min.y * 0.5 - b.min.y * 0.5);
    Probe {
        area: b.union(&c),
        circle: Circle::new(b.center(), r),
        point: c.max,
        k: rng.below(8) as usize,
        ray: Ray::new(
            b.min,
            if dir == Vec2::ZERO {
                Vec2::new(0.0, -1.0)
            } else {
                dir
            },
        ),
        max_dist: if rng.chance(50) { f32::INFINITY } else { r },
    }
}
