//! Seeded generators of boxes, shared by the model tests, the structured
//! tests, the soak test and the fuzz targets. Random boxes alone never build
//! the shapes that break trees: grids, exact touching, piles on one point or
//! on split lines, and worlds at the edges of `f32`.

#![allow(dead_code, unreachable_pub)]

use quadrat::{Aabb, Vec2};

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[lo, hi)`, computed in `f64` so huge ranges do not overflow.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let t = f64::from(self.unit());
        let v = f64::from(lo) + (f64::from(hi) - f64::from(lo)) * t;
        (v as f32).clamp(lo, hi)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// Shuffles in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

/// The shapes of input the generators make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Uniform random boxes of mixed sizes, some outside the world.
    Random,
    /// Points on a regular grid, offset from the split lines.
    GridPoints,
    /// Equal boxes on a grid, each touching its neighbours exactly.
    TouchingGrid,
    /// Many items on one point.
    Pile,
    /// Items on the world's split lines of several levels.
    SplitLines,
    /// A few huge boxes among many tiny ones.
    MixedSizes,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Random,
        Kind::GridPoints,
        Kind::TouchingGrid,
        Kind::Pile,
        Kind::SplitLines,
        Kind::MixedSizes,
    ];
}

/// A world box for a scale: `scale` is the world's width and height, placed
/// at `offset` (the lower-left corner).
pub fn world(offset: Vec2, scale: f32) -> Aabb {
    Aabb::new(offset, [offset.x + scale, offset.y + scale])
}

/// Worlds from the edges of `f32`: tiny, huge, subnormal (one a few units
/// of the smallest subnormal wide), far off-centre, and the whole finite
/// range.
pub fn extreme_worlds() -> Vec<Aabb> {
    vec![
        world(Vec2::new(0.0, 0.0), 1e-30),
        world(Vec2::new(-5e-31, -5e-31), 1e-30),
        world(Vec2::new(0.0, 0.0), 1e-40), // subnormal
        // Odd multiples of the smallest subnormal, where halving rounds.
        Aabb::new(
            [f32::from_bits(1), -f32::from_bits(3)],
            [f32::from_bits(3), f32::from_bits(5)],
        ),
        world(Vec2::new(0.0, 0.0), 1e30),
        world(Vec2::new(-5e29, -5e29), 1e30),
        world(Vec2::new(1e30, -1e30), 1e20),
        Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]),
        Aabb::new([f32::MAX * 0.5, f32::MAX * 0.5], [f32::MAX, f32::MAX]),
        world(Vec2::new(0.0, 0.0), 100.0),
    ]
}

/// `n` boxes of the given kind in (and around) `world`.
pub fn boxes(kind: Kind, world: Aabb, n: usize, rng: &mut Rng) -> Vec<Aabb> {
    // In f64, so that worlds spanning the whole f32 range do not overflow.
    let w = f64::from(world.max.x) - f64::from(world.min.x);
    let h = f64::from(world.max.y) - f64::from(world.min.y);
    let at = |fx: f32, fy: f32| -> Vec2 {
        let x = f64::from(world.min.x) + w * f64::from(fx);
        let y = f64::from(world.min.y) + h * f64::from(fy);
        Vec2::new(clamp_f32(x), clamp_f32(y))
    };
    let mut out = Vec::with_capacity(n);
    match kind {
        Kind::Random => {
            for _ in 0..n {
                let outside = rng.chance(10);
                let (fx, fy) = if outside {
                    (rng.range(-1.5, 2.5), rng.range(-1.5, 2.5))
                } else {
                    (rng.unit(), rng.unit())
                };
                let size = match rng.below(4) {
                    0 => 0.0,
                    1 => rng.unit() * 0.01,
                    2 => rng.unit() * 0.1,
                    _ => rng.unit() * 0.6,
                };
                out.push(sized(at(fx, fy), at(fx + size, fy + size * rng.unit())));
            }
        }
        Kind::GridPoints | Kind::TouchingGrid => {
            let side = (n as f64).sqrt().ceil().max(1.0) as usize;
            let cell = 1.0 / side as f32;
            for i in 0..n {
                let (gx, gy) = ((i % side) as f32, (i / side) as f32);
                if kind == Kind::GridPoints {
                    let p = at((gx + 0.1) * cell, (gy + 0.1) * cell);
                    out.push(Aabb::from_point(p));
                } else {
                    out.push(sized(
                        at(gx * cell, gy * cell),
                        at((gx + 1.0) * cell, (gy + 1.0) * cell),
                    ));
                }
            }
        }
        Kind::Pile => {
            let p = at(rng.unit(), rng.unit());
            for i in 0..n {
                if i % 7 == 6 {
                    out.push(sized(p, at(rng.unit(), rng.unit())));
                } else {
                    out.push(Aabb::from_point(p));
                }
            }
        }
        Kind::SplitLines => {
            for _ in 0..n {
                let level = rng.below(6) as i32;
                let k = rng.below(1 << level) as f32;
                let line = (2.0 * k + 1.0) / (1u32 << (level + 1)) as f32;
                let along = rng.unit();
                let p = if rng.chance(50) {
                    at(line, along)
                } else {
                    at(along, line)
                };
                let size = if rng.chance(50) {
                    0.0
                } else {
                    rng.unit() * 0.02
                };
                out.push(sized(p, at(fx_of(p, world) + size, fy_of(p, world) + size)));
            }
        }
        Kind::MixedSizes => {
            for _ in 0..n {
                let (fx, fy) = (rng.unit(), rng.unit());
                let size = if rng.chance(5) {
                    0.3 + rng.unit()
                } else {
                    rng.unit() * 0.005
                };
                out.push(sized(at(fx, fy), at(fx + size, fy + size)));
            }
        }
    }
    out
}

/// Boxes with subnormal sizes and coordinates near `±f32::MAX`, mixed with
/// ordinary ones: valid inputs at the very edge of `f32`.
pub fn edge_boxes(n: usize, rng: &mut Rng) -> Vec<Aabb> {
    let tiny = f32::from_bits(1);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let b = match rng.below(8) {
            0 => Aabb::new([0.0, 0.0], [tiny, tiny]),
            1 => {
                let x = rng.range(-1e-38, 1e-38);
                Aabb::new([x, x], [x + tiny * rng.below(100) as f32, x])
            }
            2 => Aabb::new([f32::MAX, f32::MAX], [f32::MAX, f32::MAX]),
            3 => Aabb::new([-f32::MAX, -f32::MAX], [-f32::MAX, -f32::MAX]),
            4 => Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]),
            5 => {
                let x = rng.range(-f32::MAX, f32::MAX);
                let y = rng.range(-f32::MAX, f32::MAX);
                Aabb::new([x.min(y), x.min(y)], [x.max(y), x.max(y)])
            }
            6 => {
                let x = rng.range(-1e30, 1e30);
                Aabb::from_point([x, -x])
            }
            _ => {
                let x = rng.range(-100.0, 100.0);
                Aabb::new([x, x], [x + rng.unit(), x + rng.unit()])
            }
        };
        out.push(b);
    }
    out
}

fn clamp_f32(v: f64) -> f32 {
    (v as f32).clamp(-f32::MAX, f32::MAX)
}

/// Where `p` lies across the world, as a fraction of its width and height.
fn fx_of(p: Vec2, world: Aabb) -> f32 {
    let w = f64::from(world.max.x) - f64::from(world.min.x);
    ((f64::from(p.x) - f64::from(world.min.x)) / w.max(f64::MIN_POSITIVE)) as f32
}

fn fy_of(p: Vec2, world: Aabb) -> f32 {
    let h = f64::from(world.max.y) - f64::from(world.min.y);
    ((f64::from(p.y) - f64::from(world.min.y)) / h.max(f64::MIN_POSITIVE)) as f32
}

/// The box spanning `a` to `b`, whichever corner is lower.
fn sized(a: Vec2, b: Vec2) -> Aabb {
    Aabb::new(a.min(b), a.max(b))
}
