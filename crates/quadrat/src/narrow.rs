//! The narrow phase: exact intersection and contact between two positioned
//! [`Shape`]s, for every pair of kinds.
//!
//! Every shape is a *core* (a point, a segment or a box) grown by a radius:
//! a point is a point grown by 0, a circle a point grown by its radius, a
//! capsule a segment grown by its radius, a box a box grown by 0. Two shapes
//! then touch when the distance between their cores is at most the sum of
//! their radii, and that reduces the ten pairs of kinds to six pairs of
//! cores, handled by two methods:
//!
//! - When one core is a point, the closest point of the other core gives the
//!   distance directly; inside a box, the nearest face gives the penetration.
//! - Otherwise the separating-axis test runs on the axes `x`, `y` and the
//!   perpendicular of each segment. These include every edge normal of the
//!   Minkowski difference of the two cores (and for two parallel segments,
//!   whose difference is a segment, `x` or `y` separates them along their
//!   line). So when no axis separates the cores they overlap, and the
//!   smallest overlap is the exact penetration depth, along the exact
//!   minimum translation direction. When an axis separates them, the
//!   distance is the smallest distance from a vertex of one core to the
//!   other core: for disjoint convex polygons the closest pair always
//!   includes a vertex.
//!
//! The `x` and `y` projections use the same absolute coordinates as
//! [`Shape::aabb`], so two boxes touch exactly when their bounding boxes do.
//!
//! Arguments are put in a fixed order first (by kind, then position and
//! size), and the result is flipped back. Swapping the arguments therefore
//! negates the normal and changes nothing else, bit for bit, including
//! which way a tie is broken.

use crate::geom::{Aabb, Vec2};
use crate::shape::{Contact, Shape};

const X: Vec2 = Vec2::new(1.0, 0.0);
const Y: Vec2 = Vec2::new(0.0, 1.0);

/// `true` when the shape is valid and its position finite: the only input
/// the narrow phase computes with. The same test as [`Shape::validate`].
#[inline]
pub(crate) fn usable(shape: &Shape, pos: Vec2) -> bool {
    let size = |v: f32| v >= 0.0 && v.is_finite();
    pos.is_finite()
        && match *shape {
            Shape::Point => true,
            Shape::Circle { radius } => size(radius),
            Shape::Aabb { half_extents: h } => size(h.x) && size(h.y),
            Shape::Capsule {
                half_segment: h,
                radius,
            } => h.is_finite() && size(radius),
        }
}

/// See [`Shape::intersects`].
#[inline]
pub(crate) fn intersects(a: &Shape, pa: Vec2, b: &Shape, pb: Vec2) -> bool {
    contact(a, pa, b, pb).is_some()
}

/// See [`Shape::contact`].
pub(crate) fn contact(a: &Shape, pa: Vec2, b: &Shape, pb: Vec2) -> Option<Contact> {
    if !usable(a, pa) || !usable(b, pb) {
        return None;
    }
    if order_key(b, pb).precedes(&order_key(a, pa)) {
        ordered_contact(b, pb, a, pa).map(|c| Contact {
            normal: -c.normal,
            ..c
        })
    } else {
        ordered_contact(a, pa, b, pb)
    }
}

/// The contact of two usable shapes, `a` not after `b` in the fixed order.
#[inline(always)]
fn ordered_contact(a: &Shape, pa: Vec2, b: &Shape, pb: Vec2) -> Option<Contact> {
    let (core_a, ra) = core(a, pa);
    let (core_b, rb) = core(b, pb);
    let reach = ra + rb;
    let c = core_contact(&core_a, &core_b, reach)?;
    let depth = reach - c.sep;
    if depth < 0.0 {
        return None;
    }
    let point = if c.sep <= 0.0 {
        c.qa
    } else {
        // Along the line between the closest points, `a` covers `[0, ra]`
        // and `b` covers `[sep - rb, sep]`: take the middle of the overlap.
        let lo = (c.sep - rb).max(0.0);
        let hi = ra.min(c.sep);
        c.qa + c.normal * (lo * 0.5 + hi * 0.5)
    };
    let contact = Contact {
        normal: c.normal,
        depth,
        point,
    };
    (depth.is_finite() && contact.normal.is_finite() && point.is_finite()).then_some(contact)
}

// ---------------------------------------------------------------------------
// Cores

/// The part of a shape that its radius grows: a point, a segment or a box.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Core {
    Point(Vec2),
    Segment(Segment),
    Box(Aabb),
}

/// A segment of non-zero length from `c - h` to `c + h`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) c: Vec2,
    /// Half of the segment, pointing right (or up when vertical).
    pub(crate) h: Vec2,
    /// `h` as a unit vector.
    pub(crate) dir: Vec2,
    /// `|h|`.
    pub(crate) len: f32,
    /// A unit normal, pointing right (or up when horizontal).
    pub(crate) perp: Vec2,
}

