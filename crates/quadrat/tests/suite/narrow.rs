//! Exact shapes and the narrow phase against independent checks.
//!
//! The checks compute in `f64`, by methods the library does not use:
//!
//! - the **signed distance** of two convex shapes from their support
//!   functions, maximised over directions: `max_u (min_B b·u - max_A a·u)`
//!   is the distance when they are apart and minus the penetration depth
//!   when they overlap, and its best `u` is a direction of least
//!   penetration;
//! - the **separation** found by sampling the boundary of one shape and
//!   measuring each sample's distance to the other;
//! - per-shape **signed distance functions** for points, and convex
//!   minimisation and bisection along a ray for ray casts.
//!
//! Thousands of seeded random pairs (positions on a grid of quarters half of
//! the time, so that touching and coincident cases are common), hand-built
//! exact touching, nested and degenerate cases, and invalid input.

use quadrat::scenario::Rng;
use quadrat::{Aabb, Contact, Error, Ray, RayHit, Shape, Vec2};

type V = (f64, f64);

/// A tolerance for comparing `f32` results with `f64` checks, for
/// coordinates and sizes of at most about 10.
const TOL: f64 = 1e-4;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Body {
    shape: Shape,
    pos: Vec2,
}

fn body(shape: Shape, pos: impl Into<Vec2>) -> Body {
    Body {
        shape,
        pos: pos.into(),
    }
}

fn contact(a: Body, b: Body) -> Option<Contact> {
    a.shape.contact(a.pos, &b.shape, b.pos)
}

fn intersects(a: Body, b: Body) -> bool {
    a.shape.intersects(a.pos, &b.shape, b.pos)
}

fn circle(r: f32) -> Shape {
    Shape::Circle { radius: r }
}

fn rect(hx: f32, hy: f32) -> Shape {
    Shape::Aabb {
        half_extents: Vec2::new(hx, hy),
    }
}

fn capsule(hx: f32, hy: f32, r: f32) -> Shape {
    Shape::Capsule {
        half_segment: Vec2::new(hx, hy),
        radius: r,
    }
}

// ---------------------------------------------------------------------------
// Random shapes

fn random_size(rng: &mut Rng) -> f32 {
    match rng.below(8) {
        0 => 0.0,
        1 | 2 => rng.below(13) as f32 * 0.25,
        _ => rng.range(0.0, 3.0),
    }
}

fn random_coord(rng: &mut Rng) -> f32 {
    if rng.below(2) == 0 {
        (rng.below(33) as f32 - 16.0) * 0.25
    } else {
        rng.range(-4.0, 4.0)
    }
}

fn random_signed(rng: &mut Rng) -> f32 {
    let s = random_size(rng);
    if rng.below(2) == 0 { s } else { -s }
}