impl Segment {
    #[inline]
    fn new(c: Vec2, h: Vec2) -> Segment {
        let h = canonical(h);
        let dir = unit(h);
        Segment {
            c,
            h,
            dir,
            len: length(h),
            perp: canonical(Vec2::new(-dir.y, dir.x)),
        }
    }

    /// The point of the segment closest to `p`; an exact endpoint when clamped.
    fn closest_point(&self, p: Vec2) -> Vec2 {
        let t = self.dir.dot(p - self.c);
        if t >= self.len {
            self.c + self.h
        } else if t <= -self.len {
            self.c - self.h
        } else {
            self.c + self.dir * t
        }
    }

    /// The point at signed distance `t` from the centre, clamped to the ends.
    fn at(&self, t: f32) -> Vec2 {
        self.closest_point(self.c + self.dir * t)
    }
}

/// The core and radius of a shape at `pos`. A capsule whose segment has zero
/// length has a point core.
#[inline(always)]
pub(crate) fn core(shape: &Shape, pos: Vec2) -> (Core, f32) {
    match *shape {
        Shape::Point => (Core::Point(pos), 0.0),
        Shape::Circle { radius } => (Core::Point(pos), radius),
        Shape::Capsule {
            half_segment,
            radius,
        } => {
            if half_segment.x == 0.0 && half_segment.y == 0.0 {
                (Core::Point(pos), radius)
            } else {
                (Core::Segment(Segment::new(pos, half_segment)), radius)
            }
        }
        Shape::Aabb { half_extents } => (Core::Box(Aabb::from_center(pos, half_extents)), 0.0),
    }
}

impl Core {
    /// The corners: 1 for a point, 2 for a segment, 4 for a box.
    fn vertices(&self) -> ([Vec2; 4], usize) {
        match *self {
            Core::Point(p) => ([p; 4], 1),
            Core::Segment(s) => ([s.c - s.h, s.c + s.h, s.c, s.c], 2),
            Core::Box(b) => (
                [
                    b.min,
                    Vec2::new(b.max.x, b.min.y),
                    b.max,
                    Vec2::new(b.min.x, b.max.y),
                ],
                4,
            ),
        }
    }

    /// The projection on the `x` axis, in absolute coordinates.
    fn interval_x(&self) -> (f32, f32) {
        match *self {
            Core::Point(p) => (p.x, p.x),
            Core::Segment(s) => (s.c.x - s.h.x.abs(), s.c.x + s.h.x.abs()),
            Core::Box(b) => (b.min.x, b.max.x),
        }
    }

    /// The projection on the `y` axis, in absolute coordinates.
    fn interval_y(&self) -> (f32, f32) {
        match *self {
            Core::Point(p) => (p.y, p.y),
            Core::Segment(s) => (s.c.y - s.h.y.abs(), s.c.y + s.h.y.abs()),
            Core::Box(b) => (b.min.y, b.max.y),
        }
    }

    /// The projection on the unit axis `u`.
    fn interval(&self, u: Vec2) -> (f32, f32) {
        let (m, e) = match *self {
            Core::Point(p) => (u.dot(p), 0.0),
            Core::Segment(s) => (u.dot(s.c), u.dot(s.h).abs()),
            Core::Box(b) => {
                let half = (b.max - b.min) * 0.5;
                (u.dot(b.center()), half.x * u.x.abs() + half.y * u.y.abs())
            }
        };
        (m - e, m + e)
    }
}

/// How two cores relate: `sep > 0` is the distance between them, with `qa`
/// and `qb` the closest points; `sep <= 0` is minus the penetration depth,
/// with `qa == qb` a point of both. `normal` is a unit vector from `a`
/// towards `b`: moving `b` by `normal * -sep` makes the cores touch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoreContact {
    pub(crate) sep: f32,
    pub(crate) normal: Vec2,
    pub(crate) qa: Vec2,
    pub(crate) qb: Vec2,
}

impl CoreContact {
    fn flip(self) -> CoreContact {
        CoreContact {
            sep: self.sep,
            normal: -self.normal,
            qa: self.qb,
            qb: self.qa,
        }
    }
}

/// The relation of two cores, or `None` when an axis already shows them
/// farther apart than `reach`.
#[inline(always)]
fn core_contact(a: &Core, b: &Core, reach: f32) -> Option<CoreContact> {
    match (a, b) {
        (Core::Point(p), _) => Some(point_contact(*p, b)),
        (_, Core::Point(p)) => Some(point_contact(*p, a).flip()),
        _ => polygon_contact(a, b, reach),
    }
}