fn random_shape(rng: &mut Rng) -> Shape {
    match rng.below(4) {
        0 => Shape::Point,
        1 => circle(random_size(rng)),
        2 => rect(random_size(rng), random_size(rng)),
        _ => {
            let (hx, hy) = match rng.below(4) {
                0 => (0.0, 0.0),
                1 => (random_signed(rng), 0.0),
                2 => (0.0, random_signed(rng)),
                _ => (rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
            };
            capsule(hx, hy, random_size(rng))
        }
    }
}

fn random_body(rng: &mut Rng) -> Body {
    let shape = random_shape(rng);
    body(shape, [random_coord(rng), random_coord(rng)])
}

// ---------------------------------------------------------------------------
// The independent checks, in f64

fn v(p: Vec2) -> V {
    (f64::from(p.x), f64::from(p.y))
}

fn dot(a: V, b: V) -> f64 {
    a.0 * b.0 + a.1 * b.1
}

fn len(a: V) -> f64 {
    a.0.hypot(a.1)
}

fn sub(a: V, b: V) -> V {
    (a.0 - b.0, a.1 - b.1)
}

fn add_scaled(a: V, b: V, t: f64) -> V {
    (a.0 + b.0 * t, a.1 + b.1 * t)
}

/// `max_{p in shape} p·u` for the shape centred on the origin.
fn extent(shape: &Shape, u: V) -> f64 {
    match *shape {
        Shape::Point => 0.0,
        Shape::Circle { radius } => f64::from(radius),
        Shape::Aabb { half_extents: h } => f64::from(h.x) * u.0.abs() + f64::from(h.y) * u.1.abs(),
        Shape::Capsule {
            half_segment: s,
            radius,
        } => dot(v(s), u).abs() + f64::from(radius),
    }
}

/// Signed distance from `p` to the body: negative inside.
fn sdf(b: &Body, p: V) -> f64 {
    let d = sub(p, v(b.pos));
    match b.shape {
        Shape::Point => len(d),
        Shape::Circle { radius } => len(d) - f64::from(radius),
        Shape::Aabb { half_extents: h } => {
            let q = (d.0.abs() - f64::from(h.x), d.1.abs() - f64::from(h.y));
            len((q.0.max(0.0), q.1.max(0.0))) + q.0.max(q.1).min(0.0)
        }
        Shape::Capsule {
            half_segment: s,
            radius,
        } => {
            // From the end point -s, along 2s.
            let s = v(s);
            let a = (-s.0, -s.1);
            let ab = (2.0 * s.0, 2.0 * s.1);
            let ab2 = dot(ab, ab);
            let t = if ab2 > 0.0 {
                (dot(sub(d, a), ab) / ab2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            len(sub(d, add_scaled(a, ab, t))) - f64::from(radius)
        }
    }
}

fn dir(theta: f64) -> V {
    (theta.cos(), theta.sin())
}

/// `min_B b·u - max_A a·u`: how far apart the bodies are along `u`.
fn gap_along(a: &Body, b: &Body, u: V) -> f64 {
    dot(sub(v(b.pos), v(a.pos)), u) - extent(&a.shape, u) - extent(&b.shape, u)
}

/// The signed distance of two bodies (distance apart, or minus the
/// penetration depth), by maximising [`gap_along`] over all directions:
/// a grid, the axes and segment directions where the maximum may sit on a
/// kink, then golden-section search around every local maximum of the grid.
fn signed_distance(a: &Body, b: &Body) -> f64 {
    const N: usize = 720;
    let step = std::f64::consts::TAU / N as f64;
    let g = |theta: f64| gap_along(a, b, dir(theta));
    let mut best = f64::NEG_INFINITY;
    let mut special = vec![];
    for k in 0..4 {
        special.push(k as f64 * std::f64::consts::FRAC_PI_2);
    }
    for s in [a, b] {
        if let Shape::Capsule {
            half_segment: h, ..
        } = s.shape
        {
            let base = f64::from(h.y).atan2(f64::from(h.x));
            for k in 0..4 {
                special.push(base + k as f64 * std::f64::consts::FRAC_PI_2);
            }
        }
    }
    let c = sub(v(b.pos), v(a.pos));
    if c != (0.0, 0.0) {
        special.push(c.1.atan2(c.0));
    }
    for theta in special {
        best = best.max(g(theta));
    }
    let grid: Vec<f64> = (0..N).map(|i| g(i as f64 * step)).collect();
    for i in 0..N {
        let (prev, next) = (grid[(i + N - 1) % N], grid[(i + 1) % N]);
        best = best.max(grid[i]);
        if grid[i] >= prev && grid[i] >= next {
            let (mut lo, mut hi) = ((i as f64 - 1.0) * step, (i as f64 + 1.0) * step);
            let r = (5f64.sqrt() - 1.0) / 2.0;
            for _ in 0..60 {
                let (m1, m2) = (hi - r * (hi - lo), lo + r * (hi - lo));
                if g(m1) < g(m2) {
                    lo = m1;
                } else {
                    hi = m2;
                }
            }
            best = best.max(g(0.5 * (lo + hi)));
        }
    }
    best
}

/// A point of the body's boundary, for `t` in `[0, 1)`.
fn boundary_point(b: &Body, t: f64) -> V {
    let c = v(b.pos);
    let tau = std::f64::consts::TAU;
    match b.shape {
        Shape::Point => c,
        Shape::Circle { radius } => add_scaled(c, dir(t * tau), f64::from(radius)),
        Shape::Aabb { half_extents: h } => {
            let (hx, hy) = (f64::from(h.x), f64::from(h.y));
            let per = 4.0 * (hx + hy);
            let mut s = t * per;
            let corners = [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy), (-hx, -hy)];
            for k in 0..4 {
                let (p, q) = (corners[k], corners[k + 1]);
                let l = len(sub(q, p));
                if s <= l || k == 3 {
                    let f = if l > 0.0 { (s / l).min(1.0) } else { 0.0 };
                    return (c.0 + p.0 + (q.0 - p.0) * f, c.1 + p.1 + (q.1 - p.1) * f);
                }
                s -= l;
            }
            unreachable!()
        }
        Shape::Capsule {
            half_segment: h,
            radius,
        } => {
            // Around the capsule: the side at +n from the -d end to the +d
            // end, the round +d end, the side at -n back, the round -d end.
            let (h, r) = (v(h), f64::from(radius));
            let l = len(h);
            let (d, n) = if l > 0.0 {
                ((h.0 / l, h.1 / l), (-h.1 / l, h.0 / l))
            } else {
                ((1.0, 0.0), (0.0, 1.0))
            };
            let base = d.1.atan2(d.0);
            let half_turn = tau / 2.0;
            let q = t * 4.0;
            let (part, f) = ((q.floor() as usize).min(3), q - q.floor());
            match part {
                0 => add_scaled(add_scaled(c, n, r), d, l * (2.0 * f - 1.0)),
                1 => add_scaled(
                    add_scaled(c, d, l),
                    dir(base + half_turn / 2.0 - f * half_turn),
                    r,
                ),
                2 => add_scaled(add_scaled(c, n, -r), d, l * (1.0 - 2.0 * f)),
                _ => add_scaled(
                    add_scaled(c, d, -l),
                    dir(base - half_turn / 2.0 - f * half_turn),
                    r,
                ),
            }
        }
    }
}

/// The smallest distance from a boundary point of `a` to `b` (negative when
/// inside `b`): sampling, then ternary search around the best sample.
fn boundary_gap(a: &Body, b: &Body) -> f64 {
    const N: usize = 512;
    let f = |t: f64| sdf(b, boundary_point(a, t.rem_euclid(1.0)));
    let (mut best_i, mut best) = (0, f64::INFINITY);
    for i in 0..N {
        let d = f(i as f64 / N as f64);
        if d < best {
            (best_i, best) = (i, d);
        }
    }
    let (mut lo, mut hi) = (
        (best_i as f64 - 1.0) / N as f64,
        (best_i as f64 + 1.0) / N as f64,
    );
    for _ in 0..60 {
        let (m1, m2) = ((2.0 * lo + hi) / 3.0, (lo + 2.0 * hi) / 3.0);
        if f(m1) < f(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    best.min(f(0.5 * (lo + hi)))
}

/// What sampling says about two bodies: `Some(true)` overlapping by more
/// than the tolerance, `Some(false)` apart by more, `None` too close to say.
fn sampled_verdict(a: &Body, b: &Body) -> Option<bool> {
    let gap = boundary_gap(a, b).min(boundary_gap(b, a));
    let nested = sdf(b, v(a.pos)) < -TOL || sdf(a, v(b.pos)) < -TOL;
    if gap < -TOL || nested {
        Some(true)
    } else if gap > TOL {
        Some(false)
    } else {
        None
    }
}

#[test]
fn the_independent_checks_agree_with_closed_forms() {
    let mut rng = Rng::new(0x5EED_000B);
    for _ in 0..300 {
        // Two circles: the distance between centres less the radii.
        let (ra, rb) = (rng.range(0.0, 2.0), rng.range(0.0, 2.0));
        let (a, b) = (
            body(circle(ra), [0.0, 0.0]),
            body(circle(rb), [rng.range(-5.0, 5.0), rng.range(-5.0, 5.0)]),
        );
        let expected = len(v(b.pos)) - f64::from(ra) - f64::from(rb);
        assert!((signed_distance(&a, &b) - expected).abs() < 1e-9);
        // Two boxes: the gap, or minus the smaller overlap.
        let (ha, hb) = (
            Vec2::new(rng.unit(), rng.unit()),
            Vec2::new(rng.unit(), rng.unit()),
        );
        let (a, b) = (
            body(rect(ha.x, ha.y), [0.0, 0.0]),
            body(
                rect(hb.x, hb.y),
                [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)],
            ),
        );
        let gx = f64::from(b.pos.x).abs() - f64::from(ha.x) - f64::from(hb.x);
        let gy = f64::from(b.pos.y).abs() - f64::from(ha.y) - f64::from(hb.y);
        let expected = if gx > 0.0 || gy > 0.0 {
            len((gx.max(0.0), gy.max(0.0)))
        } else {
            gx.max(gy)
        };
        assert!((signed_distance(&a, &b) - expected).abs() < 1e-9);
        // Any two bodies apart: sampling the boundary finds the same distance.
        let (a, b) = (random_body(&mut rng), random_body(&mut rng));
        let sd = signed_distance(&a, &b);
        if sd > 0.0 {
            assert!((boundary_gap(&a, &b) - sd).abs() < 1e-6, "{a:?} {b:?}");
        }
        // The boundary is continuous and on the shape.
        let n = 1000;
        for i in 0..n {
            let p = boundary_point(&a, f64::from(i) / f64::from(n));
            let q = boundary_point(&a, f64::from(i + 1) / f64::from(n) % 1.0);
            assert!(len(sub(p, q)) < 0.05 && sdf(&a, p).abs() < 1e-9, "{a:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// The checks that every contact must pass

/// Checks `contact(a, b)` against the support-function signed distance, the
/// boundary sampling, symmetry, and the separation property. Returns the
/// signed distance.
fn check_pair(a: Body, b: Body) -> f64 {
    let sd = signed_distance(&a, &b);
    let c = contact(a, b);
    let ctx = format!("{a:?} {b:?}: contact {c:?}, signed distance {sd}");

    // `intersects` is `contact.is_some()`, and swapping negates the normal.
    assert_eq!(intersects(a, b), c.is_some(), "{ctx}");
    assert_eq!(intersects(b, a), c.is_some(), "{ctx}");
    let swapped = contact(b, a);
    if a == b {
        assert_eq!(swapped, c, "{ctx}");
    } else {
        let expected = c.map(|c| Contact {
            normal: -c.normal,
            ..c
        });
        assert_eq!(swapped, expected, "{ctx}");
    }

    // Decided the same way as the support functions, up to rounding.
    if sd > TOL {
        assert!(c.is_none(), "{ctx}");
    }
    if sd < -TOL {
        assert!(c.is_some(), "{ctx}");
    }
    // ...and as the boundary sampling.
    if let Some(verdict) = sampled_verdict(&a, &b) {
        assert_eq!(c.is_some(), verdict, "{ctx} (sampling)");
    }

    let Some(c) = c else { return sd };
    let n = v(c.normal);
    let depth = f64::from(c.depth);
    assert!(c.depth >= 0.0, "{ctx}");
    assert!((len(n) - 1.0).abs() < 1e-5, "{ctx}: normal not unit");
    // The depth is the penetration depth, and the normal a direction that
    // achieves it: moving `b` by `normal * depth` just separates them.
    assert!((depth + sd).abs() <= TOL, "{ctx}: depth");
    let un = (n.0 / len(n), n.1 / len(n));
    assert!(
        (gap_along(&a, &b, un) + depth).abs() <= TOL,
        "{ctx}: normal"
    );
    // The point lies in both shapes.
    let p = v(c.point);
    assert!(sdf(&a, p) <= TOL && sdf(&b, p) <= TOL, "{ctx}: point");

    // Moving either by the depth along the normal leaves them touching.
    let moved_b = body(b.shape, b.pos + c.normal * c.depth);
    let moved_a = body(a.shape, a.pos - c.normal * c.depth);
    for (a2, b2) in [(a, moved_b), (moved_a, b)] {
        let sd2 = signed_distance(&a2, &b2);
        assert!(sd2.abs() <= TOL, "{ctx}: after separating, {sd2}");
        if let Some(c2) = contact(a2, b2) {
            assert!(
                f64::from(c2.depth) <= TOL,
                "{ctx}: after separating, {c2:?}"
            );
        }
    }
    sd
}

#[test]
fn random_pairs_match_independent_checks() {
    let mut rng = Rng::new(0x5EED_0001);
    let (mut apart, mut overlapping, mut nested, mut zero_size) = (0, 0, 0, 0);
    for _ in 0..6000 {
        let (a, b) = (random_body(&mut rng), random_body(&mut rng));
        let sd = check_pair(a, b);
        if sd < -TOL {
            overlapping += 1;
        } else if sd > TOL {
            apart += 1;
        }
        let inside = |x: &Body, y: &Body| {
            (0..16).all(|i| sdf(y, boundary_point(x, f64::from(i) / 16.0)) < -TOL)
        };
        if inside(&a, &b) || inside(&b, &a) {
            nested += 1;
        }
        if a.shape.aabb(a.pos).area() == 0.0 || b.shape.aabb(b.pos).area() == 0.0 {
            zero_size += 1;
        }
    }
    // The generator reaches every regime. (Every contact is also moved to
    // touching by `check_pair`; exact touching has its own tests below.)
    assert!(apart > 1000 && overlapping > 1000, "{apart} {overlapping}");
    assert!(nested > 200, "{nested}");
    assert!(zero_size > 500, "{zero_size}");
}

#[test]
fn random_pairs_of_every_kind() {
    // Every ordered pair of kinds, evenly, including capsules at any angle.
    let kinds: [fn(&mut Rng) -> Shape; 4] = [
        |_| Shape::Point,
        |r| circle(r.range(0.0, 2.0)),
        |r| rect(r.range(0.0, 2.0), r.range(0.0, 2.0)),
        |r| capsule(r.range(-2.0, 2.0), r.range(-2.0, 2.0), r.range(0.0, 1.0)),
    ];
    let mut rng = Rng::new(0x5EED_0002);
    for (i, make_a) in kinds.iter().enumerate() {
        for (j, make_b) in kinds.iter().enumerate() {
            let mut hits = 0;
            for _ in 0..300 {
                let a = body(
                    make_a(&mut rng),
                    [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)],
                );
                let b = body(
                    make_b(&mut rng),
                    [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)],
                );
                if check_pair(a, b) <= 0.0 {
                    hits += 1;
                }
            }
            // Points meet points only on exact equality.
            if i > 0 || j > 0 {
                assert!(hits > 30, "kinds {i} {j}: {hits} overlaps");
            }
        }
    }
}

#[test]
fn large_and_small_scales() {
    // The same checks with everything scaled up and down by powers of two,
    // which keeps the arithmetic exact in proportion.
    let mut rng = Rng::new(0x5EED_0003);
    for _ in 0..500 {
        let (a, b) = (random_body(&mut rng), random_body(&mut rng));
        let base = contact(a, b);
        for k in [-20i32, -6, 6, 20] {
            let s = 2f32.powi(k);
            let scale = |x: Body| {
                let shape = match x.shape {
                    Shape::Point => Shape::Point,
                    Shape::Circle { radius } => circle(radius * s),
                    Shape::Aabb { half_extents: h } => rect(h.x * s, h.y * s),
                    Shape::Capsule {
                        half_segment: h,
                        radius,
                    } => capsule(h.x * s, h.y * s, radius * s),
                };
                body(shape, x.pos * s)
            };
            let scaled = contact(scale(a), scale(b));
            assert_eq!(scaled.is_some(), base.is_some(), "{a:?} {b:?} at scale {s}");
            if let (Some(c), Some(d)) = (base, scaled) {
                assert!((c.depth * s - d.depth).abs() <= 1e-5 * s, "{c:?} {d:?}");
                assert!((c.normal - d.normal).length() <= 1e-5, "{c:?} {d:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Exact touching cases

/// Pythagorean triples `(a, b, c)` with `a² + b² = c²`.
const TRIPLES: [(f32, f32, f32); 5] = [
    (3.0, 4.0, 5.0),
    (5.0, 12.0, 13.0),
    (8.0, 15.0, 17.0),
    (7.0, 24.0, 25.0),
    (20.0, 21.0, 29.0),
];

/// `x` moved by one unit in the last place, away from zero.
fn next_up(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}

/// `x` moved by one unit in the last place towards `+inf` when `sign` is
/// positive, `-inf` otherwise (`x` not zero).
fn ulp_away(x: f32, sign: f32) -> f32 {
    if (x > 0.0) == (sign > 0.0) {
        next_up(x)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

#[test]
fn circles_touching_at_exact_distance() {
    for (p, q, h) in TRIPLES {
        for k in [-4, 0, 3] {
            let s = 2f32.powi(k);
            for (sx, sy) in [(1.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)] {
                let ra = h * s * 0.25;
                let rb = h * s * 0.75;
                let a = body(circle(ra), [1.5, -2.25]);
                let b = body(circle(rb), [1.5 + sx * p * s, -2.25 + sy * q * s]);
                let c = contact(a, b).expect("touching circles intersect");
                assert_eq!(c.depth, 0.0, "{a:?} {b:?}");
                let expected = Vec2::new(sx * p / h, sy * q / h);
                assert!((c.normal - expected).length() < 1e-6, "{c:?}");
                check_pair(a, b);
                // A few units in the last place further apart: no contact.
                let mut far = b;
                let mut steps = 0;
                while intersects(a, far) {
                    far.pos = Vec2::new(ulp_away(far.pos.x, sx), ulp_away(far.pos.y, sy));
                    steps += 1;
                }
                assert!(steps <= 4, "{a:?} {b:?}: {steps} steps to separate");
                // A point on the rim is inside.
                let rim = Vec2::new(1.5 + sx * p * s, -2.25 + sy * q * s);
                assert!(circle(h * s).contains_point([1.5, -2.25], rim));
                assert_eq!(circle(h * s).distance_to_point([1.5, -2.25], rim), 0.0);
            }
        }
    }
}

/// A shape on the grid of quarters, axis-aligned: exact in `f32`.
fn grid_body(rng: &mut Rng) -> Body {
    let q = |rng: &mut Rng, n: u64| rng.below(n) as f32 * 0.25;
    let shape = match rng.below(5) {
        0 => Shape::Point,
        1 => circle(q(rng, 9)),
        2 => rect(q(rng, 9), q(rng, 9)),
        3 => capsule(q(rng, 9), 0.0, q(rng, 5)),
        _ => capsule(0.0, q(rng, 9), q(rng, 5)),
    };
    body(shape, [q(rng, 25) - 3.0, q(rng, 25) - 3.0])
}

#[test]
fn random_exact_touching_on_a_grid() {
    // Axis-aligned shapes on a grid of quarters often touch exactly: along
    // an axis, the arithmetic is exact, so they must touch with depth 0.
    let mut rng = Rng::new(0x5EED_000A);
    let mut touching = 0;
    for _ in 0..20_000 {
        let (a, b) = (grid_body(&mut rng), grid_body(&mut rng));
        let sd = signed_distance(&a, &b);
        if sd.abs() > 1e-9 {
            continue;
        }
        let c = contact(a, b).unwrap_or_else(|| panic!("{a:?} {b:?} touch"));
        // Cores that overlap give the radii as depth; otherwise 0.
        let axis_touch = (c.normal.x == 0.0) != (c.normal.y == 0.0);
        if axis_touch {
            assert_eq!(c.depth, 0.0, "{a:?} {b:?} {c:?}");
            touching += 1;
        }
        if touching % 8 == 0 {
            check_pair(a, b);
        }
    }
    assert!(touching > 500, "{touching}");
}

#[test]
fn boxes_sharing_an_edge_or_a_corner() {
    let a = body(rect(1.0, 0.5), [0.0, 0.0]); // [-1, 1] x [-0.5, 0.5]
    let cases = [
        (body(rect(0.25, 0.25), [1.25, 0.0]), Vec2::new(1.0, 0.0)), // right edge
        (body(rect(0.25, 0.25), [-1.25, 0.3]), Vec2::new(-1.0, 0.0)), // left edge
        (body(rect(2.0, 0.75), [0.0, 1.25]), Vec2::new(0.0, 1.0)),  // top, wider
        (body(rect(0.5, 0.5), [0.5, -1.0]), Vec2::new(0.0, -1.0)),  // bottom
        (body(rect(0.25, 0.25), [1.25, 0.75]), Vec2::new(1.0, 0.0)), // corner: x first
    ];
    for (b, normal) in cases {
        let c = contact(a, b).expect("touching boxes intersect");
        assert_eq!((c.depth, c.normal), (0.0, normal), "{b:?}");
        assert!(a.shape.aabb(a.pos).intersects(&b.shape.aabb(b.pos)));
        check_pair(a, b);
        // Nudged apart by one unit in the last place: no contact.
        let nudged = body(b.shape, b.pos + normal * 1e-7);
        assert!(!intersects(a, nudged), "{nudged:?}");
    }
    // A box and a box agree exactly with their bounding boxes, even for
    // coordinates that are not exact sums.
    let mut rng = Rng::new(0x5EED_0004);
    for _ in 0..20_000 {
        let a = body(
            rect(rng.range(0.0, 1.0), rng.range(0.0, 1.0)),
            [rng.unit(), rng.unit()],
        );
        let b = body(
            rect(rng.range(0.0, 1.0), rng.range(0.0, 1.0)),
            [rng.unit() * 3.0, rng.unit()],
        );
        let boxes = a.shape.aabb(a.pos).intersects(&b.shape.aabb(b.pos));
        assert_eq!(intersects(a, b), boxes, "{a:?} {b:?}");
        // The same for a point against a box.
        let p = Vec2::new(rng.unit() * 2.0, rng.unit());
        assert_eq!(
            a.shape.contains_point(a.pos, p),
            a.shape.aabb(a.pos).contains_point(p)
        );
    }
}

#[test]
fn mixed_kinds_touching() {
    let cases = [
        // A circle touching a box face, and a box corner at distance 5.
        (
            body(circle(1.0), [0.0, 2.5]),
            body(rect(2.0, 1.5), [0.0, 0.0]),
        ),
        (
            body(circle(5.0), [5.0, 6.0]),
            body(rect(1.0, 1.0), [1.0, 1.0]),
        ),
        // A capsule lying on a box, and standing on its corner.
        (
            body(capsule(3.0, 0.0, 0.5), [0.0, 1.5]),
            body(rect(1.0, 1.0), [0.0, 0.0]),
        ),
        (
            body(capsule(0.0, 1.0, 0.25), [1.0, 2.25]),
            body(rect(1.0, 1.0), [0.0, 0.0]),
        ),
        // Parallel capsules side by side, and end to end.
        (
            body(capsule(2.0, 0.0, 0.5), [0.0, 0.0]),
            body(capsule(1.0, 0.0, 0.25), [0.5, 0.75]),
        ),
        (
            body(capsule(2.0, 0.0, 0.5), [0.0, 0.0]),
            body(capsule(1.0, 0.0, 0.25), [3.75, 0.0]),
        ),
        // A capsule's round end touching a circle at distance 13.
        (
            body(capsule(0.0, 2.0, 4.0), [0.0, 0.0]),
            body(circle(9.0), [5.0, 14.0]),
        ),
        // A diagonal capsule against a circle along its normal (3, 4) / 5.
        (
            body(capsule(4.0, -3.0, 1.0), [0.0, 0.0]),
            body(circle(4.0), [3.0, 4.0]),
        ),
        // Points on boundaries.
        (
            body(Shape::Point, [1.0, 0.25]),
            body(rect(1.0, 1.0), [0.0, 0.0]),
        ),
        (
            body(Shape::Point, [1.0, 1.0]),
            body(rect(1.0, 1.0), [0.0, 0.0]),
        ),
        (
            body(Shape::Point, [3.0, 4.0]),
            body(circle(5.0), [0.0, 0.0]),
        ),
        (
            body(Shape::Point, [0.5, 1.0]),
            body(capsule(1.0, 0.0, 1.0), [0.0, 0.0]),
        ),
        (
            body(Shape::Point, [2.0, 0.0]),
            body(capsule(1.0, 0.0, 1.0), [0.0, 0.0]),
        ),
        (
            body(Shape::Point, [1.0, 0.0]),
            body(capsule(1.0, 0.0, 0.0), [0.0, 0.0]),
        ),
    ];
    for (a, b) in cases {
        let c = contact(a, b).unwrap_or_else(|| panic!("{a:?} {b:?} touch"));
        assert!(c.depth.abs() <= 1e-6, "{a:?} {b:?}: {c:?}");
        check_pair(a, b);
        check_pair(b, a);
        // Moved apart along the normal by a little: no contact.
        let apart = body(b.shape, b.pos + c.normal * 1e-3);
        assert!(!intersects(a, apart), "{a:?} {apart:?}");
    }
}

// ---------------------------------------------------------------------------
// Nested and degenerate cases

#[test]
fn nested_shapes() {
    let big_box = body(rect(4.0, 2.0), [0.0, 0.0]);
    // A circle inside a box: the depth reaches the nearest face, plus the
    // radius. Equal distances to both y faces: +y comes first.
    let c = contact(body(circle(1.0), [0.5, 0.0]), big_box).unwrap();
    assert_eq!(
        (c.normal, c.depth, c.point),
        (Vec2::new(0.0, 1.0), 3.0, Vec2::new(0.5, 0.0))
    );
    let c = contact(body(circle(1.0), [3.5, 0.25]), big_box).unwrap();
    assert_eq!((c.normal, c.depth), (Vec2::new(-1.0, 0.0), 1.5));
    // A circle inside a circle, off centre.
    let c = contact(
        body(circle(10.0), [0.0, 0.0]),
        body(circle(1.0), [0.0, 2.0]),
    )
    .unwrap();
    assert_eq!((c.normal, c.depth), (Vec2::new(0.0, 1.0), 9.0));
    // A box inside a circle; a capsule inside a box; a box inside a capsule.
    let cases = [
        (
            body(circle(5.0), [0.0, 0.0]),
            body(rect(1.0, 2.0), [0.5, 0.5]),
        ),
        (big_box, body(capsule(1.0, 0.5, 0.25), [-1.0, 0.0])),
        (
            body(capsule(3.0, 3.0, 2.0), [0.0, 0.0]),
            body(rect(0.5, 0.5), [1.0, 1.0]),
        ),
        (
            body(circle(2.0), [0.0, 0.0]),
            body(Shape::Point, [0.5, -0.5]),
        ),
    ];
    for (a, b) in cases {
        assert!(check_pair(a, b) < -TOL, "{a:?} {b:?}");
        check_pair(b, a);
    }
}

#[test]
fn contact_points_are_in_the_middle_of_the_overlap() {
    let point = |a: Body, b: Body| {
        let p = contact(a, b).unwrap().point;
        assert_eq!(contact(b, a).unwrap().point, p);
        p
    };
    // Two boxes: the centre of the overlap rectangle.
    let p = point(
        body(rect(1.0, 1.0), [0.0, 0.0]),
        body(rect(1.0, 2.0), [1.5, 2.0]),
    );
    assert_eq!(p, Vec2::new(0.75, 0.5));
    // A capsule through a box: the middle of the part of its segment inside.
    let p = point(
        body(capsule(3.0, 0.0, 0.5), [0.0, 0.0]),
        body(rect(1.0, 1.0), [0.5, 0.0]),
    );
    assert_eq!(p, Vec2::new(0.5, 0.0));
    // Crossing segments: where they cross.
    let p = point(
        body(capsule(2.0, 2.0, 0.25), [0.0, 0.0]),
        body(capsule(1.0, -1.0, 0.5), [1.0, 0.0]),
    );
    assert!((p - Vec2::new(0.5, 0.5)).length() < 1e-6, "{p:?}");
    // Collinear segments: the middle of their common part.
    let p = point(
        body(capsule(2.0, 0.0, 0.25), [0.0, 0.0]),
        body(capsule(1.0, 0.0, 0.5), [2.0, 0.0]),
    );
    assert_eq!(p, Vec2::new(1.5, 0.0));
    // Round shapes apart at their cores: halfway between the two surfaces
    // along the normal, within both.
    let p = point(body(circle(2.0), [0.0, 0.0]), body(circle(2.0), [3.0, 0.0]));
    assert_eq!(p, Vec2::new(1.5, 0.0));
    let p = point(
        body(circle(10.0), [0.0, 0.0]),
        body(circle(1.0), [0.0, 2.0]),
    );
    assert_eq!(p, Vec2::new(0.0, 1.5));
    let p = point(
        body(Shape::Point, [0.0, 1.0]),
        body(capsule(0.0, 2.0, 1.0), [0.5, 0.0]),
    );
    assert_eq!(p, Vec2::new(0.0, 1.0));
}

#[test]
fn coincident_centres() {
    let at = Vec2::new(1.0, -2.0);
    let x = Vec2::new(1.0, 0.0);
    // Two circles: the normal is along x, one way or the other, and swapping
    // the arguments negates it.
    let (a, b) = (body(circle(1.0), at), body(circle(2.0), at));
    let c = contact(a, b).unwrap();
    assert_eq!((c.depth, c.point), (3.0, at));
    assert!(c.normal == x || c.normal == -x, "{c:?}");
    assert_eq!(contact(b, a).unwrap().normal, -c.normal);
    // The same circle twice: the same answer both ways.
    let c = contact(a, a).unwrap();
    assert_eq!((c.normal, c.depth, c.point), (x, 2.0, at));
    // Point in point: only on exact equality, depth 0.
    let p = body(Shape::Point, at);
    assert_eq!(
        contact(p, p),
        Some(Contact {
            normal: x,
            depth: 0.0,
            point: at
        })
    );
    assert!(!intersects(p, body(Shape::Point, [1.0, next_up(-2.0)])));
    // Point at a circle's centre: the radius, along x.
    let c = contact(p, body(circle(1.5), at)).unwrap();
    assert_eq!((c.normal, c.depth), (x, 1.5));
    // Boxes on one centre: the axis of least penetration, either way along it.
    let c = contact(body(rect(1.0, 3.0), at), body(rect(2.0, 1.0), at)).unwrap();
    assert_eq!((c.normal.x.abs(), c.normal.y, c.depth), (1.0, 0.0, 3.0));
    let c = contact(body(rect(3.0, 1.0), at), body(rect(2.0, 0.5), at)).unwrap();
    assert_eq!((c.normal.x, c.normal.y.abs(), c.depth), (0.0, 1.0, 1.5));
    // A circle centred in a box: the circle comes first in the fixed order,
    // so the normal is +x here and -x the other way round.
    let c = contact(body(circle(0.5), at), body(rect(2.0, 2.0), at)).unwrap();
    assert_eq!((c.normal, c.depth), (x, 2.5));
    let c = contact(body(rect(2.0, 2.0), at), body(circle(0.5), at)).unwrap();
    assert_eq!((c.normal, c.depth), (-x, 2.5));
    // A circle centred on a capsule's segment: perpendicular to the segment.
    let c = contact(body(circle(1.0), at), body(capsule(2.0, 0.0, 0.5), at + x)).unwrap();
    assert!(c.normal == Vec2::new(0.0, 1.0) || c.normal == Vec2::new(0.0, -1.0));
    assert_eq!(c.depth, 1.5);
    // Two crossing segments: push one off the nearer end of the other.
    let c = contact(
        body(capsule(2.0, 0.0, 0.0), at),
        body(capsule(0.0, 1.0, 0.0), at + x * 0.5),
    )
    .unwrap();
    assert_eq!(c.depth, 1.0);
    for (a, b) in [
        (a, b),
        (p, body(circle(1.5), at)),
        (body(rect(1.0, 3.0), at), body(rect(2.0, 1.0), at)),
        (
            body(capsule(1.0, 1.0, 0.5), at),
            body(capsule(-1.0, 1.0, 0.5), at),
        ),
        (body(capsule(1.0, 1.0, 0.5), at), body(rect(0.5, 0.25), at)),
    ] {
        check_pair(a, b);
    }
}

#[test]
fn zero_size_shapes_are_points() {
    let mut rng = Rng::new(0x5EED_0005);
    let points = [circle(0.0), rect(0.0, 0.0), capsule(0.0, 0.0, 0.0)];
    for _ in 0..2000 {
        let other = random_body(&mut rng);
        let p = Vec2::new(random_coord(&mut rng), random_coord(&mut rng));
        let reference = contact(body(Shape::Point, p), other);
        for zero in points {
            let c = contact(body(zero, p), other);
            assert_eq!(
                c.is_some(),
                reference.is_some(),
                "{zero:?} at {p:?}, {other:?}"
            );
            if let (Some(c), Some(r)) = (c, reference) {
                assert!((c.depth - r.depth).abs() <= 1e-5, "{c:?} {r:?}");
                assert!((c.point - r.point).length() <= 1e-5, "{c:?} {r:?}");
            }
            assert_eq!(
                zero.contains_point(p, other.pos),
                Shape::Point.contains_point(p, other.pos)
            );
        }
    }
    // A box of zero width is a segment.
    let seg = body(rect(0.0, 1.0), [0.0, 0.0]);
    assert!(intersects(seg, body(Shape::Point, [0.0, 1.0])));
    assert!(!intersects(seg, body(Shape::Point, [1e-6, 0.0])));
    assert!(intersects(seg, body(capsule(1.0, 0.0, 0.0), [1.0, 0.5])));
}

// ---------------------------------------------------------------------------
// Invalid input

fn bad_shapes() -> Vec<(Shape, Error)> {
    let nan = f32::NAN;
    vec![
        (
            circle(-1.0),
            Error::Negative {
                field: "radius",
                value: -1.0,
            },
        ),
        (
            circle(f32::INFINITY),
            Error::NonFinite {
                field: "radius",
                value: f32::INFINITY,
            },
        ),
        (
            rect(1.0, -0.5),
            Error::Negative {
                field: "half_extents.y",
                value: -0.5,
            },
        ),
        (
            rect(-1.0, 2.0),
            Error::Negative {
                field: "half_extents.x",
                value: -1.0,
            },
        ),
        (
            capsule(1.0, 0.0, -0.25),
            Error::Negative {
                field: "radius",
                value: -0.25,
            },
        ),
        (
            capsule(f32::NEG_INFINITY, 0.0, 1.0),
            Error::NonFinite {
                field: "half_segment.x",
                value: f32::NEG_INFINITY,
            },
        ),
        (
            capsule(0.0, 1.0, nan),
            Error::NonFinite {
                field: "radius",
                value: nan,
            },
        ),
        (
            rect(nan, 1.0),
            Error::NonFinite {
                field: "half_extents.x",
                value: nan,
            },
        ),
        (
            circle(nan),
            Error::NonFinite {
                field: "radius",
                value: nan,
            },
        ),
    ]
}

#[test]
fn invalid_input_is_refused_without_panicking() {
    for (shape, expected) in bad_shapes() {
        let err = shape.validate().unwrap_err();
        // NaN != NaN: compare the messages.
        assert_eq!(err.to_string(), expected.to_string(), "{shape:?}");
        assert!(!shape.is_valid());
    }
    assert_eq!(
        circle(-1.0).validate().unwrap_err().to_string(),
        "radius (-1) is negative"
    );
    assert!(capsule(-3.0, -4.0, 0.0).validate().is_ok()); // any direction

    let good = [
        Shape::Point,
        circle(1.0),
        rect(1.0, 1.0),
        capsule(1.0, 0.0, 1.0),
    ];
    let ray = Ray::new([-5.0, 0.0], [1.0, 0.0]);
    for (bad, _) in bad_shapes() {
        for g in good {
            assert!(!bad.intersects([0.0, 0.0], &g, [0.0, 0.0]), "{bad:?}");
            assert!(!g.intersects([0.0, 0.0], &bad, [0.0, 0.0]), "{bad:?}");
            assert_eq!(bad.contact([0.0, 0.0], &g, [0.0, 0.0]), None);
            assert_eq!(g.contact([0.0, 0.0], &bad, [0.0, 0.0]), None);
        }
        assert!(!bad.contains_point([0.0, 0.0], [0.0, 0.0]));
        assert!(bad.distance_to_point([0.0, 0.0], [5.0, 0.0]).is_nan());
        assert_eq!(bad.raycast([0.0, 0.0], ray, 100.0), None);
    }
    for g in good {
        for p in [
            [f32::NAN, 0.0],
            [0.0, f32::INFINITY],
            [f32::NEG_INFINITY, 1.0],
        ] {
            assert!(!g.intersects(p, &g, [0.0, 0.0]));
            assert!(!g.intersects([0.0, 0.0], &g, p));
            assert!(!g.contains_point(p, [0.0, 0.0]));
            assert!(!g.contains_point([0.0, 0.0], p));
            assert!(g.distance_to_point([0.0, 0.0], p).is_nan());
            assert_eq!(g.raycast(p, ray, 100.0), None);
            assert_eq!(g.raycast([0.0, 0.0], Ray::new(p, [1.0, 0.0]), 100.0), None);
            assert_eq!(g.raycast([0.0, 0.0], Ray::new([-5.0, 0.0], p), 100.0), None);
        }
        assert_eq!(
            g.raycast([0.0, 0.0], Ray::new([-5.0, 0.0], [0.0, 0.0]), 100.0),
            None
        );
        assert_eq!(g.raycast([0.0, 0.0], ray, f32::NAN), None);
        assert_eq!(g.raycast([0.0, 0.0], ray, -1.0), None);
    }
}

#[test]
fn huge_values_never_panic_nor_give_non_finite_contacts() {
    let mut rng = Rng::new(0x5EED_0006);
    for _ in 0..5000 {
        let big = |rng: &mut Rng| {
            let b = random_body(rng);
            let s = 2f32.powi(rng.below(250) as i32 - 125);
            let shape = match b.shape {
                Shape::Point => Shape::Point,
                Shape::Circle { radius } => circle(radius * s),
                Shape::Aabb { half_extents: h } => rect(h.x * s, h.y * s),
                Shape::Capsule {
                    half_segment: h,
                    radius,
                } => capsule(h.x * s, h.y * s, radius * s),
            };
            body(shape, b.pos * s)
        };
        let (a, b) = (big(&mut rng), big(&mut rng));
        if let Some(c) = contact(a, b) {
            assert!(c.depth.is_finite() && c.depth >= 0.0, "{a:?} {b:?} {c:?}");
            assert!(
                c.normal.is_finite() && c.point.is_finite(),
                "{a:?} {b:?} {c:?}"
            );
        }
        let _ = a.shape.distance_to_point(a.pos, b.pos);
        let ray = Ray::new(b.pos, a.pos - b.pos);
        if let Some(hit) = a.shape.raycast(a.pos, ray, f32::INFINITY) {
            assert!(hit.dist.is_finite() && hit.normal.is_finite());
        }
    }
}

// ---------------------------------------------------------------------------
// Bounding boxes and point queries

#[test]
fn bounding_boxes_are_tight() {
    let mut rng = Rng::new(0x5EED_0007);
    for _ in 0..3000 {
        let b = random_body(&mut rng);
        let bb = b.shape.aabb(b.pos);
        let p = v(b.pos);
        for (u, edge) in [
            ((1.0, 0.0), f64::from(bb.max.x)),
            ((-1.0, 0.0), -f64::from(bb.min.x)),
            ((0.0, 1.0), f64::from(bb.max.y)),
            ((0.0, -1.0), -f64::from(bb.min.y)),
        ] {
            let support = dot(p, u) + extent(&b.shape, u);
            assert!((support - edge).abs() <= 1e-5, "{b:?}: {bb:?}");
        }
        for i in 0..64 {
            let q = boundary_point(&b, f64::from(i) / 64.0);
            let inside = f64::from(bb.min.x) - 1e-5 <= q.0
                && q.0 <= f64::from(bb.max.x) + 1e-5
                && f64::from(bb.min.y) - 1e-5 <= q.1
                && q.1 <= f64::from(bb.max.y) + 1e-5;
            assert!(inside, "{b:?}: {q:?} outside {bb:?}");
        }
        // Whatever the narrow phase finds, the bounding boxes find too.
        let other = random_body(&mut rng);
        if intersects(b, other) {
            let grown = other.shape.aabb(other.pos).expand(1e-5);
            assert!(bb.intersects(&grown), "{b:?} {other:?}");
        }
    }
    assert_eq!(Shape::Point.aabb([2.0, 3.0]), Aabb::from_point([2.0, 3.0]));
}

#[test]
fn point_queries_match_distance_functions() {
    let mut rng = Rng::new(0x5EED_0008);
    let mut inside = 0;
    for _ in 0..20_000 {
        let b = random_body(&mut rng);
        let p = Vec2::new(random_coord(&mut rng), random_coord(&mut rng));
        let d = b.shape.distance_to_point(b.pos, p);
        let expected = sdf(&b, v(p)).max(0.0);
        assert!(
            (f64::from(d) - expected).abs() <= TOL,
            "{b:?} {p:?}: {d} vs {expected}"
        );
        let contains = b.shape.contains_point(b.pos, p);
        assert_eq!(contains, d == 0.0, "{b:?} {p:?}");
        assert_eq!(
            contains,
            intersects(b, body(Shape::Point, p)),
            "{b:?} {p:?}"
        );
        assert_eq!(
            contains,
            intersects(body(Shape::Point, p), b),
            "{b:?} {p:?}"
        );
        inside += usize::from(contains);
    }
    assert!(inside > 1500, "{inside}");
    // On the boundary, exactly.
    let r = rect(1.0, 0.5);
    for p in [[1.0, 0.0], [1.0, 0.5], [-1.0, -0.5], [0.25, -0.5]] {
        assert!(r.contains_point([0.0, 0.0], p));
    }
    assert!(!r.contains_point([0.0, 0.0], [next_up(1.0), 0.0]));
    let cap = capsule(0.0, 2.0, 0.625);
    for p in [[0.625, 0.0], [-0.625, 2.0], [0.0, 2.625], [0.375, -2.5]] {
        assert!(cap.contains_point([0.0, 0.0], p), "{p:?}");
    }
    assert!(!cap.contains_point([0.0, 0.0], [0.0, next_up(2.625)]));
    assert!(!cap.contains_point([0.0, 0.0], [next_up(0.625), 1.0]));
    assert_eq!(Shape::Point.distance_to_point([0.0, 0.0], [3.0, 4.0]), 5.0);
}

// ---------------------------------------------------------------------------
// Ray casts

/// The first `t` in `[0, max]` where `o + t u` is in the body, by convex
/// minimisation of the distance function along the ray and bisection.
/// Also returns the smallest distance function value reached.
fn ray_oracle(b: &Body, o: V, u: V, max: f64) -> (Option<f64>, f64) {
    let f = |t: f64| sdf(b, add_scaled(o, u, t));
    if f(0.0) <= 0.0 {
        return (Some(0.0), f(0.0));
    }
    let (mut lo, mut hi) = (0.0, max);
    for _ in 0..200 {
        let (m1, m2) = ((2.0 * lo + hi) / 3.0, (lo + 2.0 * hi) / 3.0);
        if f(m1) < f(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let t_min = 0.5 * (lo + hi);
    let f_min = f(t_min).min(f(max));
    if f_min > 0.0 {
        return (None, f_min);
    }
    let t_min = if f(max) < f(t_min) { max } else { t_min };
    let (mut lo, mut hi) = (0.0, t_min);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if f(m) > 0.0 {
            lo = m;
        } else {
            hi = m;
        }
    }
    (Some(hi), f_min)
}

fn check_ray(b: Body, ray: Ray, max: f32) -> Option<RayHit> {
    let hit = b.shape.raycast(b.pos, ray, max);
    let ctx = format!("{b:?} {ray:?} max {max}: {hit:?}");
    let len_d = len(v(ray.direction));
    let u = (
        f64::from(ray.direction.x) / len_d,
        f64::from(ray.direction.y) / len_d,
    );
    let o = v(ray.origin);
    let (_, f_min) = ray_oracle(&b, o, u, f64::from(max));
    if f_min < -TOL {
        assert!(hit.is_some(), "{ctx}: the ray goes inside");
    }
    let Some(hit) = hit else {
        assert!(f_min >= -TOL, "{ctx}");
        return None;
    };
    let n = v(hit.normal);
    assert!((len(n) - 1.0).abs() < 1e-5, "{ctx}: normal not unit");
    assert!(hit.dist >= 0.0 && hit.dist <= max, "{ctx}");
    let t = f64::from(hit.dist);
    let x = add_scaled(o, u, t);
    if b.shape.contains_point(b.pos, ray.origin) {
        // Starting inside: distance 0, the normal faces back along the ray.
        assert!(sdf(&b, o) <= TOL, "{ctx}");
        assert_eq!(hit.dist, 0.0, "{ctx}");
        assert!(
            (n.0 + u.0).abs() < 1e-6 && (n.1 + u.1).abs() < 1e-6,
            "{ctx}"
        );
        return Some(hit);
    }
    // On the boundary, and not inside anywhere before...
    assert!(sdf(&b, x).abs() <= TOL, "{ctx}: not on the boundary");
    let (_, before) = ray_oracle(&b, o, u, t);
    assert!(before >= -TOL, "{ctx}: inside earlier, {before}");
    // ...with an outward normal there: stepping out along it moves straight
    // away from the shape, and it faces the ray.
    let eps = 1e-3;
    assert!(
        (sdf(&b, add_scaled(x, n, eps)) - eps).abs() <= TOL,
        "{ctx}: normal"
    );
    assert!(dot(n, u) <= TOL, "{ctx}: normal faces away from the ray");
    Some(hit)
}

#[test]
fn random_rays_match_marching() {
    let mut rng = Rng::new(0x5EED_0009);
    let (mut hits, mut inside) = (0, 0);
    for _ in 0..6000 {
        let b = random_body(&mut rng);
        let origin = Vec2::new(rng.range(-8.0, 8.0), rng.range(-8.0, 8.0));
        let aim = match rng.below(4) {
            0 => Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
            1 => [
                Vec2::new(1.0, 0.0),
                Vec2::new(-1.0, 0.0),
                Vec2::new(0.0, 1.0),
                Vec2::new(0.0, -1.0),
            ][rng.below(4) as usize],
            _ => b.pos + Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)) - origin,
        };
        if aim.x == 0.0 && aim.y == 0.0 {
            continue;
        }
        let scale = 2f32.powi(rng.below(16) as i32 - 8);
        let ray = Ray::new(origin, aim * scale);
        let max = if rng.below(4) == 0 {
            rng.range(0.0, 8.0)
        } else {
            30.0
        };
        if let Some(hit) = check_ray(b, ray, max) {
            hits += 1;
            inside += usize::from(hit.dist == 0.0);
            // The same ray with an unbounded reach hits at the same place.
            assert_eq!(b.shape.raycast(b.pos, ray, f32::INFINITY), Some(hit));
            // A reach just short of the hit misses it.
            if hit.dist > 0.0 {
                let short = f32::from_bits(hit.dist.to_bits() - 1);
                assert_eq!(b.shape.raycast(b.pos, ray, short), None);
            }
        }
    }
    assert!(hits > 1200 && inside > 100, "{hits} {inside}");
}

#[test]
fn rays_analytic() {
    let hit = |shape: Shape, pos: [f32; 2], o: [f32; 2], d: [f32; 2], max: f32| {
        let b = body(shape, pos);
        check_ray(b, Ray::new(o, d), max)
    };
    let h = |dist: f32, nx: f32, ny: f32| {
        Some(RayHit {
            dist,
            normal: Vec2::new(nx, ny),
        })
    };
    // A circle head on, whatever the length of the direction.
    for scale in [1e-3, 1.0, 7.0, 1e4] {
        assert_eq!(
            hit(circle(5.0), [10.0, 0.0], [0.0, 0.0], [scale, 0.0], 100.0),
            h(5.0, -1.0, 0.0)
        );
    }
    // Along the direction (3, 4): the circle at (15, 20) of radius 5 is
    // entered at distance 20 with normal -(3, 4) / 5.
    let r = hit(circle(5.0), [15.0, 20.0], [0.0, 0.0], [0.3, 0.4], 100.0).unwrap();
    assert!((r.dist - 20.0).abs() < 1e-5 && (r.normal - Vec2::new(-0.6, -0.8)).length() < 1e-6);
    // Grazing a circle and a box edge: closed shapes are hit.
    assert_eq!(
        hit(circle(1.0), [0.0, 1.0], [-5.0, 0.0], [1.0, 0.0], 10.0),
        h(5.0, 0.0, -1.0)
    );
    assert_eq!(
        hit(rect(1.0, 1.0), [0.0, 0.0], [-5.0, 1.0], [1.0, 0.0], 10.0),
        h(4.0, -1.0, 0.0)
    );
    assert_eq!(
        hit(
            rect(1.0, 1.0),
            [0.0, 0.0],
            [-5.0, next_up(1.0)],
            [1.0, 0.0],
            10.0
        ),
        None
    );
    // Into a box corner diagonally: the x side.
    let r = hit(rect(1.0, 1.0), [0.0, 0.0], [-3.0, -3.0], [1.0, 1.0], 10.0).unwrap();
    assert_eq!(r.normal, Vec2::new(-1.0, 0.0));
    assert!((r.dist - 8f32.sqrt()).abs() < 1e-6);
    // A reach equal to the distance hits; any shorter misses.
    assert_eq!(
        hit(rect(1.0, 1.0), [0.0, 0.0], [-5.0, 0.0], [1.0, 0.0], 4.0),
        h(4.0, -1.0, 0.0)
    );
    assert_eq!(
        hit(rect(1.0, 1.0), [0.0, 0.0], [-5.0, 0.0], [1.0, 0.0], 3.999),
        None
    );
    // Pointing away, and passing beside.
    assert_eq!(
        hit(circle(1.0), [0.0, 0.0], [5.0, 0.0], [1.0, 0.0], 100.0),
        None
    );
    assert_eq!(
        hit(rect(1.0, 1.0), [0.0, 0.0], [-5.0, 2.0], [1.0, 0.0], 100.0),
        None
    );
    // From inside, or on the boundary looking out: distance 0, normal -u.
    assert_eq!(
        hit(circle(1.0), [0.0, 0.0], [0.5, 0.0], [0.0, 2.0], 0.0),
        h(0.0, 0.0, -1.0)
    );
    assert_eq!(
        hit(rect(1.0, 1.0), [0.0, 0.0], [1.0, 0.0], [3.0, 0.0], 5.0),
        h(0.0, -1.0, 0.0)
    );
    // A capsule: the flat side, then a round end.
    let cap = capsule(2.0, 0.0, 1.0);
    assert_eq!(
        hit(cap, [0.0, 0.0], [1.5, 5.0], [0.0, -1.0], 10.0),
        h(4.0, 0.0, 1.0)
    );
    assert_eq!(
        hit(cap, [0.0, 0.0], [10.0, 0.0], [-1.0, 0.0], 10.0),
        h(7.0, 1.0, 0.0)
    );
    assert_eq!(
        hit(cap, [0.0, 0.0], [-2.0, -5.0], [0.0, 1.0], 10.0),
        h(4.0, 0.0, -1.0)
    );
    assert_eq!(hit(cap, [0.0, 0.0], [3.5, 5.0], [0.0, -1.0], 10.0), None);
    let r = hit(cap, [0.0, 0.0], [2.6, 5.0], [0.0, -1.0], 10.0).unwrap();
    assert!((r.dist - 4.2).abs() < 1e-5 && (r.normal - Vec2::new(0.6, 0.8)).length() < 1e-5);
    // A segment (capsule of radius 0) is hit on its side, normal facing the ray.
    assert_eq!(
        hit(
            capsule(0.0, 1.0, 0.0),
            [0.0, 0.0],
            [3.0, 0.5],
            [-1.0, 0.0],
            10.0
        ),
        h(3.0, 1.0, 0.0)
    );
    assert_eq!(
        hit(
            capsule(0.0, 1.0, 0.0),
            [0.0, 0.0],
            [-3.0, 0.5],
            [1.0, 0.0],
            10.0
        ),
        h(3.0, -1.0, 0.0)
    );
    // ...and at its end along its own line, where the normal is -u.
    assert_eq!(
        hit(
            capsule(0.0, 1.0, 0.0),
            [0.0, 0.0],
            [0.0, 4.0],
            [0.0, -2.0],
            10.0
        ),
        h(3.0, 0.0, 1.0)
    );
    // A point is hit only exactly; its normal is -u.
    assert_eq!(
        hit(Shape::Point, [6.0, 8.0], [0.0, 0.0], [3.0, 4.0], 20.0),
        h(10.0, -0.6, -0.8)
    );
    assert_eq!(
        hit(Shape::Point, [6.0, 8.0], [0.0, 0.0], [3.0, 4.1], 20.0),
        None
    );
    assert_eq!(
        hit(Shape::Point, [6.0, 8.0], [6.0, 8.0], [3.0, 4.0], 0.0),
        h(0.0, -0.6, -0.8)
    );
}

/// A ray that passes a circle of radius 0 (a point) a few parts in 10¹²
/// to one side misses it: the shape's own test, rounded, would call it
/// tangent, but the ray does not enter the point's box, and the world's
/// ray cast, which prunes by boxes, must give what `Shape::raycast` gives
/// body by body. Found by fuzzing `CollisionWorld::raycast` against brute
/// force.
#[test]
fn a_ray_passing_beside_a_point_misses_it() {
    use quadrat::{Aabb, CollisionWorld, Filter, Layers, Ray, Shape};
    let dot = Shape::Circle { radius: 0.0 };
    let at = [4.148803e-39, 9.861033e-12];
    let ray = Ray::new([15.0, 15.0], [-3.3110888e-33, -3.3110888e-33]);
    assert_eq!(dot.raycast(at, ray, f32::INFINITY), None);
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    world.add(dot, at, Filter::ALL, ());
    assert_eq!(world.raycast(ray, f32::INFINITY, Layers::ALL), None);
    // Through the point itself, it is hit.
    let through = Ray::new([15.0, 15.0], [-1.0, -1.0]);
    let hit = dot.raycast([0.0, 0.0], through, f32::INFINITY).unwrap();
    assert!(
        (hit.dist - 15.0 * core::f32::consts::SQRT_2).abs() < 1e-5,
        "{hit:?}"
    );
}

/// A ray from far away, in any direction, hits what its line crosses and
/// misses what it passes, at the distance the `f64` oracle finds to `f32`
/// rounding. From more than 64 sizes away `Shape::raycast` starts its
/// `f32` tests near the shape; that point was computed along the ray's
/// direction rounded to a unit vector in `f32`, which tilts the ray by a
/// few parts in 10⁸: from 10⁸ away, by about a unit, so a ray through a
/// circle's centre missed it and one passing beside a capsule hit it. The
/// rays along an axis of `regressions::far_rays_along_an_axis_hit_what_they_cross`
/// had no rounding in their direction, and passed.
#[test]
fn far_rays_in_any_direction_hit_what_they_cross() {
    let mut rng = Rng::new(0x5EED_0013);
    let (mut hits, mut misses) = (0, 0);
    for i in 0..20_000 {
        let shape = match i % 3 {
            0 => circle(rng.range(0.5, 1.5)),
            1 => rect(rng.range(0.5, 1.5), rng.range(0.5, 1.5)),
            _ => capsule(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.5),
        };
        let b = body(shape, [rng.range(0.0, 100.0), rng.range(0.0, 100.0)]);
        let far = [1e3, 1e5, 1e7, 1e9, 1e11, 1e13][rng.below(6) as usize];
        let theta = f64::from(rng.unit()) * core::f64::consts::TAU;
        let o = Vec2::new(
            (f64::from(b.pos.x) + far * theta.cos()) as f32,
            (f64::from(b.pos.y) + far * theta.sin()) as f32,
        );
        let aim = (
            f64::from(b.pos.x) + f64::from(rng.range(-1.5, 1.5)),
            f64::from(b.pos.y) + f64::from(rng.range(-1.5, 1.5)),
        );
        let d = Vec2::new(
            (aim.0 - f64::from(o.x)) as f32,
            (aim.1 - f64::from(o.y)) as f32,
        );
        let ray = Ray::new(o, d);
        let l = len(v(d));
        let u = (f64::from(d.x) / l, f64::from(d.y) / l);
        let (want, f_min) = ray_oracle(&b, v(o), u, 2.0 * far);
        if f_min.abs() < 1e-2 {
            continue; // within rounding of grazing, at these distances
        }
        let hit = b.shape.raycast(b.pos, ray, f32::INFINITY);
        let ctx = format!("{b:?} {ray:?}: {hit:?}, oracle {want:?} ({f_min})");
        assert_eq!(hit.is_some(), want.is_some(), "{ctx}");
        let (Some(hit), Some(want)) = (hit, want) else {
            misses += 1;
            continue;
        };
        hits += 1;
        let ulp = f64::from(hit.dist.next_up() - hit.dist);
        assert!(
            (f64::from(hit.dist) - want).abs() <= 4.0 * ulp + 1e-3,
            "{ctx}"
        );
        let n = v(hit.normal);
        assert!((len(n) - 1.0).abs() < 1e-5, "{ctx}: normal not unit");
        assert!(dot(n, u) <= TOL, "{ctx}: normal faces away from the ray");
    }
    assert!(
        hits > 4_000 && misses > 4_000,
        "{hits} hits, {misses} misses"
    );
}

/// A ray that reaches a shape without area at a point (a point, a circle
/// of radius 0, a capsule of radius 0 at an end) gets the reversed unit
/// direction of the ray as its normal, as `Shape::raycast` documents; it
/// got the rounding left of the vector from the point to the hit, which
/// often pointed along the ray. The rays here pass exactly through the
/// point: small whole directions from whole multiples of them away.
#[test]
fn rays_reaching_a_point_face_it() {
    use quadrat::{CollisionWorld, Filter, Layers};
    let mut rng = Rng::new(0x5EED_0014);
    let mut hits = 0;
    for _ in 0..4_000 {
        let p = Vec2::new(random_coord(&mut rng), random_coord(&mut rng));
        let d = Vec2::new(rng.below(9) as f32 - 4.0, rng.below(9) as f32 - 4.0);
        if d.x == 0.0 && d.y == 0.0 {
            continue;
        }
        let o = p - d * (1 + rng.below(6)) as f32;
        let ray = Ray::new(o, d);
        let l = len(v(d));
        let back = Vec2::new((-f64::from(d.x) / l) as f32, (-f64::from(d.y) / l) as f32);
        for shape in [Shape::Point, circle(0.0)] {
            let Some(hit) = shape.raycast(p, ray, f32::INFINITY) else {
                continue;
            };
            hits += 1;
            let ctx = format!("{shape:?} at {p:?}, {ray:?}: {hit:?}");
            assert!((f64::from(hit.dist) - len(v(p - o))).abs() < 1e-5, "{ctx}");
            assert!((hit.normal - back).length() < 1e-6, "{ctx}: not {back:?}");
        }
    }
    assert!(hits > 4_000, "{hits}");
    // A segment (a capsule of radius 0) met end on, along its line.
    for (h, o, d) in [
        ([0.3, 0.4], [-3.0, -4.0], [3.0, 4.0]),
        ([0.3, 0.4], [3.0, 4.0], [-3.0, -4.0]),
        ([2.0, 0.0], [-5.0, 0.0], [1.0, 0.0]),
        ([0.0, 2.0], [0.0, 5.0], [0.0, -1.0]),
        ([1.0, -1.0], [-4.0, 4.0], [1.0, -1.0]),
    ] {
        let ray = Ray::new(o, d);
        let hit = capsule(h[0], h[1], 0.0).raycast([0.0, 0.0], ray, f32::INFINITY);
        let hit = hit.unwrap_or_else(|| panic!("{h:?} {ray:?}"));
        let back = -Vec2::from(d) * (1.0 / Vec2::from(d).length());
        assert!(
            (hit.normal - back).length() < 1e-6,
            "{h:?} {ray:?}: {hit:?}"
        );
    }
    // Through the collision world, which casts body by body.
    let mut world = CollisionWorld::new(Aabb::new([-10.0, -10.0], [10.0, 10.0]));
    world.add(Shape::Point, [-1.0, -1.5], Filter::ALL, ());
    let (_, hit) = world
        .raycast(Ray::new([-5.0, -0.5], [4.0, -1.0]), 100.0, Layers::ALL)
        .unwrap();
    let back = Vec2::new(-4.0, 1.0) * (1.0 / 17f32.sqrt());
    assert!((hit.normal - back).length() < 1e-6, "{hit:?}");
}

/// Vectors of subnormal coordinates, which are valid directions, half
/// segments and offsets, are scaled to unit length before their length is
/// taken: the length of (1e-45, 1e-45), 1.4e-45 × √2, rounds to 1.4e-45,
/// and dividing by it gave (1, 1), a "unit" vector of length √2. That
/// tilted rays, put points 0.85 from a capsule's segment outside its
/// radius of 1, and gave contact normals longer than 1.
#[test]
fn subnormal_vectors_keep_unit_directions() {
    let tiny = f32::from_bits(1);
    let ball = circle(1.0);
    for (small, whole) in [
        ([tiny, tiny], [1.0, 1.0]),
        ([3.0 * tiny, 4.0 * tiny], [3.0, 4.0]),
        ([-tiny, 0.0], [-1.0, 0.0]),
        ([5.0 * tiny, -tiny], [5.0, -1.0]),
    ] {
        let cast = |d: [f32; 2]| ball.raycast([0.0, 0.0], Ray::new([-10.0, -10.0], d), 100.0);
        let (a, b) = (cast(small), cast(whole));
        match (a, b) {
            (Some(a), Some(b)) => {
                assert!(
                    (a.dist - b.dist).abs() <= 1e-5 * b.dist,
                    "{small:?}: {a:?} {b:?}"
                );
                assert!(
                    (a.normal - b.normal).length() < 1e-6,
                    "{small:?}: {a:?} {b:?}"
                );
            }
            (a, b) => assert_eq!(a, b, "{small:?}"),
        }
    }
    // A capsule of a subnormal segment is a circle.
    let pill = capsule(tiny, tiny, 1.0);
    assert!(pill.contains_point([0.0, 0.0], [0.6, -0.6]));
    let d = pill.distance_to_point([0.0, 0.0], [3.0, 4.0]);
    assert!((d - 4.0).abs() < 1e-6, "{d}");
    // Centres a subnormal apart: a unit normal.
    for offset in [[tiny, tiny], [tiny, 0.0], [2.0 * tiny, -3.0 * tiny]] {
        let c = ball.contact([0.0, 0.0], &ball, offset).unwrap();
        assert!((c.normal.length() - 1.0).abs() < 1e-6, "{offset:?}: {c:?}");
        assert!((c.depth - 2.0).abs() < 1e-6, "{offset:?}: {c:?}");
    }
    // Two segments of radius 0, one of subnormal length on the other: the
    // contact point lies on both (it was put at the middle of their
    // centres, 0.18 from the short one).
    let a = body(capsule(-0.0, -6e-45, 0.0), [-1.935_440_8, -1e-45]);
    let b = body(
        capsule(1e-45, 1.591_528_4, 0.0),
        [-1.935_440_8, 0.357_650_76],
    );
    let c = contact(a, b).unwrap();
    for s in [a, b] {
        let gap = s.shape.distance_to_point(s.pos, c.point);
        assert!(gap < 1e-6, "{c:?}: {gap} from {s:?}");
    }
}

/// `a + b` as its rounded sum and the exact error of that rounding.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a * b` as its rounded product and the exact error of that rounding.
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// The distance from the circle's centre `c` to the line of the ray, minus
/// the radius `r`, and the distance along the ray to its closest approach,
/// from sums and products without rounding: `c - o` as two terms each, the
/// cross product with the direction as an exact sum of eight, rounded once.
fn circle_oracle(c: Vec2, r: f32, ray: Ray) -> (f64, f64) {
    let (o, d) = (ray.origin, ray.direction);
    let (mx, ex) = two_sum(f64::from(c.x), -f64::from(o.x));
    let (my, ey) = two_sum(f64::from(c.y), -f64::from(o.y));
    let (dx, dy) = (f64::from(d.x), f64::from(d.y));
    let mut terms = Vec::new();
    for (a, b, sign) in [(mx, dy, 1.0), (ex, dy, 1.0), (my, dx, -1.0), (ey, dx, -1.0)] {
        let (p, q) = two_product(a, b);
        terms.extend([sign * p, sign * q]);
    }
    // Sum exactly, as a growing list of terms that do not overlap.
    let mut parts: Vec<f64> = Vec::new();
    for t in terms {
        let mut q = t;
        let mut next = Vec::new();
        for &x in &parts {
            let (s, e) = two_sum(q, x);
            if e != 0.0 {
                next.push(e);
            }
            q = s;
        }
        next.push(q);
        parts = next;
    }
    let cross: f64 = parts.iter().sum();
    let l = dx.hypot(dy);
    (
        cross.abs() / l - f64::from(r),
        ((mx + ex) * dx + (my + ey) * dy) / l,
    )
}

/// From 10¹⁵ away to the end of the `f32` range, a ray never hits a circle
/// it passes by, and misses one it crosses only within a radius of
/// grazing, where the `f64` test of the circle's box from that far rounds
/// by as much (the tree prunes by that test, so the shape's must agree with
/// it). Checked against an oracle without rounding. From 10¹⁷ away, a ray
/// passing 8.8 units beside a circle of radius 0.6 hit it, from 10³⁶ one
/// passing 200 radii beside: the test from the far origin said the ray
/// entered the box, no point near the box saw it ahead, and the `f32`
/// tests ran from the origin itself; or a point taken far back before the
/// box was rounded into line with it.
#[test]
fn rays_from_the_ends_of_the_range_never_hit_what_they_pass() {
    use quadrat::{CollisionWorld, Filter, Layers};
    let mut rng = Rng::new(0x5EED_0015);
    let (mut hits, mut misses, mut grazed) = (0, 0, 0);
    for i in 0..20_000 {
        let scale = if i % 3 == 2 { 1e6 } else { 1.0 };
        let c = Vec2::new(
            rng.range(-100.0, 100.0) * scale,
            rng.range(-100.0, 100.0) * scale,
        );
        let r = rng.range(0.5, 1.5) * scale;
        let far = [1e15, 1e17, 1e18, 1e22, 1e30, 1e36, 3.3e38][rng.below(7) as usize];
        let theta = f64::from(rng.unit()) * core::f64::consts::TAU;
        let o = Vec2::new(
            (f64::from(c.x) + far * theta.cos()) as f32,
            (f64::from(c.y) + far * theta.sin()) as f32,
        );
        let aim = c + Vec2::new(rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)) * r;
        let d = Vec2::new(
            (f64::from(aim.x) - f64::from(o.x)) as f32,
            (f64::from(aim.y) - f64::from(o.y)) as f32,
        );
        if !o.is_finite() || !d.is_finite() || d == Vec2::new(0.0, 0.0) {
            continue;
        }
        let ray = Ray::new(o, d);
        let (gap, along) = circle_oracle(c, r, ray);
        let crosses = gap <= 0.0 && along > 0.0;
        let hit = circle(r).raycast(c, ray, f32::INFINITY);
        let ctx = format!("circle {r} at {c:?}, {ray:?}: {hit:?}, gap {gap}, along {along}");
        match hit {
            Some(hit) => {
                assert!(crosses, "{ctx}");
                hits += 1;
                let want = along - (f64::from(r).powi(2) - (gap + f64::from(r)).powi(2)).sqrt();
                let ulp = f64::from(hit.dist.next_up() - hit.dist);
                assert!(
                    (f64::from(hit.dist) - want).abs() <= 8.0 * ulp + 1e-3 * f64::from(r),
                    "{ctx}"
                );
            }
            None if crosses => {
                assert!(-gap < f64::from(r), "{ctx}");
                grazed += 1;
            }
            None => misses += 1,
        }
    }
    // Most rays aimed from that far with an `f32` direction pass far
    // beside the circle; of those that cross it, about a third graze it.
    assert!(
        hits > 150 && misses > 10_000 && grazed < hits,
        "{hits} {misses} {grazed}"
    );
    // The case first seen, through the collision world.
    let mut world = CollisionWorld::new(Aabb::new([-100.0, -100.0], [100.0, 100.0]));
    world.add(
        circle(0.621_015_67),
        [-42.611_706, -23.466_038],
        Filter::ALL,
        (),
    );
    let ray = Ray::new(
        [7.659_994_5e17, 6.428_412e17],
        [-7.659_994_5e17, -6.428_412e17],
    );
    assert_eq!(world.raycast(ray, f32::INFINITY, Layers::ALL), None);
}

/// A hit is never nearer than where the ray enters the shape's box, as
/// `Ray::intersect_aabb` gives it: the tree's ray casts rank a body no
/// nearer than its box's entry, so a shape's distance below it made the
/// world rank that body behind one it ties with. A point hit head-on from
/// 400 units away, with a circle touching it on the far side, was hit at
/// 567.9296 by both shapes' tests, and the point's box was entered at the
/// next `f32` up: the world's ray cast returned the circle, where the
/// point has the smaller key. Found by fuzzing `CollisionWorld::raycast`
/// against brute force.
#[test]
fn a_hit_is_never_nearer_than_its_box() {
    use quadrat::{CollisionWorld, Filter, Key, Layers};
    let dot = circle(0.0);
    let ball = circle(4.125);
    let ray = Ray::new([-401.5869, -401.5869], [12.078_431, 12.078_431]);
    let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    let bodies = [
        (
            world.add(dot, [0.0, 0.0], Filter::ALL, ()),
            dot,
            Vec2::new(0.0, 0.0),
        ),
        (
            world.add(ball, [2.979_053, 2.853_221_7], Filter::ALL, ()),
            ball,
            Vec2::new(2.979_053, 2.853_221_7),
        ),
    ];
    let mut hits: Vec<(Key, RayHit)> = Vec::new();
    for (k, shape, pos) in bodies {
        let hit = shape.raycast(pos, ray, f32::INFINITY).unwrap();
        let entry = ray.intersect_aabb(&shape.aabb(pos), f32::INFINITY).unwrap();
        assert!(hit.dist >= entry, "{shape:?}: {hit:?} before {entry}");
        hits.push((k, hit));
    }
    hits.sort_by(|a, b| a.1.dist.total_cmp(&b.1.dist).then(a.0.cmp(&b.0)));
    assert_eq!(
        world.raycast(ray, f32::INFINITY, Layers::ALL),
        Some(hits[0])
    );
    assert_eq!(world.raycast_all(ray, f32::INFINITY, Layers::ALL), hits);

    // Every kind of shape, from near and far, aimed at its centre, at a
    // corner of its box, or anywhere near it.
    let mut rng = Rng::new(0x5EED_0015);
    let mut checked = 0;
    for i in 0..40_000 {
        let shape = match i % 5 {
            0 => circle(0.0),
            1 => Shape::Point,
            _ => random_shape(&mut rng),
        };
        let pos = Vec2::new(random_coord(&mut rng), random_coord(&mut rng));
        let bounds = shape.aabb(pos);
        let far = [1.0, 10.0, 400.0, 1e4, 1e6][rng.below(5) as usize];
        let theta = f64::from(rng.unit()) * core::f64::consts::TAU;
        let o = Vec2::new(
            (f64::from(pos.x) + far * theta.cos()) as f32,
            (f64::from(pos.y) + far * theta.sin()) as f32,
        );
        let aim = match rng.below(3) {
            0 => pos,
            1 => [
                bounds.min,
                bounds.max,
                Vec2::new(bounds.min.x, bounds.max.y),
            ][rng.below(3) as usize],
            _ => pos + Vec2::new(random_signed(&mut rng), random_signed(&mut rng)),
        };
        let ray = Ray::new(o, aim - o);
        if ray.validate().is_err() {
            continue;
        }
        let Some(hit) = shape.raycast(pos, ray, f32::INFINITY) else {
            continue;
        };
        let entry = ray.intersect_aabb(&bounds, f32::INFINITY);
        assert!(
            entry.is_some_and(|t| hit.dist >= t),
            "{shape:?} at {pos:?}, {ray:?}: {hit:?}, box entered at {entry:?}"
        );
        checked += 1;
    }
    assert!(checked > 12_000, "{checked}");
}