/// The relation of the point `p` (as `a`) and the core `b`.
///
/// The normal comes from exact directions where it can: perpendicular to a
/// segment when the closest point is inside it, along an axis beside a box
/// face, so that it stays accurate when the distance is tiny.
#[inline(always)]
pub(crate) fn point_contact(p: Vec2, b: &Core) -> CoreContact {
    let apart = |q: Vec2| {
        let d = q - p;
        (d.x != 0.0 || d.y != 0.0).then(|| CoreContact {
            sep: length(d),
            normal: unit(d),
            qa: p,
            qb: q,
        })
    };
    let (pen, normal) = match b {
        Core::Point(c) => match apart(*c) {
            Some(found) => return found,
            None => (0.0, X),
        },
        Core::Segment(s) => {
            let t = s.dir.dot(p - s.c);
            if t.abs() < s.len {
                let off = s.perp.dot(p - s.c);
                if off != 0.0 {
                    return CoreContact {
                        sep: off.abs(),
                        normal: if off > 0.0 { -s.perp } else { s.perp },
                        qa: p,
                        qb: s.c + s.dir * t,
                    };
                }
            } else if let Some(found) = apart(s.closest_point(p)) {
                return found;
            }
            (0.0, s.perp)
        }
        Core::Box(b) => {
            if let Some(found) = apart(b.closest_point(p)) {
                return found;
            }
            // Moving the box along `n` by `pen` puts the point on a face.
            let mut best = (p.x - b.min.x, X);
            for (pen, n) in [(b.max.x - p.x, -X), (p.y - b.min.y, Y), (b.max.y - p.y, -Y)] {
                if pen < best.0 {
                    best = (pen, n);
                }
            }
            best
        }
    };
    CoreContact {
        sep: -pen,
        normal,
        qa: p,
        qb: p,
    }
}

/// The relation of two cores that are segments or boxes.
fn polygon_contact(a: &Core, b: &Core, reach: f32) -> Option<CoreContact> {
    // The smallest signed overlap over all axes, and the direction to move
    // `b` along to undo it. Negative means separated along that axis.
    let mut best = (f32::INFINITY, X);
    let mut consider = |(lo_a, hi_a): (f32, f32), (lo_b, hi_b): (f32, f32), u: Vec2| {
        let forward = hi_a - lo_b;
        let back = hi_b - lo_a;
        if forward < best.0 {
            best = (forward, u);
        }
        if back < best.0 {
            best = (back, -u);
        }
    };
    consider(a.interval_x(), b.interval_x(), X);
    consider(a.interval_y(), b.interval_y(), Y);
    for core in [a, b] {
        if let Core::Segment(s) = core {
            consider(a.interval(s.perp), b.interval(s.perp), s.perp);
        }
    }
    let (overlap, normal) = best;
    if overlap >= 0.0 {
        let q = overlap_point(a, b);
        return Some(CoreContact {
            sep: -overlap,
            normal,
            qa: q,
            qb: q,
        });
    }
    if -overlap > reach {
        return None;
    }
    // Separated: the closest pair includes a vertex of one of the cores.
    let mut closest: Option<CoreContact> = None;
    let mut keep = |found: CoreContact| {
        if closest.is_none_or(|c| found.sep < c.sep) {
            closest = Some(found);
        }
    };
    let (va, na) = a.vertices();
    for &v in &va[..na] {
        keep(point_contact(v, b));
    }
    let (vb, nb) = b.vertices();
    for &v in &vb[..nb] {
        keep(point_contact(v, a).flip());
    }
    let found = closest?;
    if found.sep > 0.0 {
        Some(found)
    } else {
        // A vertex on the other core is rounding at a touch: keep the
        // separating axis.
        Some(CoreContact {
            sep: 0.0,
            normal,
            qa: found.qa,
            qb: found.qa,
        })
    }
}

/// A point in both of two overlapping cores that are segments or boxes:
/// the middle of their intersection, or near it when rounding hides it.
fn overlap_point(a: &Core, b: &Core) -> Vec2 {
    match (a, b) {
        (Core::Box(a), Core::Box(b)) => {
            let lo = a.min.max(b.min);
            let hi = a.max.min(b.max);
            mid(lo, hi)
        }
        (Core::Segment(s), Core::Box(b)) | (Core::Box(b), Core::Segment(s)) => {
            segment_box_point(s, b)
        }
        (Core::Segment(a), Core::Segment(b)) => segment_segment_point(a, b),
        (Core::Point(p), _) | (_, Core::Point(p)) => *p,
    }
}

/// The middle of the part of `s` inside `b` (Liang–Barsky clipping).
fn segment_box_point(s: &Segment, b: &Aabb) -> Vec2 {
    let (mut lo, mut hi) = (-s.len, s.len);
    for (c, d, min, max) in [
        (s.c.x, s.dir.x, b.min.x, b.max.x),
        (s.c.y, s.dir.y, b.min.y, b.max.y),
    ] {
        if d != 0.0 {
            let (t0, t1) = ((min - c) / d, (max - c) / d);
            lo = lo.max(t0.min(t1));
            hi = hi.min(t0.max(t1));
        }
    }
    if lo <= hi {
        b.closest_point(s.at(lo * 0.5 + hi * 0.5))
    } else {
        b.closest_point(s.closest_point(b.center()))
    }
}

/// Where two overlapping segments cross, or the middle of their common part
/// when they are (nearly) collinear.
fn segment_segment_point(a: &Segment, b: &Segment) -> Vec2 {
    let d = b.c - a.c;
    // In `f64`, where the products of these coordinates cannot underflow:
    // in `f32`, a direction with a subnormal coordinate gave a subnormal
    // denominator over a numerator rounded to 0, and a "crossing" at the
    // segments' centres, which can lie far from both.
    let wide = |v: Vec2| (f64::from(v.x), f64::from(v.y));
    let cross = |(ax, ay): (f64, f64), (bx, by): (f64, f64)| ax * by - ay * bx;
    let (ad, bd, dd) = (wide(a.dir), wide(b.dir), wide(d));
    let den = cross(ad, bd);
    if den != 0.0 {
        let s = (cross(dd, bd) / den) as f32;
        let t = (cross(dd, ad) / den) as f32;
        let slack = 1.0 + 1e-3;
        if s.abs() <= a.len * slack && t.abs() <= b.len * slack {
            return mid(a.at(s), b.at(t));
        }
    }
    // Collinear: the middle of the overlap of the two projections on `a`.
    let m = a.dir.dot(d);
    let e = a.dir.dot(b.h).abs();
    let lo = (m - e).max(-a.len);
    let hi = (m + e).min(a.len);
    let on_a = a.at(lo * 0.5 + hi * 0.5);
    mid(on_a, b.closest_point(on_a))
}

// ---------------------------------------------------------------------------
// The fixed order of arguments

/// A total order on positioned shapes: kind, then position, then size.
struct OrderKey(u8, [f32; 5]);

#[inline(always)]
fn order_key(shape: &Shape, pos: Vec2) -> OrderKey {
    match *shape {
        Shape::Point => OrderKey(0, [pos.x, pos.y, 0.0, 0.0, 0.0]),
        Shape::Circle { radius } => OrderKey(1, [pos.x, pos.y, radius, 0.0, 0.0]),
        Shape::Capsule {
            half_segment,
            radius,
        } => {
            let h = canonical(half_segment);
            OrderKey(2, [pos.x, pos.y, radius, h.x, h.y])
        }
        Shape::Aabb { half_extents: h } => OrderKey(3, [pos.x, pos.y, h.x, h.y, 0.0]),
    }
}

impl OrderKey {
    /// `true` when `self` comes strictly before `other`.
    fn precedes(&self, other: &OrderKey) -> bool {
        let by_value = || {
            self.1
                .iter()
                .zip(&other.1)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(core::cmp::Ordering::Equal)
        };
        self.0.cmp(&other.0).then_with(by_value).is_lt()
    }
}

// ---------------------------------------------------------------------------
// Small vector helpers

/// `v` with the sign that points right, or up when vertical.
#[inline]
pub(crate) fn canonical(v: Vec2) -> Vec2 {
    if v.x < 0.0 || (v.x == 0.0 && v.y < 0.0) {
        -v
    } else {
        v
    }
}

/// `v` scaled to unit length; `v` must be finite and not zero.
#[inline]
pub(crate) fn unit(v: Vec2) -> Vec2 {
    let sq = v.length_squared();
    if sq.is_normal() && sq < f32::MAX {
        div(v, sq.sqrt())
    } else {
        // Scale by the larger coordinate first, so that the length is near
        // 1: where the squares overflow, and where they underflow, since
        // the length of a vector of subnormal coordinates keeps few bits
        // (that of (1e-45, 1e-45) rounds to 1e-45, and dividing by it gives
        // (1, 1)).
        let s = v.x.abs().max(v.y.abs());
        let w = div(v, s);
        div(w, w.length_squared().sqrt())
    }
}

/// `|v|`: a square root where the squares neither overflow nor lose
/// precision, else the slower `hypot`.
#[inline]
pub(crate) fn length(v: Vec2) -> f32 {
    let sq = v.length_squared();
    if sq.is_normal() && sq < f32::MAX {
        sq.sqrt()
    } else {
        v.length()
    }
}

#[inline]
pub(crate) fn div(v: Vec2, s: f32) -> Vec2 {
    Vec2::new(v.x / s, v.y / s)
}

#[inline]
pub(crate) fn cross(a: Vec2, b: Vec2) -> f32 {
    a.x * b.y - a.y * b.x
}

/// The midpoint, without overflow.
#[inline]
fn mid(a: Vec2, b: Vec2) -> Vec2 {
    a * 0.5 + b * 0.5
}
